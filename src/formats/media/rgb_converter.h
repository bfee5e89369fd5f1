// Decoded video frames to packed 8-bit RGB as ffmpeg-based readers (OpenCV, decord, torchvision)
// convert them: libswscale with bicubic chroma scaling, the frame's own range and colour matrix.
#pragma once

#include <memory>

#include "core/bytes.h"

#include "formats/media/av_io.h"
#include "quality/image.h"

namespace lighten::media {

class RgbConverter {
 public:
  // Throws FormatError when the frame has no size or libswscale cannot convert its format.
  ImageRgb8 convert(const AVFrame* frame);

 private:
  void use_frame_colours(const AVFrame* frame);

  static constexpr size_t kScalePadding = 64;
  std::unique_ptr<SwsContext, ScaleDeleter> scale_;
  Bytes scratch_;  // libswscale's output, rows padded
};

}  // namespace lighten::media
