// The last trial of a perceptual search: a lighter trellis weight at the level found, for the
// headroom the table levels' steps leave above the floor.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "formats/jpeg/perceptual.h"
#include "formats/jpeg/requantize.h"
#include "lighten/lighten.h"
#include "test_support.h"

namespace lighten::jpeg {
namespace {

TEST(Perceptual, TheWeightIsEasedOnlyForHeadroomAndMoreForMore) {
  const double weight = RdoParams{}.strength;
  EXPECT_EQ(eased_trellis_weight(weight, 0.0, 80), weight);
  EXPECT_EQ(eased_trellis_weight(weight, kEaseMinHeadroom * 0.99, 80), weight);
  const double some = eased_trellis_weight(weight, 0.3, 80);
  const double more = eased_trellis_weight(weight, 0.6, 80);
  EXPECT_LT(some, weight);
  EXPECT_LT(more, some);
  EXPECT_GT(more, 0.0);
  // At a low floor the score falls faster with the weight: the same headroom eases it less.
  EXPECT_GT(eased_trellis_weight(weight, 0.6, 70), more);
  // The prior: 2.5 points per unit of ln(weight) from floor 80 up, 4.5 at 70, linear between.
  EXPECT_DOUBLE_EQ(more, weight * std::exp(-(0.6 - kEaseAimAbove) / 2.5));
  EXPECT_DOUBLE_EQ(eased_trellis_weight(weight, 0.6, 85), more);
  EXPECT_DOUBLE_EQ(eased_trellis_weight(weight, 0.6, 75),
                   weight * std::exp(-(0.6 - kEaseAimAbove) / 3.5));
  // Never past the lightest step measured, however much headroom.
  EXPECT_DOUBLE_EQ(eased_trellis_weight(weight, 10.0, 80), kEaseLightest * weight);
  // Weights raced in scale alike.
  EXPECT_NEAR(eased_trellis_weight(4 * weight, 0.6, 80), 4 * more, 1e-12);
}

// A photo-like picture: smooth shading, a busy texture over half of it, and grain.
std::vector<uint8_t> textured_pixels(int width, int height) {
  std::vector<uint8_t> pixels(size_t(width) * height * 3);
  uint32_t seed = 11;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const double texture = (x > width / 2 ? 30.0 : 6.0) * std::sin(x * 0.31 + y * 0.17) *
                             std::sin(x * 0.07 - y * 0.23);
      const double shade = 60.0 * std::sin(x * 0.013) * std::cos(y * 0.011);
      for (int c = 0; c < 3; ++c) {
        seed = seed * 1103515245u + 12345u;
        const double v = 120 + 25 * c + shade + texture + int(seed >> 28) - 8;
        pixels[(size_t(y) * width + x) * 3 + c] = uint8_t(std::clamp(v, 0.0, 255.0));
      }
    }
  }
  return pixels;
}

// Effort 3 and 4 search a small image (no row sample, so no weights raced) alike up to the eased
// trial: effort 4's output meets the floor, is never larger, and differs only where it eased.
TEST(Perceptual, AnEasedWeightMeetsTheFloorInFewerBytes) {
  const int width = 480, height = 360;
  const auto jpeg = testing::make_jpeg({.width = width,
                                        .height = height,
                                        .quality = 97,
                                        .markers = {},
                                        .pixels = textured_pixels(width, height)});
  ASSERT_FALSE(jpeg.empty());
  int eased = 0;
  for (double target : {74.0, 77.0, 80.0, 83.0, 86.0, 89.0}) {
    SCOPED_TRACE("target " + std::to_string(target));
    Policy p;
    p.mode = Mode::kHigh;
    p.target_score = target;
    p.effort = kEaseMinEffort - 1;
    const Outcome before = optimize(jpeg, p);
    p.effort = kEaseMinEffort;
    const Outcome after = optimize(jpeg, p);
    ASSERT_TRUE(before.replaced() && after.replaced()) << before.message << after.message;
    if (before.quality.pixels_identical) continue;
    ASSERT_TRUE(after.quality.ssimulacra2.has_value());
    EXPECT_GE(*after.quality.ssimulacra2, target) << after.detail;
    EXPECT_LE(after.bytes.size(), before.bytes.size()) << after.detail;
    if (after.detail.find("weight eased") != std::string::npos) {
      ++eased;
      EXPECT_LT(after.bytes.size(), before.bytes.size()) << after.detail;
    } else {
      EXPECT_EQ(after.bytes, before.bytes) << after.detail;
    }
  }
  EXPECT_GT(eased, 0);
}

}  // namespace
}  // namespace lighten::jpeg
