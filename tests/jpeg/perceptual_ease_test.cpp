// The last trials of a perceptual search: lighter trellis weights at the level found, for the
// headroom the table levels' steps leave above the floor.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "formats/jpeg/perceptual.h"
#include "formats/jpeg/requantize.h"
#include "lighten/lighten.h"
#include "quality/floor_score.h"
#include "test_support.h"

namespace lighten::jpeg {
namespace {

TEST(Perceptual, TheWeightIsEasedOnlyForHeadroomAndMoreForMore) {
  const double weight = RdoParams{}.strength;
  const double far_tile = 10.0;  // a worst tile far above its floor: the score decides
  EXPECT_EQ(eased_trellis_weight(weight, 0.0, 80, far_tile), weight);
  EXPECT_EQ(eased_trellis_weight(weight, kEaseMinHeadroom * 0.99, 80, far_tile), weight);
  const double some = eased_trellis_weight(weight, 0.3, 80, far_tile);
  const double more = eased_trellis_weight(weight, 0.6, 80, far_tile);
  EXPECT_LT(some, weight);
  EXPECT_LT(more, some);
  EXPECT_GT(more, 0.0);
  // At a low floor the score falls faster with the weight: the same headroom eases it less.
  EXPECT_GT(eased_trellis_weight(weight, 0.6, 70, far_tile), more);
  // The prior: 2.5 points per unit of ln(weight) from floor 80 up, 4.5 at 70, linear between.
  EXPECT_DOUBLE_EQ(more, weight * std::exp(-(0.6 - kEaseAimAbove) / 2.5));
  EXPECT_DOUBLE_EQ(eased_trellis_weight(weight, 0.6, 85, far_tile), more);
  EXPECT_DOUBLE_EQ(eased_trellis_weight(weight, 0.6, 75, far_tile),
                   weight * std::exp(-(0.6 - kEaseAimAbove) / 3.5));
  // Never past the lightest step measured, however much headroom.
  EXPECT_DOUBLE_EQ(eased_trellis_weight(weight, 10.0, 80, far_tile), kEaseLightest * weight);
  // A worst tile at its floor fails at any lighter weight: no trial.
  EXPECT_EQ(eased_trellis_weight(weight, 0.6, 80, kEaseMinHeadroom * 0.99), weight);
  // Near it, its own (steeper) prior decides how far the trial goes.
  EXPECT_DOUBLE_EQ(eased_trellis_weight(weight, 0.6, 80, 0.5),
                   weight * std::exp(-(0.5 - kEaseAimAbove) / kEaseWorstTileSensitivity));
  EXPECT_GT(eased_trellis_weight(weight, 0.6, 80, 0.5), more);
  // Weights raced in scale alike.
  EXPECT_NEAR(eased_trellis_weight(4 * weight, 0.6, 80, far_tile), 4 * more, 1e-12);
}

// The second trial follows the lines through the search's pass and the first trial: lighter than
// a first trial that passed with room to spare, between the two where the first failed.
TEST(Perceptual, ASecondEasedWeightFollowsTheMeasuredLines) {
  const double pass = 80.01, worst_pass = 70.01;
  const WeightTrial searched{0.5, 80.6, 75.0};
  const double aim = 80.6 - pass - kEaseAimAbove;  // the score's headroom over the aim
  // A pass that fell 0.3 points: the score's line reaches the aim at this weight; the worst
  // tile, far above its floor, does not bind.
  const WeightTrial passed{0.45, 80.3, 74.8};
  const double span = std::log(0.5 / 0.45);
  const std::optional<double> lighter = second_eased_weight(searched, passed, pass, worst_pass);
  ASSERT_TRUE(lighter.has_value());
  EXPECT_NEAR(*lighter, 0.5 * std::exp(-aim * span / 0.3), 1e-12);
  EXPECT_LT(*lighter, passed.weight);
  // A pass that barely fell would call for a far lighter weight: no further than the lightest
  // step from the first trial.
  const WeightTrial flat{0.45, 80.55, 74.9};
  EXPECT_NEAR(*second_eased_weight(searched, flat, pass, worst_pass), kEaseLightest * 0.45, 1e-12);
  // A pass with under kEaseMinHeadroom left, or none that fell, is left as it is.
  EXPECT_FALSE(second_eased_weight(searched, {0.45, pass + 0.05, 74.8}, pass, worst_pass));
  EXPECT_FALSE(second_eased_weight(searched, {0.45, 80.6, 75.2}, pass, worst_pass));
  EXPECT_FALSE(second_eased_weight(searched, {0.5, 80.3, 74.8}, pass, worst_pass));
  // A first trial that failed the score: the second lies between it and the search's weight.
  const WeightTrial failed{0.4, 79.5, 74.0};
  const std::optional<double> between = second_eased_weight(searched, failed, pass, worst_pass);
  ASSERT_TRUE(between.has_value());
  EXPECT_NEAR(*between, 0.5 * std::exp(-aim * std::log(0.5 / 0.4) / 1.1), 1e-12);
  EXPECT_GT(*between, failed.weight);
  EXPECT_LT(*between, searched.weight);
  // Where the worst tile binds (just over its floor at the search's weight, under it at the
  // first trial's), no lighter weight can keep it: nothing more is tried.
  const WeightTrial tile_bound{0.5, 80.6, worst_pass + 0.02};
  EXPECT_FALSE(second_eased_weight(tile_bound, {0.4, 80.2, 69.0}, pass, worst_pass));
  // The worst tile's line binds before the score's: the heavier of the two weights.
  const WeightTrial near_tile{0.5, 80.6, worst_pass + 1.0};
  const std::optional<double> tile_limited =
      second_eased_weight(near_tile, {0.4, 79.5, worst_pass - 1.0}, pass, worst_pass);
  ASSERT_TRUE(tile_limited.has_value());
  EXPECT_NEAR(*tile_limited, 0.5 * std::exp(-(1.0 - kEaseAimAbove) * std::log(0.5 / 0.4) / 2.0),
              1e-12);
  EXPECT_GT(*tile_limited, *between);
}

// Past the second trial (from kEaseThirdTrialMinEffort), the next follows the two measured
// points closest around the aim.
TEST(Perceptual, AFurtherEasedWeightFollowsTheClosestBracket) {
  const double pass = 70.01, worst_pass = 60.01;
  const WeightTrial searched{2.0, 70.6, 65.0};
  // One trial: the same as the second trial's rule.
  const std::vector<EasedTrial> one{{{1.8, 70.3, 64.8}, true}};
  EXPECT_EQ(further_eased_weight(searched, one, pass, worst_pass),
            second_eased_weight(searched, one[0].trial, pass, worst_pass));
  // A pass, then a lighter failure: between the two, on their line, not the search's.
  const std::vector<EasedTrial> kept_then_failed{{{1.87, 70.35, 64.9}, true},
                                                 {{1.31, 69.89, 64.0}, false}};
  const std::optional<double> between =
      further_eased_weight(searched, kept_then_failed, pass, worst_pass);
  ASSERT_TRUE(between.has_value());
  EXPECT_NEAR(*between,
              1.87 * std::exp(-(70.35 - pass - kEaseAimAbove) * std::log(1.87 / 1.31) / 0.46),
              1e-12);
  EXPECT_GT(*between, 1.31);
  EXPECT_LT(*between, 1.87);
  // A failure, then a pass between: between the pass and the failure.
  const std::vector<EasedTrial> failed_then_kept{{{1.31, 69.89, 64.0}, false},
                                                 {{1.87, 70.35, 64.9}, true}};
  EXPECT_EQ(further_eased_weight(searched, failed_then_kept, pass, worst_pass), between);
  // Two failures: between the search's pass and the heavier failure.
  const std::vector<EasedTrial> both_failed{{{1.31, 69.89, 64.0}, false},
                                            {{1.7, 69.95, 64.5}, false}};
  EXPECT_EQ(further_eased_weight(searched, both_failed, pass, worst_pass),
            second_eased_weight(searched, both_failed[1].trial, pass, worst_pass));
  // Two passes: on along the line through them, lighter than the lightest.
  const std::vector<EasedTrial> both_kept{{{1.8, 70.45, 64.8}, true}, {{1.6, 70.3, 64.6}, true}};
  const std::optional<double> lighter = further_eased_weight(searched, both_kept, pass, worst_pass);
  ASSERT_TRUE(lighter.has_value());
  EXPECT_EQ(lighter, second_eased_weight(both_kept[0].trial, both_kept[1].trial, pass, worst_pass));
  EXPECT_LT(*lighter, 1.6);
  // A pass just over the aim leaves nothing to try.
  const std::vector<EasedTrial> at_aim{{{1.5, pass + 0.05, 64.5}, true},
                                       {{1.3, 69.5, 64.0}, false}};
  EXPECT_FALSE(further_eased_weight(searched, at_aim, pass, worst_pass));
}

TEST(Perceptual, TheEasingDetailNamesEachTrial) {
  EasingTrials t;
  t.searched_weight = 0.5;
  t.headroom = 0.6;
  EXPECT_EQ(easing_detail(t), "");
  const WeightTrial a{0.44, 80.3, 75}, b{0.41, 80.05, 74}, c{0.43, 80.12, 74.5};
  t.trials = {{a, true}};
  EXPECT_EQ(easing_detail(t), " (weight eased to 0.44 from 0.5: 0.60 points of headroom)");
  t.trials = {{a, true}, {b, true}};
  EXPECT_EQ(easing_detail(t),
            " (weight eased to 0.41 from 0.5 in two steps: 0.60 points of headroom)");
  t.trials = {{a, true}, {b, false}};
  EXPECT_EQ(easing_detail(t),
            " (weight eased to 0.44 from 0.5: 0.60 points of headroom; 0.41 scored 80.05)");
  t.trials = {{a, false}, {b, false}};
  EXPECT_EQ(easing_detail(t), " (weights 0.44 and 0.41 scored 80.30 and 80.05)");
  t.trials = {{a, false}, {b, true}};
  EXPECT_EQ(easing_detail(t),
            " (weight eased to 0.41 from 0.5 after 0.44 scored 80.30: 0.60 points of headroom)");
  t.trials = {{a, false}};
  EXPECT_EQ(easing_detail(t), " (weight 0.44 scored 80.30)");
  // Three trials.
  t.trials = {{a, true}, {b, false}, {c, true}};
  EXPECT_EQ(easing_detail(t),
            " (weight eased to 0.43 from 0.5 in two steps after 0.41 scored 80.05: 0.60 points "
            "of headroom)");
  t.trials = {{a, true}, {b, false}, {c, false}};
  EXPECT_EQ(easing_detail(t),
            " (weight eased to 0.44 from 0.5: 0.60 points of headroom; 0.41 and 0.43 scored "
            "80.05 and 80.12)");
  t.trials = {{a, false}, {b, false}, {c, false}};
  EXPECT_EQ(easing_detail(t), " (weights 0.44, 0.41 and 0.43 scored 80.30, 80.05 and 80.12)");
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
// trials: effort 4's output meets the floor, is never larger, and differs only where it eased.
TEST(Perceptual, AnEasedWeightMeetsTheFloorInFewerBytes) {
  const int width = 480, height = 360;
  const auto jpeg = testing::make_jpeg({.width = width,
                                        .height = height,
                                        .quality = 97,
                                        .markers = {},
                                        .pixels = textured_pixels(width, height)});
  ASSERT_FALSE(jpeg.empty());
  int eased = 0, second_trials = 0;
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
    // The output is the candidate the detail reports: its own score is the detail's (a trial
    // not kept must not be left in the image's coefficients).
    const std::string reported = "SSIMULACRA2 ";
    const size_t at = after.detail.find(reported);
    ASSERT_NE(at, std::string::npos) << after.detail;
    const double detail_score = std::stod(after.detail.substr(at + reported.size()));
    const auto original = to_metric_image(decode_pixels(jpeg), nullptr);
    const auto output = to_metric_image(decode_pixels(after.bytes), nullptr);
    ASSERT_TRUE(original && output);
    EXPECT_NEAR(floor_score(*original, *output).score, detail_score, 0.01) << after.detail;
    for (const char* second : {"in two steps", "headroom; ", "weights ", " after "})
      if (after.detail.find(second) != std::string::npos) ++second_trials;
    if (after.detail.find("weight eased") != std::string::npos) {
      ++eased;
      EXPECT_LT(after.bytes.size(), before.bytes.size()) << after.detail;
    } else {
      EXPECT_EQ(after.bytes, before.bytes) << after.detail;
    }
  }
  EXPECT_GT(eased, 0);
  EXPECT_GT(second_trials, 0);  // the second trial runs where the first missed
}

}  // namespace
}  // namespace lighten::jpeg
