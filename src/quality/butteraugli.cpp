#include "quality/butteraugli.h"

#include <stdexcept>
#include <vector>

#include "quality/colour_profile.h"
#include "quality/xyb.h"

#ifdef LIGHTEN_HAVE_BUTTERAUGLI
#include <jxl/butteraugli.h>
#endif

namespace lighten {
namespace {

#ifdef LIGHTEN_HAVE_BUTTERAUGLI
// libjxl takes RGB here; gray is replicated.
SampleBuffer as_rgb(const ImageRgb8& image) {
  if (image.channels == 3) return image.samples;
  SampleBuffer rgb(image.samples.size() * 3);
  for (size_t i = 0; i < image.samples.size(); ++i)
    rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = image.samples[i];
  return rgb;
}

// Interleaved linear-light sRGB, read through `colour` (null: the samples are sRGB), which libjxl
// takes as floats: unclipped, so that colours outside sRGB keep their differences.
std::vector<float> as_linear_rgb(const ImageRgb8& image, const ProfileColour* colour) {
  const size_t width = image.width, pixels = width * image.height;
  std::vector<float> out(3 * pixels);
  if (!colour) {
    const float* table = srgb_to_linear_table();
    for (size_t i = 0; i < pixels; ++i)
      for (size_t k = 0; k < 3; ++k)
        out[3 * i + k] = table[image.samples[i * image.channels + (image.channels == 1 ? 0 : k)]];
    return out;
  }
  std::vector<float> r(width), g(width), b(width);
  for (size_t y = 0; y < image.height; ++y) {
    colour->to_linear(image.samples.data() + y * width * image.channels, width, r.data(), g.data(),
                      b.data());
    for (size_t x = 0; x < width; ++x) {
      float* px = &out[3 * (y * width + x)];
      px[0] = r[x], px[1] = g[x], px[2] = b[x];
    }
  }
  return out;
}
#endif

}  // namespace

std::optional<double> butteraugli_distance(const ImageRgb8& reference, const ImageRgb8& distorted,
                                           const ProfileColour* reference_colour,
                                           const ProfileColour* distorted_colour) {
  if (reference.width != distorted.width || reference.height != distorted.height)
    throw std::invalid_argument("butteraugli: the images differ in size");
  for (const auto& [image, colour] :
       {std::pair{&reference, reference_colour}, std::pair{&distorted, distorted_colour}}) {
    if (colour ? colour->channels() != image->channels
               : image->channels != 1 && image->channels != 3)
      throw std::invalid_argument("butteraugli: malformed image");
    if (image->samples.size() != size_t(image->width) * image->height * image->channels)
      throw std::invalid_argument("butteraugli: malformed image");
  }
#ifdef LIGHTEN_HAVE_BUTTERAUGLI
  JxlButteraugliApi* api = JxlButteraugliApiCreate(nullptr);
  if (!api) return std::nullopt;
  JxlButteraugliResult* result = nullptr;
  if (!reference_colour && !distorted_colour) {
    const SampleBuffer a = as_rgb(reference), b = as_rgb(distorted);
    const JxlPixelFormat format{3, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    result = JxlButteraugliCompute(api, reference.width, reference.height, &format, a.data(),
                                   a.size(), &format, b.data(), b.size());
  } else {
    const std::vector<float> a = as_linear_rgb(reference, reference_colour),
                             b = as_linear_rgb(distorted, distorted_colour);
    const JxlPixelFormat format{3, JXL_TYPE_FLOAT, JXL_NATIVE_ENDIAN, 0};
    result = JxlButteraugliCompute(api, reference.width, reference.height, &format, a.data(),
                                   a.size() * sizeof(float), &format, b.data(),
                                   b.size() * sizeof(float));
  }
  std::optional<double> distance;
  if (result) distance = JxlButteraugliResultGetMaxDistance(result);
  if (result) JxlButteraugliResultDestroy(result);
  JxlButteraugliApiDestroy(api);
  return distance;
#else
  return std::nullopt;
#endif
}

}  // namespace lighten
