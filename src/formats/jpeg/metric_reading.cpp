#include "formats/jpeg/metric_reading.h"

#include <fmt/format.h>

#include <utility>

#include "formats/jpeg/metadata.h"

namespace lighten::jpeg {

std::optional<std::string> profile_unlike_decode(const Layout& layout, int components,
                                                 const Policy& policy) {
  if (policy.jpeg_shown_through) return std::nullopt;
  if (components != 1 && components != 3 && components != 4) return std::nullopt;
  const std::optional<std::string> space = icc_data_space(layout);
  const char* decoded = components == 1 ? "GRAY" : components == 3 ? "RGB " : "CMYK";
  if (!space || *space == decoded) return std::nullopt;
  return fmt::format("lossless only (its ICC profile declares {} samples; the metric reads {})",
                     quoted_icc_space(*space),
                     components == 1   ? "gray"
                     : components == 3 ? "RGB"
                                       : "CMYK");
}

std::optional<ProfileColour> metric_colour(const Layout& layout, int components,
                                           const Policy& policy) {
  if (components != 1 && components != 3 && components != 4) return std::nullopt;
  if (policy.jpeg_shown_through)
    return ProfileColour::from_icc(*policy.jpeg_shown_through, uint32_t(components));
  const std::optional<Bytes> icc = icc_profile(layout);
  return icc ? ProfileColour::from_icc(*icc, uint32_t(components)) : std::nullopt;
}

std::optional<ImageRgb8> to_metric_image(PixelImage pixels, const ProfileColour* colour) {
  if (pixels.components != 1 && pixels.components != 3 && pixels.components != 4)
    return std::nullopt;
  const bool rendered = pixels.components == 4 && !(colour && colour->channels() == 4);
  ImageRgb8 img;
  img.width = pixels.width;
  img.height = pixels.height;
  img.channels = rendered ? 3 : pixels.components;
  img.samples = std::move(pixels.samples);
  if (rendered) rgb_from_cmyk(img.samples);
  return img;
}

}  // namespace lighten::jpeg
