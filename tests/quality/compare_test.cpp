// compare_images (the API behind `lighten compare`): PNG against JPEG as the oracle scored them.
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <vector>

#include "lighten/compare.h"
#include "quality/image.h"
#include "quality/image_io.h"
#include "support/icc_profiles.h"
#include "support/jpeg_maker.h"
#include "support/png_maker.h"

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
  // Small figures keep two significant digits (they read 0.0 MP before).
  EXPECT_NE(capped.butteraugli_note.find("limit of 0.001 MP"), std::string::npos)
      << capped.butteraugli_note;
  EXPECT_EQ(capped.butteraugli_note.find(" 0.0 "), std::string::npos) << capped.butteraugli_note;
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

// Samples of a smooth colourful picture, `channels` a pixel (3 or 4), at `scale` a code value
// (1 for 8 bits, 257 for the same picture in 16); the fourth, alpha, a ramp from clear to opaque.
std::vector<uint16_t> picture_samples(int channels, uint16_t scale) {
  std::vector<uint16_t> v;
  for (uint32_t y = 0; y < 96; ++y)
    for (uint32_t x = 0; x < 128; ++x) {
      for (uint32_t c = 0; c < 3; ++c)
        v.push_back(uint16_t(scale * ((x * (c + 1) + y * 2 + c * 60 + (x * y) % 7) % 256)));
      if (channels == 4) v.push_back(uint16_t(scale * (x * 2)));
    }
  return v;
}

// Half-transparent pixels show what lies behind them. libpng once blended them onto whatever
// the buffer held (a picture against itself scored -5 and 1); as the reference tool, each image
// is seen over a dark and a light background and the worse counts: a shadow made opaque is a
// different picture.
TEST(Compare, TransparentPngsAreSeenOverDarkAndLightBackgrounds) {
  const std::vector<uint16_t> samples = picture_samples(4, 1);
  const auto png = testing::png_of_samples(128, 96, 4, 8, samples);
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(compare_images(png, png, false).ssimulacra2.value_or(0), 100.0, 1e-6);
  std::vector<uint16_t> opaque = samples;
  for (size_t i = 3; i < opaque.size(); i += 4) opaque[i] = 255;
  const ImageScores s = compare_images(png, testing::png_of_samples(128, 96, 4, 8, opaque), false);
  EXPECT_LT(s.ssimulacra2.value_or(100), 30.0);
}

// A 16-bit PNG without gAMA is in sRGB's coding as viewers show it, not linear light (libpng's
// default for the simplified API): the same picture in 8 and 16 bits scored -44.
TEST(Compare, SixteenBitPngsReadAsTheirEightBitCopies) {
  const auto eight = testing::png_of_samples(128, 96, 3, 8, picture_samples(3, 1));
  const auto sixteen = testing::png_of_samples(128, 96, 3, 16, picture_samples(3, 257));
  EXPECT_NEAR(compare_images(eight, sixteen, false).ssimulacra2.value_or(0), 100.0, 1e-6);
}

// An ICC profile overrides gAMA (PNG 1.2): a ProPhoto picture that also gives its gamma of 1.8
// in gAMA is the same picture as without it; libpng applied the gamma under the profile's own
// curves (55 against itself).
TEST(Compare, AnIccProfileOverridesGama) {
  const std::vector<uint16_t> samples = picture_samples(3, 1);
  const std::vector<uint8_t> prophoto = testing::prophoto_rgb_profile();
  const auto plain = testing::png_of_samples(128, 96, 3, 8, samples, 0, prophoto);
  const auto with_gama = testing::png_of_samples(128, 96, 3, 8, samples, 1 / 1.8, prophoto);
  EXPECT_NEAR(compare_images(plain, with_gama, false).ssimulacra2.value_or(0), 100.0, 1e-6);
  // Without a profile, gAMA is how the samples read: gamma 1.0 is another picture.
  const auto linear = testing::png_of_samples(128, 96, 3, 8, samples, 1.0);
  const auto srgb = testing::png_of_samples(128, 96, 3, 8, samples);
  EXPECT_LT(compare_images(srgb, linear, false).ssimulacra2.value_or(100), 50.0);
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

// libjpeg decodes a JPEG cut short with a warning and makes up the rest: one cut after its
// scan header scored -254 against its whole self, and 100 against itself. Damaged data is an
// error, as it is to the optimiser; a warning about the markers alone is not.
TEST(Compare, AJpegCutShortIsAnError) {
  const std::vector<uint8_t> whole = testing::make_jpeg(testing::JpegRecipe{});
  size_t scan = 0;
  for (size_t i = 0; i + 3 < whole.size(); ++i)
    if (whole[i] == 0xFF && whole[i + 1] == 0xDA) scan = i + 2 + (whole[i + 2] << 8 | whole[i + 3]);
  ASSERT_GT(scan, 0u);
  for (const size_t cut : {scan, (scan + whole.size()) / 2}) {
    const std::vector<uint8_t> part(whole.begin(), whole.begin() + long(cut));
    EXPECT_THROW(compare_images(whole, part, false), std::runtime_error) << cut;
    EXPECT_THROW(compare_images(part, part, false), std::runtime_error) << cut;
  }
  // An odd JFIF version (a warning about the markers): the pixels are whole.
  std::vector<uint8_t> odd_version = whole;
  ASSERT_EQ(odd_version[6], 'J');
  odd_version[11] = 7;  // major version 7
  EXPECT_DOUBLE_EQ(compare_images(whole, odd_version, false).ssimulacra2.value_or(0), 100.0);
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
