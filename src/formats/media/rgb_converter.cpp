#include "formats/media/rgb_converter.h"

#include <algorithm>
#include <cstring>

#include "core/errors.h"
#include "formats/media/av_enums.h"

namespace lighten::media {

// A file whose range or matrix tags changed shows other colours in those readers, and must score
// so here: the conversion follows the frame's tags, not a fixed choice.
ImageRgb8 RgbConverter::convert(const AVFrame* frame) {
  if (frame->width <= 0 || frame->height <= 0)
    throw FormatError(Reason::kCorrupt, 0, "a decoded frame has no size");
  scale_.reset(sws_getCachedContext(scale_.release(), frame->width, frame->height,
                                    AVPixelFormat(frame->format), frame->width, frame->height,
                                    AV_PIX_FMT_RGB24, SWS_BICUBIC, nullptr, nullptr, nullptr));
  if (!scale_)
    throw FormatError(Reason::kUnsupportedVariant, 0,
                      "libswscale cannot convert the frames to RGB");
  use_frame_colours(frame);
  // libswscale's vector paths convert whole groups of 8 pixels: where the destination's stride
  // has no room for the last group they leave the row's last pixels unwritten (322 pixels wide:
  // 2 columns), and they write past the last row (seen with yuvj422p at 640x480). Readers
  // convert into frames whose rows are padded; so does this, into a scratch buffer, then packs
  // the rows.
  const size_t width = size_t(frame->width), height = size_t(frame->height);
  const size_t row = width * 3;
  const size_t stride = ((width + 31) & ~size_t(31)) * 3;
  scratch_.resize(stride * (height + 1) + kScalePadding);
  uint8_t* planes[4] = {scratch_.data(), nullptr, nullptr, nullptr};
  int strides[4] = {int(stride), 0, 0, 0};
  sws_scale(scale_.get(), frame->data, frame->linesize, 0, frame->height, planes, strides);
  ImageRgb8 image;
  image.width = uint32_t(width);
  image.height = uint32_t(height);
  image.samples.resize(row * height);
  for (size_t y = 0; y < height; ++y)
    std::memcpy(image.samples.data() + y * row, scratch_.data() + y * stride, row);
  return image;
}

// Full or limited range and the YUV matrix as the frame is tagged (untagged: BT.601, and the
// range the pixel format implies), like ffmpeg's scale filter; RGB out is full range.
void RgbConverter::use_frame_colours(const AVFrame* frame) {
  int* table = nullptr;
  int* unused = nullptr;
  int src_range = 0, dst_range = 0, brightness = 0, contrast = 0, saturation = 0;
  if (sws_getColorspaceDetails(scale_.get(), &table, &src_range, &unused, &dst_range, &brightness,
                               &contrast, &saturation) < 0)
    return;  // RGB or other non-YUV input: nothing to choose
  const int current_range = src_range;
  const AVColorSpace tagged = named_or(frame->colorspace, AVCOL_SPC_NB, AVCOL_SPC_UNSPECIFIED);
  const int space = tagged == AVCOL_SPC_UNSPECIFIED ? SWS_CS_DEFAULT : int(tagged);
  const AVColorRange range = named_or(frame->color_range, AVCOL_RANGE_NB, AVCOL_RANGE_UNSPECIFIED);
  if (range == AVCOL_RANGE_JPEG) src_range = 1;
  if (range == AVCOL_RANGE_MPEG) src_range = 0;
  const int* wanted = sws_getCoefficients(space);
  // Setting the details rebuilds libswscale's tables: only when the context holds others
  // (it keeps a copy of the four coefficients).
  if (table && std::equal(wanted, wanted + 4, table) && src_range == current_range) return;
  sws_setColorspaceDetails(scale_.get(), wanted, src_range, sws_getCoefficients(SWS_CS_DEFAULT),
                           dst_range, brightness, contrast, saturation);
}

}  // namespace lighten::media
