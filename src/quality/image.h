#pragma once

#include <cstdint>
#include <vector>

namespace lighten {

// A decoded 8-bit image in sRGB: 1 channel (gray) or 3 (RGB), samples interleaved, rows packed.
struct ImageRgb8 {
  uint32_t width = 0, height = 0;
  uint32_t channels = 3;
  std::vector<uint8_t> samples;
};

// CMYK samples (4 a pixel) rendered as RGB over the same buffer, which shrinks to 3 a pixel:
// each ink darkens its own channel, times what the black lets through. No ICC profile: the
// metric compares two renderings made alike, as PIL makes them. `inverted`: samples hold
// 255 - ink, as Adobe writes them (libjpeg saw an Adobe marker).
void rgb_from_cmyk(std::vector<uint8_t>& samples, bool inverted);

}  // namespace lighten
