#include "quality/floor_score.h"

#include <algorithm>
#include <cstring>

namespace lighten {
namespace {

// Position in an image of `size` of position `p` in its mirrored extension.
uint32_t reflected(uint32_t p, uint32_t size) {
  const uint32_t q = p % (2 * size);
  return q < size ? q : 2 * size - 1 - q;
}

}  // namespace

ImageRgb8 mirror_to_side(const ImageRgb8& image, uint32_t min_side) {
  if (image.width == 0 || image.height == 0 ||
      (image.width >= min_side && image.height >= min_side))
    return image;
  ImageRgb8 out;
  out.channels = image.channels;
  out.width = std::max(image.width, min_side);
  out.height = std::max(image.height, min_side);
  const size_t c = image.channels;
  out.samples.resize(size_t(out.width) * out.height * c);
  for (uint32_t y = 0; y < out.height; ++y) {
    const uint8_t* src =
        image.samples.data() + size_t(reflected(y, image.height)) * image.width * c;
    uint8_t* dst = out.samples.data() + size_t(y) * out.width * c;
    for (uint32_t x = 0; x < out.width; x += image.width) {
      // Copies alternate: even ones as they are, odd ones reversed.
      const uint32_t n = std::min(image.width, out.width - x);
      if ((x / image.width) % 2 == 0) {
        std::memcpy(dst + size_t(x) * c, src, size_t(n) * c);
      } else {
        for (uint32_t i = 0; i < n; ++i)
          std::memcpy(dst + size_t(x + i) * c, src + size_t(image.width - 1 - i) * c, c);
      }
    }
  }
  return out;
}

Ssimulacra2Result floor_score(const ImageRgb8& reference, const ImageRgb8& distorted,
                              const Ssimulacra2Options& options) {
  Ssimulacra2Result r = ssimulacra2(reference, distorted, options);
  if (distorted.width >= kFullScaleSide && distorted.height >= kFullScaleSide) return r;
  const Ssimulacra2Result m = ssimulacra2(mirror_to_side(reference, kFullScaleSide),
                                          mirror_to_side(distorted, kFullScaleSide), options);
  r.score = std::min(r.score, m.score);
  if (m.worst_tile_score < r.worst_tile_score) {
    r.worst_tile_score = m.worst_tile_score;
    r.worst_tile_x = reflected(m.worst_tile_x, distorted.width);
    r.worst_tile_y = reflected(m.worst_tile_y, distorted.height);
  }
  return r;
}

}  // namespace lighten
