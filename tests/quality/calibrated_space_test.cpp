// PDF's calibrated spaces made into ICC profiles: read back through ProfileColour, they give the
// light the standard's formulas give (ISO 32000-1 8.6.5), white point adapted to sRGB's.
#include "quality/calibrated_space.h"

#include <gtest/gtest.h>
#include <lcms2.h>

#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "quality/colour_profile.h"
#include "support/icc_profiles.h"

namespace lighten {
namespace {

// sRGB's primaries in XYZ under its D65 white (IEC 61966-2-1), as /Matrix lists them: the XYZ of
// full red, then of full green, then of full blue.
constexpr std::array<double, 9> kSrgbColumns = {0.4124, 0.2126, 0.0193, 0.3576, 0.7152,
                                                0.1192, 0.1805, 0.0722, 0.9505};
constexpr std::array<double, 3> kD65White = {0.9505, 1.0, 1.089};

ProfileColour read_back(const CalibratedSpace& space) {
  const Bytes icc = calibrated_profile(space);
  EXPECT_FALSE(icc.empty());
  std::optional<ProfileColour> colour = ProfileColour::from_icc(icc, space.channels);
  if (!colour) throw std::runtime_error("the profile reads as sRGB or not at all");
  return *colour;
}

// sRGB's own primaries with a plain power law: each channel reads as its code value to the power
// gamma, unmixed (the D65 white adapted to D50 and back).
TEST(CalibratedSpace, CalRgbReadsByItsGammaAndPrimaries) {
  const ProfileColour colour = read_back(
      {.channels = 3, .white_point = kD65White, .gamma = {2.2, 1.8, 2.2}, .matrix = kSrgbColumns});
  EXPECT_NE(colour.description().find("CalRGB"), std::string::npos) << colour.description();
  for (int v : {0, 17, 64, 128, 200, 255}) {
    const uint8_t samples[9] = {uint8_t(v), 0, 0, 0, uint8_t(v), 0, 0, 0, uint8_t(v)};
    float r[3], g[3], b[3];
    colour.to_linear(samples, 3, r, g, b);
    const double x = v / 255.0;
    EXPECT_NEAR(r[0], std::pow(x, 2.2), 2e-3) << v;
    EXPECT_NEAR(g[1], std::pow(x, 1.8), 2e-3) << v;
    EXPECT_NEAR(b[2], std::pow(x, 2.2), 2e-3) << v;
    for (float other : {g[0], b[0], r[1], b[1], r[2], g[2]}) EXPECT_NEAR(other, 0.0, 2e-3) << v;
  }
}

// ProPhoto's primaries as CalRGB under its D50 white read as Little CMS reads the ICC profile
// built from the same primaries: red outside sRGB (negative green and blue).
TEST(CalibratedSpace, CalRgbReadsAsTheIccProfileOfItsPrimaries) {
  const Bytes prophoto_icc = testing::prophoto_rgb_profile();
  cmsHPROFILE prophoto =
      cmsOpenProfileFromMem(prophoto_icc.data(), cmsUInt32Number(prophoto_icc.size()));
  ASSERT_NE(prophoto, nullptr);
  CalibratedSpace space{
      .channels = 3, .white_point = {0.9642, 1.0, 0.8249}, .gamma = {1.8, 1.8, 1.8}};
  const cmsTagSignature tags[3] = {cmsSigRedColorantTag, cmsSigGreenColorantTag,
                                   cmsSigBlueColorantTag};
  for (size_t k = 0; k < 3; ++k) {
    const auto* xyz = static_cast<const cmsCIEXYZ*>(cmsReadTag(prophoto, tags[k]));
    ASSERT_NE(xyz, nullptr);
    space.matrix[3 * k] = xyz->X, space.matrix[3 * k + 1] = xyz->Y,
                     space.matrix[3 * k + 2] = xyz->Z;
  }
  cmsCloseProfile(prophoto);
  const ProfileColour calibrated = read_back(space);
  const std::optional<ProfileColour> icc = ProfileColour::from_icc(prophoto_icc, 3);
  ASSERT_TRUE(icc);
  std::vector<uint8_t> samples;
  for (int r = 0; r < 256; r += 51)
    for (int g = 0; g < 256; g += 51)
      for (int b = 0; b < 256; b += 51)
        samples.insert(samples.end(), {uint8_t(r), uint8_t(g), uint8_t(b)});
  const size_t n = samples.size() / 3;
  std::vector<float> a(3 * n), e(3 * n);
  calibrated.to_linear(samples.data(), n, a.data(), a.data() + n, a.data() + 2 * n);
  icc->to_linear(samples.data(), n, e.data(), e.data() + n, e.data() + 2 * n);
  for (size_t i = 0; i < 3 * n; ++i) EXPECT_NEAR(a[i], e[i], 2e-3) << i;
  const uint8_t red[3] = {255, 0, 0};
  float r, g, b;
  calibrated.to_linear(red, 1, &r, &g, &b);
  EXPECT_GT(r, 1.0f);
  EXPECT_LT(g, 0.0f);
}

TEST(CalibratedSpace, CalGrayReadsByItsGamma) {
  const ProfileColour colour =
      read_back({.channels = 1, .white_point = kD65White, .gamma = {2.2, 1, 1}});
  EXPECT_NE(colour.description().find("CalGray"), std::string::npos) << colour.description();
  for (int v = 0; v < 256; v += 15) {
    const uint8_t sample = uint8_t(v);
    float r, g, b;
    colour.to_linear(&sample, 1, &r, &g, &b);
    EXPECT_NEAR(r, std::pow(v / 255.0, 2.2), 2e-3) << v;
    EXPECT_NEAR(g, r, 1e-4);
    EXPECT_NEAR(b, r, 1e-4);
  }
}

// Spaces the standard rules out make no profile: viewers handle them each their own way.
TEST(CalibratedSpace, SpacesAgainstTheRulesMakeNoProfile) {
  const CalibratedSpace good{.channels = 3, .white_point = kD65White, .matrix = kSrgbColumns};
  EXPECT_FALSE(calibrated_profile(good).empty());
  CalibratedSpace bad = good;
  bad.white_point[1] = 0.9;
  EXPECT_TRUE(calibrated_profile(bad).empty());
  bad = good;
  bad.white_point[2] = 0;
  EXPECT_TRUE(calibrated_profile(bad).empty());
  bad = good;
  bad.gamma[1] = 0;
  EXPECT_TRUE(calibrated_profile(bad).empty());
  bad = good;
  bad.gamma[2] = NAN;
  EXPECT_TRUE(calibrated_profile(bad).empty());
  bad = good;
  bad.matrix = {1, 0, 0, 2, 0, 0, 0, 0, 1};
  EXPECT_TRUE(calibrated_profile(bad).empty());
  bad = good;
  bad.channels = 4;
  EXPECT_TRUE(calibrated_profile(bad).empty());
}

// Spaces within the rules whose numbers a profile cannot hold make none either: its gammas and
// colorants are 16.16 fixed point, which Little CMS fills without clamping.
TEST(CalibratedSpace, SpacesBeyondAProfilesNumbersMakeNoProfile) {
  const CalibratedSpace good{.channels = 3, .white_point = kD65White, .matrix = kSrgbColumns};
  auto makes_none = [&good](auto change) {
    CalibratedSpace space = good;
    change(space);
    return calibrated_profile(space).empty();
  };
  // Stored as 0: every sample would read as white.
  EXPECT_TRUE(makes_none([](CalibratedSpace& s) { s.gamma[0] = 1e-6; }));
  EXPECT_TRUE(makes_none([](CalibratedSpace& s) { s.gamma[1] = 40000; }));
  EXPECT_TRUE(makes_none([](CalibratedSpace& s) { s.matrix[0] = 40000; }));
  // Positive, with Y 1, but where Bradford's green cone response nearly vanishes: the adapted
  // colorants come out near 2e5.
  EXPECT_TRUE(makes_none([](CalibratedSpace& s) {
    s.matrix = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    s.white_point = {2.29874, 1, 0.3};
  }));
  EXPECT_TRUE(makes_none([](CalibratedSpace& s) {
    s = {.channels = 1, .white_point = kD65White, .gamma = {1e-6, 1, 1}};
  }));
  EXPECT_FALSE(makes_none([](CalibratedSpace& s) { s.gamma = {1.0 / 32, 2.2, 40}; }));
}

// The same space makes the same bytes at any time: the verifier takes the search's score only
// for the profile it was read through, compared byte for byte.
TEST(CalibratedSpace, TheSameSpaceMakesTheSameBytes) {
  const CalibratedSpace space{.channels = 1, .white_point = kD65White, .gamma = {1.8, 1, 1}};
  const Bytes first = calibrated_profile(space);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_EQ(calibrated_profile(space), first);
}

}  // namespace
}  // namespace lighten
