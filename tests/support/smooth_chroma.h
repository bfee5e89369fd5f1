// Test pixels with sharp luma and smooth chroma, as most photos have (the JPEG makers' default
// patterns have sharp chroma edges): where 4:2:0 serves a quality floor better than 4:4:4.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lighten::testing {

// RGB samples of slow colour gradients under fine detail that is the same in every channel:
// sharp luma, smooth chroma, as in most photos.
inline std::vector<uint8_t> smooth_chroma_pixels(int width, int height) {
  std::vector<uint8_t> pixels(size_t(width) * size_t(height) * 3);
  uint32_t seed = 12345;
  for (size_t p = 0; p * 3 < pixels.size(); ++p) {
    seed = seed * 1103515245u + 12345u;
    const int x = int(p % size_t(width)), y = int(p / size_t(width));
    const int detail = int(seed >> 28) * 3 + ((x / 2 + y / 3) % 4) * 6 - 30;
    for (int c = 0; c < 3; ++c) {
      const int base = 70 + (c == 0 ? x : c == 1 ? y : (x + y) / 2) * 110 / (width + height);
      pixels[p * 3 + size_t(c)] = uint8_t(std::clamp(base + detail, 0, 255));
    }
  }
  return pixels;
}

}  // namespace lighten::testing
