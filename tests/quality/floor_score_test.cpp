// floor_score: the published SSIMULACRA 2 from 256 px a side; on smaller images also the score
// of both images mirrored out to 256 px, so that a thin strip is held to what its content scores
// in a larger picture rather than to what the metric's shrunken or missing scales make of it.
#include "quality/floor_score.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "quality/ssimulacra2.h"

namespace lighten {
namespace {

// Photo-like content: gradients, a few edges and deterministic noise.
ImageRgb8 texture(uint32_t width, uint32_t height) {
  ImageRgb8 img;
  img.width = width;
  img.height = height;
  img.samples.resize(size_t(width) * height * 3);
  uint32_t noise = 2463534242u;
  for (uint32_t y = 0; y < height; ++y) {
    for (uint32_t x = 0; x < width; ++x) {
      for (uint32_t c = 0; c < 3; ++c) {
        noise ^= noise << 13, noise ^= noise >> 17, noise ^= noise << 5;
        const double wave = 60 * std::sin(x * 0.05 + c) + 40 * std::cos(y * 0.07 + x * 0.01);
        const int edge = ((x / 37 + y / 29) % 3) * 25;
        const int v = int(110 + wave + edge + int(noise % 24));
        img.samples[(size_t(y) * width + x) * 3 + c] = uint8_t(std::clamp(v, 0, 255));
      }
    }
  }
  return img;
}

// Loss in the manner of a coarse JPEG: every 8x8 block pulled most of the way to its mean.
ImageRgb8 blocky(const ImageRgb8& img) {
  ImageRgb8 out = img;
  for (uint32_t by = 0; by < img.height; by += 8) {
    for (uint32_t bx = 0; bx < img.width; bx += 8) {
      const uint32_t h = std::min(8u, img.height - by), w = std::min(8u, img.width - bx);
      for (uint32_t c = 0; c < 3; ++c) {
        double sum = 0;
        for (uint32_t y = by; y < by + h; ++y)
          for (uint32_t x = bx; x < bx + w; ++x)
            sum += img.samples[(size_t(y) * img.width + x) * 3 + c];
        const double mean = sum / (w * h);
        for (uint32_t y = by; y < by + h; ++y) {
          for (uint32_t x = bx; x < bx + w; ++x) {
            uint8_t& v = out.samples[(size_t(y) * img.width + x) * 3 + c];
            v = uint8_t(std::lround(mean + 0.75 * (v - mean)));
          }
        }
      }
    }
  }
  return out;
}

ImageRgb8 first_rows(const ImageRgb8& img, uint32_t rows) {
  ImageRgb8 out = img;
  out.height = rows;
  out.samples.resize(size_t(img.width) * rows * img.channels);
  return out;
}

TEST(FloorScore, MirrorAlternatesTheImageAndItsReflection) {
  ImageRgb8 img;
  img.width = 3;
  img.height = 2;
  img.channels = 1;
  img.samples = {1, 2, 3, 4, 5, 6};
  const ImageRgb8 m = mirror_to_side(img, 8);
  ASSERT_EQ(m.width, 8u);
  ASSERT_EQ(m.height, 8u);
  const std::vector<uint8_t> top = {1, 2, 3, 3, 2, 1, 1, 2}, bottom = {4, 5, 6, 6, 5, 4, 4, 5};
  for (uint32_t y = 0; y < 8; ++y) {
    const std::vector<uint8_t> row(m.samples.begin() + y * 8, m.samples.begin() + y * 8 + 8);
    // Rows 0, 1 | 1, 0 | 0, 1 | 1, 0: the seams repeat an edge row, never jump.
    EXPECT_EQ(row, (y % 4 == 0 || y % 4 == 3) ? top : bottom) << "row " << y;
  }
  // Colour pixels move whole.
  ImageRgb8 rgb;
  rgb.width = 2;
  rgb.height = 1;
  rgb.samples = {10, 20, 30, 40, 50, 60};
  const ImageRgb8 mr = mirror_to_side(rgb, 4);
  const std::vector<uint8_t> first_row(mr.samples.begin(), mr.samples.begin() + 12);
  EXPECT_EQ(first_row, (std::vector<uint8_t>{10, 20, 30, 40, 50, 60, 40, 50, 60, 10, 20, 30}));
  // Large enough already: unchanged.
  const ImageRgb8 same = mirror_to_side(rgb, 1);
  EXPECT_EQ(same.width, 2u);
  EXPECT_EQ(same.samples, rgb.samples);
}

TEST(FloorScore, IsThePublishedScoreFromFullScaleOn) {
  const ImageRgb8 a = texture(kFullScaleSide, kFullScaleSide + 40);
  const ImageRgb8 b = blocky(a);
  const Ssimulacra2Result s = ssimulacra2(a, b), f = floor_score(a, b);
  EXPECT_EQ(f.score, s.score);
  EXPECT_EQ(f.worst_tile_score, s.worst_tile_score);
}

// Strips of one picture with one kind of loss: the published score wanders with the strip's
// height alone (94 for 8 rows, 64 for 48, 84 for 96, against 75 for the whole picture); the
// mirrored strips score 71-76, and the floor score is the lower of the two.
TEST(FloorScore, ThinStripsScoreAsTheirContentDoesInALargerPicture) {
  const ImageRgb8 picture = texture(1024, kFullScaleSide);
  const ImageRgb8 lossy = blocky(picture);
  const double full = ssimulacra2(picture, lossy).score;
  double widest_drift = 0;
  for (uint32_t rows : {4u, 8u, 16u, 32u, 48u, 64u, 96u, 128u, 192u}) {
    SCOPED_TRACE(rows);
    const ImageRgb8 a = first_rows(picture, rows), b = first_rows(lossy, rows);
    const double published = ssimulacra2(a, b).score;
    const double mirrored =
        ssimulacra2(mirror_to_side(a, kFullScaleSide), mirror_to_side(b, kFullScaleSide)).score;
    EXPECT_NEAR(mirrored, full, 4.0);
    const Ssimulacra2Result f = floor_score(a, b);
    EXPECT_EQ(f.score, std::min(published, mirrored));
    EXPECT_LE(f.score, full + 4.0);
    widest_drift = std::max(widest_drift, std::abs(published - full));
    // Under 8 px the published metric has no scale at all: 100 whatever the loss.
    if (rows < 8) {
      EXPECT_EQ(published, 100.0);
    }
  }
  EXPECT_GT(widest_drift, 15.0) << "the published score no longer drifts on thin strips";
}

// A strip longer than kMirrorPiece is mirrored piece by piece (each at most kMirrorPiece long,
// so memory stays bounded however long the strip): the floor score is the lowest piece's, and a
// loss confined to one piece is found there.
TEST(FloorScore, LongStripsAreScoredInPieces) {
  const uint32_t length = 3 * kMirrorPiece + 100;
  for (bool across : {true, false}) {
    SCOPED_TRACE(across ? "wide" : "tall");
    const ImageRgb8 picture = across ? texture(length, 24) : texture(24, length);
    ImageRgb8 lossy = picture;
    // The loss only in the third piece (of four, each about length / 4 long).
    const ImageRgb8 damaged = blocky(picture);
    const uint32_t from = length / 2 + 100, to = 3 * length / 4 - 100;
    for (uint32_t y = 0; y < picture.height; ++y) {
      for (uint32_t x = 0; x < picture.width; ++x) {
        const uint32_t along = across ? x : y;
        if (along < from || along >= to) continue;
        for (uint32_t c = 0; c < 3; ++c) {
          const size_t i = (size_t(y) * picture.width + x) * 3 + c;
          lossy.samples[i] = damaged.samples[i];
        }
      }
    }
    const Ssimulacra2Result f = floor_score(picture, lossy);
    EXPECT_LE(f.score, ssimulacra2(picture, lossy).score);
    // That piece is mostly damaged: it scores about as the damage does on a whole picture (75).
    EXPECT_LT(f.score, 82.0);
    const uint32_t worst_along = across ? f.worst_tile_x : f.worst_tile_y;
    EXPECT_GE(worst_along + kFullScaleSide, from);
    EXPECT_LT(worst_along, to);
    EXPECT_EQ(floor_score(picture, picture).score, 100.0);
  }
}

}  // namespace
}  // namespace lighten
