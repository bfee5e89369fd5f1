// compare_images (the API behind `lighten compare`): PNG against JPEG as the oracle scored them.
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>

#include "lighten/compare.h"
#include "quality/image.h"
#include "quality/image_io.h"
#include "support/jpeg_maker.h"

namespace lighten {
namespace {

const std::string kOracleDir = LIGHTEN_SHARED_DIR "/oracles/ssimulacra2";

TEST(Compare, PngAgainstJpegMatchesTheOracle) {
  const std::string ref = kOracleDir + "/galaxy_s7.ref.png";
  if (!std::filesystem::exists(ref)) GTEST_SKIP() << "oracle absent";
  const auto a = test::read_file_bytes(ref);
  const auto b = test::read_file_bytes(kOracleDir + "/galaxy_s7.q50.jpg");
  const ImageScores s = compare_images(a, b);
  ASSERT_TRUE(s.ssimulacra2 && s.ssimulacra2_worst_tile);
  EXPECT_NEAR(*s.ssimulacra2, 61.6043, 0.5);
  EXPECT_LE(*s.ssimulacra2_worst_tile, *s.ssimulacra2);
  EXPECT_EQ(s.floor_score, *s.ssimulacra2);  // large enough for all six scales
  if (s.butteraugli) {                       // built with libjxl: a q50 JPEG is clearly visible
    EXPECT_GT(*s.butteraugli, 1.0);
  }
  const ImageScores same = compare_images(b, b);
  EXPECT_NEAR(same.ssimulacra2.value_or(0), 100.0, 1e-6);
  if (same.butteraugli) {
    EXPECT_NEAR(*same.butteraugli, 0.0, 1e-6);
  }
  EXPECT_FALSE(compare_images(a, b, false).butteraugli.has_value());
  // Past the pixel limit butteraugli is not computed, and the note says why and how to raise it.
  const ImageScores capped = compare_images(a, b, true, 1000);
  EXPECT_FALSE(capped.butteraugli.has_value());
  EXPECT_NE(capped.butteraugli_note.find("--butteraugli-max-mp"), std::string::npos)
      << capped.butteraugli_note;
}

// Under 8 px on a side the metric has no scale: no SSIMULACRA2 (the published algorithm would
// say 100 for any pixels) nor butteraugli, while the floor score, mirrored out to 256 px, tells
// a coarse copy from the image.
TEST(Compare, ImagesUnder8PxHaveNoScoreButTheFloorScore) {
  const auto photo = testing::make_jpeg({.width = 7, .height = 9, .quality = 95});
  const auto coarse = testing::make_jpeg({.width = 7, .height = 9, .quality = 5});
  ASSERT_FALSE(photo.empty() || coarse.empty());
  const ImageScores s = compare_images(photo, coarse);
  EXPECT_FALSE(s.ssimulacra2.has_value());
  EXPECT_FALSE(s.ssimulacra2_worst_tile.has_value());
  EXPECT_FALSE(s.butteraugli.has_value());
  EXPECT_NE(s.butteraugli_note.find("under 8 px"), std::string::npos) << s.butteraugli_note;
  EXPECT_LT(s.floor_score, 90.0);
  EXPECT_NEAR(compare_images(photo, photo, false).floor_score, 100.0, 1e-6);
}

TEST(Compare, RefusesOtherSizesAndNonImages) {
  const std::string ref = kOracleDir + "/galaxy_s7.ref.png";
  if (!std::filesystem::exists(ref)) GTEST_SKIP() << "oracle absent";
  const auto a = test::read_file_bytes(ref);
  const auto other = test::read_file_bytes(kOracleDir + "/canon_5d.ref.png");
  const std::vector<uint8_t> junk = {1, 2, 3, 4};
  const std::vector<uint8_t> truncated(a.begin(), a.begin() + 100);
  EXPECT_THROW(compare_images(a, junk, false), std::runtime_error);
  EXPECT_THROW(compare_images(a, truncated, false), std::runtime_error);
  if (test::decode_png(other).width != test::decode_png(a).width) {
    EXPECT_THROW(compare_images(a, other, false), std::runtime_error);
  }
}

// Each ink's channel is what the ink lets through times what the black lets through; the
// samples hold 255 - ink, as Adobe writes them and as PIL reads every CMYK JPEG.
TEST(CmykRendering, EachInkTimesTheBlack) {
  // White paper, full cyan, half black, full black, half magenta under half black.
  SampleBuffer cmyk = {255, 255, 255, 255, 0,   255, 255, 255, 255, 255,
                       255, 127, 255, 255, 255, 0,   255, 127, 255, 127};
  rgb_from_cmyk(cmyk);
  EXPECT_EQ(cmyk, (SampleBuffer{255, 255, 255, 0, 255, 255, 127, 127, 127, 0, 0, 0, 127, 63, 127}));
}

// `lighten compare` reads CMYK JPEGs (rendered as above) where it used to refuse them.
TEST(Compare, ReadsCmykJpegs) {
  const auto cmyk = testing::make_jpeg({.width = 300, .height = 260, .components = 4});
  ASSERT_FALSE(cmyk.empty());
  const ImageScores same = compare_images(cmyk, cmyk, false);
  EXPECT_EQ(same.ssimulacra2, 100.0);  // an optional holding 100
  const auto coarser =
      testing::make_jpeg({.width = 300, .height = 260, .components = 4, .quality = 30});
  EXPECT_LT(compare_images(cmyk, coarser, false).ssimulacra2.value_or(100), 90.0);
}

}  // namespace
}  // namespace lighten
