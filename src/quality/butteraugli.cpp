#include "quality/butteraugli.h"

#include <stdexcept>
#include <vector>

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
#endif

}  // namespace

std::optional<double> butteraugli_distance(const ImageRgb8& reference, const ImageRgb8& distorted) {
  if (reference.width != distorted.width || reference.height != distorted.height)
    throw std::invalid_argument("butteraugli: the images differ in size");
#ifdef LIGHTEN_HAVE_BUTTERAUGLI
  const SampleBuffer a = as_rgb(reference), b = as_rgb(distorted);
  if (a.size() != size_t(reference.width) * reference.height * 3 || a.size() != b.size())
    throw std::invalid_argument("butteraugli: malformed image");
  JxlButteraugliApi* api = JxlButteraugliApiCreate(nullptr);
  if (!api) return std::nullopt;
  const JxlPixelFormat format{3, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
  JxlButteraugliResult* result =
      JxlButteraugliCompute(api, reference.width, reference.height, &format, a.data(), a.size(),
                            &format, b.data(), b.size());
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
