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

}  // namespace lighten
