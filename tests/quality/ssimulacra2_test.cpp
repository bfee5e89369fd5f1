#include "quality/ssimulacra2.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>

#include "quality/gaussian_blur.h"
#include "quality/image_io.h"
#include "quality/ssimulacra2_simple.h"

namespace lighten {
namespace {

const std::string kOracleDir = LIGHTEN_SHARED_DIR "/oracles/ssimulacra2";

struct OracleRow {
  std::string reference, distorted;
  double score;
};

std::vector<OracleRow> read_oracle() {
  std::vector<OracleRow> rows;
  std::ifstream in(kOracleDir + "/scores.tsv");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    OracleRow row;
    if (fields >> row.reference >> row.distorted >> row.score) rows.push_back(row);
  }
  return rows;
}

// A smooth gradient with some texture, so that every map has something to see.
ImageRgb8 make_test_image(uint32_t width, uint32_t height, uint32_t channels = 3) {
  ImageRgb8 image{width, height, channels, {}};
  image.samples.resize(static_cast<size_t>(width) * height * channels);
  for (uint32_t y = 0; y < height; ++y) {
    for (uint32_t x = 0; x < width; ++x) {
      for (uint32_t c = 0; c < channels; ++c) {
        const double v = 128 + 60 * std::sin(x * 0.05 + c) * std::cos(y * 0.07) +
                         30 * std::sin((x + 3 * y) * 0.5 + c);
        image.samples[(static_cast<size_t>(y) * width + x) * channels + c] =
            static_cast<uint8_t>(std::clamp(v, 0.0, 255.0));
      }
    }
  }
  return image;
}

ImageRgb8 add_noise(const ImageRgb8& image, double amplitude, uint32_t seed, uint32_t x0 = 0,
                    uint32_t y0 = 0, uint32_t x1 = ~0u, uint32_t y1 = ~0u) {
  ImageRgb8 out = image;
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, amplitude);
  for (uint32_t y = y0; y < std::min(y1, image.height); ++y) {
    for (uint32_t x = x0; x < std::min(x1, image.width); ++x) {
      for (uint32_t c = 0; c < image.channels; ++c) {
        uint8_t& s = out.samples[(static_cast<size_t>(y) * image.width + x) * image.channels + c];
        s = static_cast<uint8_t>(std::clamp(s + noise(rng), 0.0, 255.0));
      }
    }
  }
  return out;
}

TEST(Ssimulacra2, AgreesWithOracle) {
  if (!std::filesystem::exists(kOracleDir + "/scores.tsv")) {
    GTEST_SKIP() << "oracle " << kOracleDir << " absent (set LIGHTEN_SHARED_DIR)";
  }
  const std::vector<OracleRow> rows = read_oracle();
  ASSERT_FALSE(rows.empty());
  double max_diff = 0.0;
  for (const OracleRow& row : rows) {
    const ImageRgb8 reference = test::load_image(kOracleDir + "/" + row.reference);
    const ImageRgb8 distorted = test::load_image(kOracleDir + "/" + row.distorted);
    const Ssimulacra2Result result = ssimulacra2(reference, distorted);
    EXPECT_NEAR(result.score, row.score, 0.5) << row.distorted;
    max_diff = std::max(max_diff, std::abs(result.score - row.score));
  }
  std::printf("max |ours - oracle| over %zu rows: %.4f\n", rows.size(), max_diff);
}

// Leaving out the maps of negligible weight moves no oracle row's score by 0.01 or more.
TEST(Ssimulacra2, NegligibleMapsChangeTheScoreByLittle) {
  if (!std::filesystem::exists(kOracleDir + "/scores.tsv")) {
    GTEST_SKIP() << "oracle " << kOracleDir << " absent (set LIGHTEN_SHARED_DIR)";
  }
  double max_diff = 0.0;
  for (const OracleRow& row : read_oracle()) {
    const ImageRgb8 reference = test::load_image(kOracleDir + "/" + row.reference);
    const ImageRgb8 distorted = test::load_image(kOracleDir + "/" + row.distorted);
    const Ssimulacra2Result full = ssimulacra2(reference, distorted);
    const Ssimulacra2Result quick =
        ssimulacra2(reference, distorted, {.tile_size = 256, .negligible_weight = 0.002});
    EXPECT_NEAR(quick.score, full.score, 0.01) << row.distorted;
    EXPECT_NEAR(quick.worst_tile_score, full.worst_tile_score, 0.05) << row.distorted;
    max_diff = std::max(max_diff, std::abs(quick.score - full.score));
  }
  std::printf("max |quick - full| over the oracle rows: %.5f\n", max_diff);
}

// The streamed computation (rows through all scales at once, pooled per tile) gives the score
// of the plain whole-plane computation.
TEST(Ssimulacra2, StreamedEqualsWholeImage) {
  if (!std::filesystem::exists(kOracleDir + "/scores.tsv")) {
    GTEST_SKIP() << "oracle " << kOracleDir << " absent (set LIGHTEN_SHARED_DIR)";
  }
  for (const OracleRow& row : read_oracle()) {
    const ImageRgb8 reference = test::load_image(kOracleDir + "/" + row.reference);
    const ImageRgb8 distorted = test::load_image(kOracleDir + "/" + row.distorted);
    const double whole = test::ssimulacra2_whole_image(reference, distorted);
    EXPECT_NEAR(ssimulacra2(reference, distorted).score, whole, 1e-3) << row.distorted;
    EXPECT_NEAR(ssimulacra2(reference, distorted, {.tile_size = 0}).score, whole, 1e-3);
  }
}

TEST(Ssimulacra2, StreamedEqualsWholeImageOnOddSizes) {
  for (const auto& [w, h] : {std::pair{37u, 29u}, {130u, 9u}, {301u, 203u}, {8u, 8u}}) {
    const ImageRgb8 a = make_test_image(w, h);
    const ImageRgb8 b = add_noise(a, 6.0, 1);
    EXPECT_NEAR(ssimulacra2(a, b).score, test::ssimulacra2_whole_image(a, b), 1e-3)
        << w << "x" << h;
  }
}

TEST(Ssimulacra2, IdenticalImagesScore100) {
  const ImageRgb8 image = make_test_image(300, 200);
  const Ssimulacra2Result result = ssimulacra2(image, image);
  EXPECT_DOUBLE_EQ(result.score, 100.0);
  EXPECT_DOUBLE_EQ(result.worst_tile_score, 100.0);
}

TEST(Ssimulacra2, MoreNoiseLowersTheScore) {
  const ImageRgb8 image = make_test_image(256, 192);
  double previous = 100.0;
  for (const double amplitude : {1.0, 3.0, 8.0, 20.0, 50.0}) {
    const double score = ssimulacra2(image, add_noise(image, amplitude, 7)).score;
    EXPECT_LT(score, previous) << "noise " << amplitude;
    previous = score;
  }
}

TEST(Ssimulacra2, SizeMismatchThrows) {
  EXPECT_THROW(ssimulacra2(make_test_image(64, 64), make_test_image(64, 65)),
               std::invalid_argument);
  ImageRgb8 truncated = make_test_image(64, 64);
  truncated.samples.resize(100);
  EXPECT_THROW(ssimulacra2(make_test_image(64, 64), truncated), std::invalid_argument);
}

TEST(Ssimulacra2, RoughlySymmetric) {
  const ImageRgb8 a = make_test_image(200, 150);
  const ImageRgb8 b = add_noise(a, 10.0, 3);
  const double ab = ssimulacra2(a, b).score, ba = ssimulacra2(b, a).score;
  EXPECT_LT(ab, 100.0);
  EXPECT_LT(ba, 100.0);
  EXPECT_NEAR(ab, ba, 10.0);  // the edge maps are not symmetric, so only roughly
}

TEST(Ssimulacra2, GrayEqualsReplicatedRgb) {
  const ImageRgb8 gray_a = make_test_image(120, 90, 1);
  const ImageRgb8 gray_b = add_noise(gray_a, 5.0, 2);
  auto to_rgb = [](const ImageRgb8& gray) {
    ImageRgb8 rgb{gray.width, gray.height, 3, {}};
    for (const uint8_t v : gray.samples) rgb.samples.insert(rgb.samples.end(), {v, v, v});
    return rgb;
  };
  EXPECT_DOUBLE_EQ(ssimulacra2(gray_a, gray_b).score,
                   ssimulacra2(to_rgb(gray_a), to_rgb(gray_b)).score);
}

TEST(Ssimulacra2, TinyImagesScore100AsInTheReference) {
  const ImageRgb8 a = make_test_image(7, 40);
  EXPECT_DOUBLE_EQ(ssimulacra2(a, add_noise(a, 30.0, 1)).score, 100.0);
}

// A region damaged far below the rest is found by the tiles even when the whole image passes.
TEST(Ssimulacra2, WorstTileFindsLocalDamage) {
  const ImageRgb8 image = make_test_image(1024, 768);
  const ImageRgb8 damaged = add_noise(add_noise(image, 1.0, 5), 40.0, 9, 512, 256, 768, 512);
  const Ssimulacra2Result result = ssimulacra2(image, damaged);
  EXPECT_LT(result.worst_tile_score, result.score - 10.0);
  EXPECT_EQ(result.worst_tile_x, 512u);
  EXPECT_EQ(result.worst_tile_y, 256u);
  const Ssimulacra2Result whole_only = ssimulacra2(image, damaged, {.tile_size = 0});
  EXPECT_DOUBLE_EQ(whole_only.worst_tile_score, whole_only.score);
  EXPECT_NEAR(whole_only.score, result.score, 1e-6);
}

TEST(Ssimulacra2, BlurMatchesTheRecursionsFirWeights) {
  // The recursion with sigma 1.5 sums to 1 over 9 taps (radius 5 recursion, exact zero beyond).
  const RecursiveGaussian& rg = ssimulacra2_gaussian();
  EXPECT_EQ(rg.radius, 5);
  std::vector<float> impulse(64, 0.0f), out(64, 0.0f);
  impulse[32] = 1.0f;
  gaussian_blur_row(rg, impulse.data(), out.data(), impulse.size());
  double total = 0.0;
  for (int d = -4; d <= 4; ++d) total += out[32 + d];
  EXPECT_NEAR(total, 1.0, 1e-5);
  EXPECT_NEAR(out[32 + 6], 0.0, 1e-5);
  EXPECT_NEAR(out[32 - 6], 0.0, 1e-5);
  EXPECT_NEAR(out[32 + 1], out[32 - 1], 1e-6);
}

}  // namespace
}  // namespace lighten
