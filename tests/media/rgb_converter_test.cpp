// Frames converted to RGB as readers convert them: libswscale into frames whose rows are padded.
// Widths that are not a multiple of 8 once left libswscale's vector paths without room for the
// last group of pixels, whose columns then stayed unwritten.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "formats/media/rgb_converter.h"

namespace lighten::media {
namespace {

using FramePtr = std::unique_ptr<AVFrame, FrameDeleter>;

FramePtr frame_of(AVPixelFormat format, int width, int height) {
  FramePtr frame(av_frame_alloc());
  frame->format = format;
  frame->width = width;
  frame->height = height;
  EXPECT_GE(av_frame_get_buffer(frame.get(), 0), 0);
  return frame;
}

// A 4:2:0 frame whose every column differs from its neighbours, the last ones included.
FramePtr patterned_yuv420(int width, int height) {
  FramePtr frame = frame_of(AV_PIX_FMT_YUV420P, width, height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      frame->data[0][y * frame->linesize[0] + x] = uint8_t(16 + (x * 7 + y * 3) % 220);
  for (int y = 0; y < (height + 1) / 2; ++y)
    for (int x = 0; x < (width + 1) / 2; ++x) {
      frame->data[1][y * frame->linesize[1] + x] = uint8_t(16 + (x * 5) % 224);
      frame->data[2][y * frame->linesize[2] + x] = uint8_t(240 - (x * 3 + y) % 224);
    }
  return frame;
}

// What a reader gets: libswscale's defaults (BT.601, limited range in, bicubic) into an RGB frame
// allocated the way libavutil allocates every frame.
std::string as_readers_convert(const AVFrame* yuv) {
  FramePtr rgb = frame_of(AV_PIX_FMT_RGB24, yuv->width, yuv->height);
  std::unique_ptr<SwsContext, ScaleDeleter> scale(
      sws_getContext(yuv->width, yuv->height, AVPixelFormat(yuv->format), yuv->width, yuv->height,
                     AV_PIX_FMT_RGB24, SWS_BICUBIC, nullptr, nullptr, nullptr));
  sws_scale(scale.get(), yuv->data, yuv->linesize, 0, yuv->height, rgb->data, rgb->linesize);
  std::string packed;
  for (int y = 0; y < yuv->height; ++y)
    packed.append(reinterpret_cast<const char*>(rgb->data[0] + y * rgb->linesize[0]),
                  size_t(yuv->width) * 3);
  return packed;
}

TEST(RgbConverter, EveryColumnIsConvertedAsReadersConvertIt) {
  RgbConverter converter;
  for (int width : {320, 322, 324, 327, 17, 2}) {
    SCOPED_TRACE("width " + std::to_string(width));
    const FramePtr yuv = patterned_yuv420(width, 24);
    const ImageRgb8 image = converter.convert(yuv.get());
    ASSERT_EQ(image.width, uint32_t(width));
    ASSERT_EQ(image.height, 24u);
    const std::string want = as_readers_convert(yuv.get());
    ASSERT_EQ(image.samples.size(), want.size());
    EXPECT_TRUE(std::equal(want.begin(), want.end(), image.samples.begin(),
                           [](char a, uint8_t b) { return uint8_t(a) == b; }));
    // The last column is not left black.
    const uint8_t* last = image.samples.data() + (size_t(width) - 1) * 3;
    EXPECT_GT(int(last[0]) + last[1] + last[2], 0);
  }
}

}  // namespace
}  // namespace lighten::media
