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

// Columns [x, x + width) and rows [y, y + height) of `image`.
ImageRgb8 crop(const ImageRgb8& image, uint32_t x, uint32_t y, uint32_t width, uint32_t height) {
  if (x == 0 && y == 0 && width == image.width && height == image.height) return image;
  ImageRgb8 out;
  out.width = width;
  out.height = height;
  out.channels = image.channels;
  const size_t c = image.channels;
  out.samples.resize(size_t(width) * height * c);
  for (uint32_t row = 0; row < height; ++row)
    std::memcpy(out.samples.data() + size_t(row) * width * c,
                image.samples.data() + ((size_t(y) + row) * image.width + x) * c,
                size_t(width) * c);
  return out;
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

bool below_full_scale(const ImageRgb8& image) {
  return image.width < kFullScaleSide || image.height < kFullScaleSide;
}

Ssimulacra2Result floor_score(const ImageRgb8& reference, const ImageRgb8& distorted,
                              const Ssimulacra2Options& options) {
  return floor_score(ssimulacra2(reference, distorted, options), reference, distorted, options);
}

Ssimulacra2Result floor_score(Ssimulacra2Result r, const ImageRgb8& reference,
                              const ImageRgb8& distorted, const Ssimulacra2Options& options) {
  if (!below_full_scale(distorted)) return r;
  // Pieces of (nearly) equal length along the longer side.
  const bool across = distorted.width >= distorted.height;
  const uint32_t length = across ? distorted.width : distorted.height;
  const uint32_t pieces = (length + kMirrorPiece - 1) / kMirrorPiece;
  for (uint32_t i = 0; i < pieces; ++i) {
    const uint32_t begin = uint32_t(uint64_t(length) * i / pieces);
    const uint32_t end = uint32_t(uint64_t(length) * (i + 1) / pieces);
    const uint32_t x = across ? begin : 0, y = across ? 0 : begin;
    const uint32_t w = across ? end - begin : distorted.width;
    const uint32_t h = across ? distorted.height : end - begin;
    const Ssimulacra2Result m =
        ssimulacra2(mirror_to_side(crop(reference, x, y, w, h), kFullScaleSide),
                    mirror_to_side(crop(distorted, x, y, w, h), kFullScaleSide), options);
    r.score = std::min(r.score, m.score);
    if (m.worst_tile_score < r.worst_tile_score) {
      r.worst_tile_score = m.worst_tile_score;
      r.worst_tile_x = x + reflected(m.worst_tile_x, w);
      r.worst_tile_y = y + reflected(m.worst_tile_y, h);
    }
  }
  return r;
}

}  // namespace lighten
