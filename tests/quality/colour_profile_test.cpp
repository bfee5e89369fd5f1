// Images read through their ICC profiles: profiles made here by Little CMS, the conversion
// checked against Little CMS's own transforms, and the metric's response to it.
#include "quality/colour_profile.h"

#include <gtest/gtest.h>
#include <lcms2.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <random>
#include <vector>

#include "lighten/compare.h"
#include "quality/image.h"
#include "quality/ssimulacra2.h"
#include "quality/xyb.h"
#include "support/icc_profiles.h"
#include "support/jpeg_maker.h"
#include "support/png_maker.h"

namespace lighten {
namespace {

using testing::adobe_rgb_profile, testing::kD65, testing::kSrgbPrimaries,
    testing::prophoto_rgb_profile, testing::rgb_profile, testing::saved_profile,
    testing::with_icc_segment;

// Every colour of a 9-step grid (one channel: every gray; four: every 51st code value).
std::vector<uint8_t> grid(uint32_t channels) {
  std::vector<uint8_t> out;
  if (channels == 1) {
    for (int v = 0; v < 256; ++v) out.push_back(uint8_t(v));
    return out;
  }
  if (channels == 4) {
    for (int c = 0; c < 256; c += 51)
      for (int m = 0; m < 256; m += 51)
        for (int y = 0; y < 256; y += 51)
          for (int k = 0; k < 256; k += 17)
            out.insert(out.end(), {uint8_t(c), uint8_t(m), uint8_t(y), uint8_t(k)});
    return out;
  }
  for (int r = 0; r < 256; r += 32)
    for (int g = 0; g < 256; g += 32)
      for (int b = 0; b < 256; b += 32) out.insert(out.end(), {uint8_t(r), uint8_t(g), uint8_t(b)});
  return out;
}

// Little CMS's own transform of `samples` to linear sRGB (interleaved).
std::vector<float> little_cms_linear(const std::vector<uint8_t>& icc, uint32_t channels,
                                     const std::vector<uint8_t>& samples) {
  cmsHPROFILE in = cmsOpenProfileFromMem(icc.data(), cmsUInt32Number(icc.size()));
  cmsToneCurve* straight = cmsBuildGamma(nullptr, 1.0);
  cmsToneCurve* curves[3] = {straight, straight, straight};
  cmsHPROFILE out = cmsCreateRGBProfile(&kD65, &kSrgbPrimaries, curves);
  const cmsUInt32Number format = channels == 1   ? TYPE_GRAY_8
                                 : channels == 3 ? TYPE_RGB_8
                                                 : TYPE_CMYK_8;
  cmsHTRANSFORM t =
      cmsCreateTransform(in, format, out, TYPE_RGB_FLT, INTENT_PERCEPTUAL, cmsFLAGS_NOOPTIMIZE);
  const size_t n = samples.size() / channels;
  std::vector<uint8_t> read = samples;
  if (channels == 4)  // CMYK samples hold 255 - ink
    for (uint8_t& v : read) v = uint8_t(255 - v);
  std::vector<float> linear(3 * n);
  cmsDoTransform(t, read.data(), linear.data(), cmsUInt32Number(n));
  cmsDeleteTransform(t);
  cmsFreeToneCurve(straight);
  cmsCloseProfile(in);
  cmsCloseProfile(out);
  return linear;
}

// The largest difference between ProfileColour's reading of the grid and Little CMS's.
double largest_difference(const ProfileColour& c, const std::vector<uint8_t>& icc) {
  const std::vector<uint8_t> samples = grid(c.channels());
  const size_t n = samples.size() / c.channels();
  std::vector<float> r(n), g(n), b(n);
  c.to_linear(samples.data(), n, r.data(), g.data(), b.data());
  const std::vector<float> expected = little_cms_linear(icc, c.channels(), samples);
  double worst = 0;
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < 3; ++k) {
      const float got = k == 0 ? r[i] : k == 1 ? g[i] : b[i];
      worst = std::max(worst, double(std::abs(got - expected[3 * i + k])));
    }
  return worst;
}

TEST(ProfileColour, SrgbAndUnreadableProfilesLeaveTheSamplesAsSrgb) {
  EXPECT_FALSE(ProfileColour::from_icc(saved_profile(cmsCreate_sRGBProfile()), 3));
  EXPECT_FALSE(ProfileColour::from_icc(saved_profile(rgb_profile(kSrgbPrimaries, kD65, 2.2)), 1));
  const std::vector<uint8_t> garbage(600, 0x5A);
  EXPECT_FALSE(ProfileColour::from_icc(garbage, 3));
  EXPECT_FALSE(ProfileColour::from_icc({}, 3));
  // Another data space than the samples': nothing to read them by.
  EXPECT_FALSE(ProfileColour::from_icc(saved_profile(cmsCreateLab4Profile(nullptr)), 3));
  EXPECT_FALSE(ProfileColour::from_icc(adobe_rgb_profile(), 1));
  EXPECT_FALSE(ProfileColour::from_icc(adobe_rgb_profile(), 4));
}

// A tone curve of gamma -1 takes code 0 to 1e22 (Little CMS's infinity): the metric reading
// through it scored NaN, which passed every floor as 100. Such a profile is not read, and a NaN
// scores worst.
TEST(ProfileColour, ProfilesWhoseCurvesReachInfinityAreNotRead) {
  ASSERT_TRUE(ProfileColour::from_icc(saved_profile(rgb_profile(kSrgbPrimaries, kD65, 1.0)), 3));
  EXPECT_FALSE(ProfileColour::from_icc(saved_profile(rgb_profile(kSrgbPrimaries, kD65, -1.0)), 3));
  cmsToneCurve* curve = cmsBuildGamma(nullptr, -1.0);
  const std::vector<uint8_t> gray = saved_profile(cmsCreateGrayProfile(&kD65, curve));
  cmsFreeToneCurve(curve);
  EXPECT_FALSE(ProfileColour::from_icc(gray, 1));
  // Nor one that reads every sample as one colour: a gamma of 0 (every code is white), a table
  // of one value, primaries on one line.
  EXPECT_FALSE(ProfileColour::from_icc(saved_profile(rgb_profile(kSrgbPrimaries, kD65, 0.0)), 3));
  cmsToneCurve* flat = cmsBuildGamma(nullptr, 0.0);
  const std::vector<uint8_t> flat_gray = saved_profile(cmsCreateGrayProfile(&kD65, flat));
  cmsFreeToneCurve(flat);
  EXPECT_FALSE(ProfileColour::from_icc(flat_gray, 1));
  const cmsUInt16Number level[2] = {32768, 32768};
  cmsToneCurve* constant = cmsBuildTabulatedToneCurve16(nullptr, 2, level);
  const std::vector<uint8_t> constant_gray = saved_profile(cmsCreateGrayProfile(&kD65, constant));
  cmsFreeToneCurve(constant);
  EXPECT_FALSE(ProfileColour::from_icc(constant_gray, 1));
  cmsHPROFILE one_colour = rgb_profile(kSrgbPrimaries, kD65, 2.2);
  const cmsCIEXYZ grey{0.3, 0.31, 0.26};
  for (const cmsTagSignature tag :
       {cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag})
    cmsWriteTag(one_colour, tag, &grey);
  EXPECT_FALSE(ProfileColour::from_icc(saved_profile(one_colour), 3));
  Ssimulacra2Scale unread;
  unread.ssim[0] = std::nan("");
  const std::vector<Ssimulacra2Scale> scales(6, unread);
  EXPECT_EQ(ssimulacra2_score(scales), -std::numeric_limits<double>::infinity());
}

// Wide-gamut RGB and a gamma 2.2 gray: the tone curves and matrix read as Little CMS reads them,
// and a saturated green of Adobe RGB lies outside sRGB (negative red), not clipped.
TEST(ProfileColour, MatrixShaperProfilesReadAsLittleCmsReadsThem) {
  for (const auto& icc : {adobe_rgb_profile(), prophoto_rgb_profile()}) {
    const std::optional<ProfileColour> c = ProfileColour::from_icc(icc, 3);
    ASSERT_TRUE(c);
    EXPECT_LT(largest_difference(*c, icc), 2e-4);
  }
  const std::optional<ProfileColour> green = ProfileColour::from_icc(adobe_rgb_profile(), 3);
  const uint8_t pixel[3] = {0, 255, 0};
  float r = 0, g = 0, b = 0;
  green->to_linear(pixel, 1, &r, &g, &b);
  EXPECT_LT(r, -0.1f);
  EXPECT_GT(g, 0.9f);

  cmsToneCurve* gamma = cmsBuildGamma(nullptr, 2.2);
  const std::vector<uint8_t> gray = saved_profile(cmsCreateGrayProfile(cmsD50_xyY(), gamma));
  cmsFreeToneCurve(gamma);
  const std::optional<ProfileColour> c = ProfileColour::from_icc(gray, 1);
  ASSERT_TRUE(c);
  EXPECT_LT(largest_difference(*c, gray), 2e-4);
}

// Little CMS's transform to XYZ of `space` (an RGB profile), as a 16-bit sampler of a table.
cmsInt32Number sample_xyz(const cmsUInt16Number in[], cmsUInt16Number out[], void* transform) {
  cmsDoTransform(static_cast<cmsHTRANSFORM>(transform), in, out, 1);
  return 1;
}

// An RGB profile of lookup tables alone (no colorants or tone curves): Adobe RGB tabulated on a
// 33-point grid, as some scanners' and editors' profiles are.
std::vector<uint8_t> tabulated_adobe_rgb_profile() {
  const std::vector<uint8_t> icc = adobe_rgb_profile();
  cmsHPROFILE adobe = cmsOpenProfileFromMem(icc.data(), cmsUInt32Number(icc.size()));
  cmsHPROFILE xyz = cmsCreateXYZProfile();
  cmsHTRANSFORM t = cmsCreateTransform(adobe, TYPE_RGB_16, xyz, TYPE_XYZ_16,
                                       INTENT_RELATIVE_COLORIMETRIC, cmsFLAGS_NOOPTIMIZE);
  std::vector<uint8_t> table =
      testing::table_profile(cmsSigDisplayClass, cmsSigRgbData, 3, 33, sample_xyz, t, nullptr);
  cmsDeleteTransform(t);
  cmsCloseProfile(xyz);
  cmsCloseProfile(adobe);
  return table;
}

TEST(ProfileColour, TableProfilesGoThroughLittleCms) {
  const std::vector<uint8_t> icc = tabulated_adobe_rgb_profile();
  const std::optional<ProfileColour> c = ProfileColour::from_icc(icc, 3);
  ASSERT_TRUE(c);
  // Sampled on a lattice of every 5th code value and interpolated: within about a quarter of the
  // step one code value makes at mid-gray in linear light (0.0005 measured).
  EXPECT_LT(largest_difference(*c, icc), 1e-3);
  // Within the table's interpolation of the profile it tabulates.
  const std::optional<ProfileColour> shaped = ProfileColour::from_icc(adobe_rgb_profile(), 3);
  const std::vector<uint8_t> samples = grid(3);
  const size_t n = samples.size() / 3;
  std::vector<float> a(3 * n), b(3 * n);
  c->to_linear(samples.data(), n, a.data(), a.data() + n, a.data() + 2 * n);
  shaped->to_linear(samples.data(), n, b.data(), b.data() + n, b.data() + 2 * n);
  double worst = 0;
  for (size_t i = 0; i < 3 * n; ++i) worst = std::max(worst, double(std::abs(a[i] - b[i])));
  EXPECT_LT(worst, 0.01);
  // With sRGB's colorants and curves beside it, the table is still what is read (it used to be
  // taken for sRGB, and its colours not read at all).
  cmsHPROFILE both = cmsOpenProfileFromMem(icc.data(), cmsUInt32Number(icc.size()));
  cmsHPROFILE srgb = cmsCreate_sRGBProfile();
  for (const cmsTagSignature tag :
       {cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag, cmsSigRedTRCTag,
        cmsSigGreenTRCTag, cmsSigBlueTRCTag})
    cmsWriteTag(both, tag, cmsReadTag(srgb, tag));
  const std::vector<uint8_t> with_matrix = saved_profile(both);
  cmsCloseProfile(srgb);
  const std::optional<ProfileColour> tabled = ProfileColour::from_icc(with_matrix, 3);
  ASSERT_TRUE(tabled);
  EXPECT_LT(largest_difference(*tabled, with_matrix), 1e-3);
}

// A CMYK profile (samples 255 - ink) sampled on its lattice reads as Little CMS's transform
// reads it, and unlike the rendering of CMYK without a profile (rgb_from_cmyk).
TEST(ProfileColour, CmykProfilesReadAsLittleCmsReadsThem) {
  const std::vector<uint8_t> icc = testing::printed_cmyk_profile();
  const std::optional<ProfileColour> c = ProfileColour::from_icc(icc, 4);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->description(), "Test press CMYK");
  // Sampled on every 15th code value of four inks: 0.003 off at most in linear light (mean 0.15
  // code values of sRGB on random colours, at most 1.6; 0.25 and 7 in deep shadows for the SWOP
  // profile of the corpus).
  EXPECT_LT(largest_difference(*c, icc), 5e-3);
  EXPECT_FALSE(ProfileColour::from_icc(icc, 3));
  // No ink reads as the paper's white; full cyan as a colour with far less red than green.
  const uint8_t paper[4] = {255, 255, 255, 255}, cyan[4] = {0, 255, 255, 255};
  float r = 0, g = 0, b = 0;
  c->to_linear(paper, 1, &r, &g, &b);
  EXPECT_NEAR(r, 1.0f, 0.01f);
  EXPECT_NEAR(b, 1.0f, 0.01f);
  c->to_linear(cyan, 1, &r, &g, &b);
  EXPECT_LT(r, 0.1f);
  EXPECT_GT(g, 0.5f);
  // Without the profile, that cyan reads as (0, 255, 255): green as bright as white.
  SampleBuffer naive(std::begin(cyan), std::end(cyan));
  rgb_from_cmyk(naive);
  EXPECT_EQ(naive[1], 255);
}

// The same errors in a wider gamut are larger differences of colour: read through ProPhoto RGB,
// a colourful image and its noisy copy score lower than read as sRGB; through a profile read as
// sRGB's own, the same.
TEST(ProfileColour, TheMetricReadsBothImagesThroughTheProfile) {
  ImageRgb8 a{96, 96, 3, {}}, b{96, 96, 3, {}};
  a.samples.resize(96 * 96 * 3);
  b.samples.resize(96 * 96 * 3);
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 6);
  for (size_t i = 0; i < a.samples.size(); ++i) {
    const size_t x = (i / 3) % 96, y = i / 3 / 96, c = i % 3;
    a.samples[i] = uint8_t(c == 0 ? 40 + 2 * x : c == 1 ? 200 - y : 30 + x + y);
    b.samples[i] = uint8_t(std::clamp(a.samples[i] + noise(rng), 0.0, 255.0));
  }
  const std::optional<ProfileColour> wide = ProfileColour::from_icc(prophoto_rgb_profile(), 3);
  ASSERT_TRUE(wide);
  const double as_srgb = ssimulacra2(a, b, {.tile_size = 0}).score;
  const double as_prophoto =
      ssimulacra2(a, b, {.tile_size = 0, .reference_colour = &*wide, .distorted_colour = &*wide})
          .score;
  EXPECT_LT(as_prophoto, as_srgb - 1.0) << as_srgb;
  EXPECT_NEAR(ssimulacra2(a, a, {.reference_colour = &*wide, .distorted_colour = &*wide}).score,
              100.0, 1e-9);
  ImageRgb8 gray{96, 96, 1, {}};
  gray.samples.resize(96 * 96);
  EXPECT_THROW(ssimulacra2(gray, gray, {.distorted_colour = &*wide}), std::invalid_argument);
}

// `lighten compare` reads each image through the ICC profile it carries (JPEG APP2, PNG iCCP):
// the same samples read through ProPhoto RGB on one side only are different colours, and a pair
// read through it on both sides scores otherwise than read as sRGB.
TEST(Compare, ReadsEachImageThroughItsOwnProfile) {
  const std::vector<uint8_t> icc = prophoto_rgb_profile();
  const auto good = testing::make_jpeg({.width = 96, .height = 64, .quality = 95});
  const auto poor = testing::make_jpeg({.width = 96, .height = 64, .quality = 20});
  EXPECT_NEAR(
      *compare_images(with_icc_segment(good, icc), with_icc_segment(good, icc), false).ssimulacra2,
      100, 1e-6);
  EXPECT_LT(*compare_images(with_icc_segment(good, icc), good, false).ssimulacra2, 99);
  const double as_srgb = *compare_images(good, poor, false).ssimulacra2;
  const double managed =
      *compare_images(with_icc_segment(good, icc), with_icc_segment(poor, icc), false).ssimulacra2;
  EXPECT_GT(std::abs(managed - as_srgb), 0.5) << as_srgb;

  // butteraugli reads them alike (libjxl takes the profile's linear sRGB as floats).
  const ImageScores plain_pair = compare_images(good, poor, true);
  const ImageScores managed_pair =
      compare_images(with_icc_segment(good, icc), with_icc_segment(poor, icc), true);
  if (plain_pair.butteraugli) {  // built with libjxl
    ASSERT_TRUE(managed_pair.butteraugli);
    EXPECT_GT(std::abs(*managed_pair.butteraugli - *plain_pair.butteraugli), 0.05)
        << *plain_pair.butteraugli;
    EXPECT_NEAR(
        *compare_images(with_icc_segment(good, icc), with_icc_segment(good, icc), true).butteraugli,
        0.0, 1e-6);
  }

  const auto png = testing::make_png({});
  const auto png_managed = testing::make_png({.text = "", .icc = icc});
  EXPECT_NEAR(*compare_images(png_managed, png_managed, false).ssimulacra2, 100, 1e-6);
  EXPECT_LT(*compare_images(png_managed, png, false).ssimulacra2, 99);
}

// CMYK JPEGs with a CMYK profile are read through it by both metrics; without one, rendered by
// rgb_from_cmyk as before.
TEST(Compare, ReadsCmykThroughItsProfile) {
  const std::vector<uint8_t> icc = testing::printed_cmyk_profile();
  const auto good = testing::make_jpeg({.width = 96, .height = 64, .components = 4, .quality = 95});
  const auto poor = testing::make_jpeg({.width = 96, .height = 64, .components = 4, .quality = 30});
  const ImageScores rendered = compare_images(good, poor, true);
  const ImageScores managed =
      compare_images(with_icc_segment(good, icc), with_icc_segment(poor, icc), true);
  ASSERT_TRUE(rendered.ssimulacra2 && managed.ssimulacra2);
  EXPECT_GT(std::abs(*managed.ssimulacra2 - *rendered.ssimulacra2), 1.0) << *rendered.ssimulacra2;
  EXPECT_NEAR(
      *compare_images(with_icc_segment(good, icc), with_icc_segment(good, icc), false).ssimulacra2,
      100, 1e-6);
  // The profile on one side only: the same samples read as other colours.
  EXPECT_LT(*compare_images(with_icc_segment(good, icc), good, false).ssimulacra2, 90);
  if (rendered.butteraugli) {  // built with libjxl
    ASSERT_TRUE(managed.butteraugli);
    EXPECT_GT(std::abs(*managed.butteraugli - *rendered.butteraugli), 0.05)
        << *rendered.butteraugli;
  }
}

}  // namespace
}  // namespace lighten
