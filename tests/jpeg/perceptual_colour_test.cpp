// Perceptual modes on JPEGs that are not YCbCr: RGB-coded (Adobe transform 0), CMYK and YCCK.
// The metric reads CMYK through its ICC profile, or rendered as RGB without one; everything else
// is as for YCbCr photos. And JPEGs whose ICC profile says what their planes are.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "formats/jpeg/coefficients.h"
#include "formats/jpeg/jpeg_format.h"
#include "formats/jpeg/markers.h"
#include "formats/jpeg/metadata.h"
#include "formats/jpeg/perceptual.h"
#include "formats/jpeg/subsampling.h"
#include "lighten/compare.h"
#include "lighten/lighten.h"
#include "quality/floor_score.h"
#include "support/icc_profiles.h"
#include "support/jpeg_maker.h"
#include "test_support.h"

namespace lighten::jpeg {
namespace {

struct ColourCase {
  const char* name;
  int components;
  J_COLOR_SPACE space;
  int width, height;
};

// Each is requantised in high and compact, keeps its colour space, components, size and Adobe
// marker, meets the floor by lighten compare on the final bytes (CMYK rendered as PIL renders
// it), and is left alone by a second run. The 3 MP one is searched on a sample of its rows,
// written without markers and read back as YCCK (libjpeg would take it for CMYK).
TEST(Perceptual, RgbAndCmykJpegsAreRequantisedToo) {
  for (const ColourCase& c :
       {ColourCase{"RGB", 3, JCS_RGB, 320, 240}, ColourCase{"CMYK", 4, JCS_CMYK, 320, 240},
        ColourCase{"YCCK", 4, JCS_YCCK, 320, 240},
        ColourCase{"YCCK, 3 MP", 4, JCS_YCCK, 2048, 1536}}) {
    const auto jpeg = testing::make_jpeg({.width = c.width,
                                          .height = c.height,
                                          .components = c.components,
                                          .quality = 97,
                                          .markers = {},
                                          .luma_sampling = 1,
                                          .color_space = c.space});
    ASSERT_FALSE(jpeg.empty()) << c.name;
    ASSERT_EQ(CoefficientImage(jpeg, nullptr).info().jpeg_color_space, c.space) << c.name;
    for (Mode mode : {Mode::kHigh, Mode::kCompact}) {
      SCOPED_TRACE(fmt::format("{}, {}", c.name, mode == Mode::kHigh ? "high" : "compact"));
      Policy p;
      p.mode = mode;
      const Outcome o = optimize(jpeg, p);
      ASSERT_TRUE(o.replaced()) << o.message;
      EXPECT_NE(o.detail.find("requantised"), std::string::npos) << o.detail;
      if (c.width * c.height >= 3'000'000) {
        EXPECT_NE(o.detail.find("quarter of the rows"), std::string::npos) << o.detail;
      }
      EXPECT_LT(o.bytes.size(), jpeg.size());
      CoefficientImage out(o.bytes, nullptr);
      EXPECT_EQ(out.info().jpeg_color_space, c.space);
      EXPECT_EQ(out.info().num_components, c.components);
      EXPECT_EQ(out.info().image_width, unsigned(c.width));
      EXPECT_TRUE(out.info().saw_Adobe_marker);
      EXPECT_TRUE(has_quality_marker(parse_layout(o.bytes)));
      EXPECT_GE(compare_images(jpeg, o.bytes, false).floor_score, quality_floor(p));
      const Outcome again = optimize(o.bytes, p);
      EXPECT_FALSE(again.replaced() && !again.quality.pixels_identical) << again.detail;
    }
  }
}

// The transform byte of the JPEG's Adobe segment; -1 without one.
int adobe_transform_byte(const std::vector<uint8_t>& jpeg) {
  for (const Segment& s : parse_layout(jpeg).segments)
    if (const std::optional<uint8_t> t = adobe_transform(s)) return *t;
  return -1;
}

// A 320x240 photo-like image with smooth chroma, coded as RGB planes at q97.
std::vector<uint8_t> smooth_rgb_jpeg(bool adobe_marker) {
  return testing::make_jpeg({.width = 320,
                             .height = 240,
                             .quality = 97,
                             .markers = {},
                             .luma_sampling = 1,
                             .smooth_chroma = true,
                             .color_space = JCS_RGB,
                             .adobe_marker = adobe_marker});
}

// RGB planes (Adobe transform 0) whose chroma is smooth: re-encoded from pixels as YCbCr 4:2:0,
// numbered 1, 2, 3, with the Adobe segment saying transform 1 (every other byte of it kept), so
// that libjpeg reads YCbCr; scored against the RGB decode. The verifier takes it only where the
// policy allows the re-encoding, and not with the segment left at 0.
TEST(Perceptual, AdobeRgbMayBecomeYCbCr420) {
  const auto jpeg = smooth_rgb_jpeg(true);
  ASSERT_FALSE(jpeg.empty());
  CoefficientImage source(jpeg, nullptr);
  ASSERT_TRUE(adobe_rgb(source));
  ASSERT_FALSE(chroma_finer_than_420(source));
  ASSERT_EQ(adobe_transform_byte(jpeg), 0);
  Policy p;
  p.mode = Mode::kHigh;
  const Outcome o = optimize(jpeg, p);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_NE(o.detail.find("re-encoded from pixels as YCbCr 4:2:0"), std::string::npos) << o.detail;
  CoefficientImage out(o.bytes, nullptr);
  const auto& info = out.info();
  EXPECT_EQ(info.jpeg_color_space, JCS_YCbCr);
  EXPECT_EQ(info.comp_info[0].h_samp_factor, 2);
  EXPECT_EQ(info.comp_info[0].v_samp_factor, 2);
  for (int ci = 0; ci < 3; ++ci) EXPECT_EQ(info.comp_info[ci].component_id, ci + 1);
  EXPECT_EQ(adobe_transform_byte(o.bytes), 1);
  EXPECT_TRUE(has_quality_marker(parse_layout(o.bytes)));
  EXPECT_GE(compare_images(jpeg, o.bytes, false).floor_score, quality_floor(p));
  // Decoded independently, the colours are the source's: each channel's mean within a level
  // (YCbCr read as RGB, or the reverse, moves them by tens).
  const testing::Decoded a = testing::decode(jpeg), b = testing::decode(o.bytes);
  ASSERT_TRUE(a.ok && b.ok);
  ASSERT_EQ(a.samples.size(), b.samples.size());
  for (size_t c = 0; c < 3; ++c) {
    double sum_a = 0, sum_b = 0;
    for (size_t i = c; i < a.samples.size(); i += 3) sum_a += a.samples[i], sum_b += b.samples[i];
    EXPECT_NEAR(sum_a / double(a.samples.size() / 3), sum_b / double(b.samples.size() / 3), 1.0)
        << "channel " << c;
  }

  EXPECT_TRUE(verify_jpeg(jpeg, o.bytes, p, std::nullopt, std::nullopt).ok);
  Policy keep = p;
  keep.jpeg_subsampling = SubsamplingPolicy::kKeep;
  EXPECT_FALSE(verify_jpeg(jpeg, o.bytes, keep, std::nullopt, std::nullopt).ok);
  std::vector<uint8_t> left_rgb = o.bytes;
  const Layout layout = parse_layout(left_rgb);
  for (const Segment& s : layout.segments)
    if (s.marker == 0xEE) left_rgb[s.offset + 4 + 11] = 0;
  EXPECT_FALSE(verify_jpeg(jpeg, left_rgb, p, std::nullopt, std::nullopt).ok);

  const Outcome again = optimize(o.bytes, p);
  EXPECT_FALSE(again.replaced() && !again.quality.pixels_identical) << again.detail;

  // Kept sampling keeps the planes RGB.
  const Outcome kept = optimize(jpeg, keep);
  ASSERT_TRUE(kept.replaced()) << kept.message;
  EXPECT_EQ(CoefficientImage(kept.bytes, nullptr).info().jpeg_color_space, JCS_RGB);
  EXPECT_EQ(adobe_transform_byte(kept.bytes), 0);
}

// The verifier lets the Adobe transform byte change only where RGB planes were re-encoded as
// YCbCr: a YCbCr photo whose JFIF segment outweighs an Adobe segment saying 0 (libjpeg reads
// YCbCr, some PDF viewers RGB) keeps that byte as it was.
TEST(Perceptual, OnlyRecodedRgbMayChangeTheAdobeTransform) {
  const std::string adobe("Adobe\x00\x64\x00\x00\x00\x00\x00", 12);
  const auto jpeg = testing::make_jpeg(
      {.width = 320, .height = 240, .quality = 97, .markers = {{JPEG_APP0 + 14, adobe}}});
  ASSERT_FALSE(jpeg.empty());
  ASSERT_EQ(adobe_transform_byte(jpeg), 0);
  CoefficientImage source(jpeg, nullptr);
  ASSERT_EQ(source.info().jpeg_color_space, JCS_YCbCr);
  ASSERT_FALSE(adobe_rgb(source));
  Policy p;
  p.mode = Mode::kHigh;
  const Outcome o = optimize(jpeg, p);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(adobe_transform_byte(o.bytes), 0);
  EXPECT_TRUE(verify_jpeg(jpeg, o.bytes, p, std::nullopt, std::nullopt).ok);
  std::vector<uint8_t> flipped = o.bytes;
  for (const Segment& s : parse_layout(flipped).segments)
    if (s.marker == 0xEE) flipped[s.offset + 4 + 11] = 1;
  EXPECT_EQ(adobe_transform_byte(flipped), 1);
  EXPECT_FALSE(verify_jpeg(jpeg, flipped, p, std::nullopt, std::nullopt).ok);
}

// RGB known only by its component identifiers (no Adobe segment) stays RGB: a PDF viewer would
// take such planes for YCbCr, libjpeg for RGB, and no segment says which the re-encoding is.
TEST(Perceptual, RgbWithoutAdobeSegmentStaysRgb) {
  const auto jpeg = smooth_rgb_jpeg(false);
  ASSERT_FALSE(jpeg.empty());
  CoefficientImage source(jpeg, nullptr);
  ASSERT_EQ(source.info().jpeg_color_space, JCS_RGB);
  ASSERT_FALSE(source.info().saw_Adobe_marker);
  EXPECT_FALSE(adobe_rgb(source));
  Policy p;
  p.mode = Mode::kHigh;
  const Outcome o = optimize(jpeg, p);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(o.detail.find("re-encoded"), std::string::npos) << o.detail;
  EXPECT_EQ(CoefficientImage(o.bytes, nullptr).info().jpeg_color_space, JCS_RGB);
}

// The first chunk of an ICC profile (APP2 payload) declaring `space` as its data colour space.
std::string icc_chunk(const char (&space)[5]) {
  std::string profile(128, '\0');
  profile.replace(16, 4, space, 4);
  return std::string("ICC_PROFILE\0\x01\x01", 14) + profile;
}

// A colour-managed viewer shows the planes as the ICC profile says: where it says other samples
// than the decode the metric reads (Lab planes decoded as if YCbCr, a gray profile on three
// planes), the file is optimised losslessly, with the reason; a profile of the decode's own kind
// leaves the search as it was.
TEST(Perceptual, ProfilesOfOtherSamplesKeepTheFileLossless) {
  struct Case {
    const char* space;
    int components;
    bool requantised;
  };
  for (const Case& c :
       {Case{"RGB ", 3, true}, Case{"GRAY", 1, true}, Case{"CMYK", 4, true}, Case{"Lab ", 3, false},
        Case{"GRAY", 3, false}, Case{"RGB ", 1, false}, Case{"RGB ", 4, false}}) {
    SCOPED_TRACE(fmt::format("'{}' on {} components", c.space, c.components));
    char space[5] = {};
    std::copy_n(c.space, 4, space);
    const auto jpeg = testing::make_jpeg({.width = 320,
                                          .height = 240,
                                          .components = c.components,
                                          .quality = 97,
                                          .markers = {{JPEG_APP0 + 2, icc_chunk(space)}},
                                          .luma_sampling = 1});
    ASSERT_FALSE(jpeg.empty());
    ASSERT_EQ(icc_data_space(parse_layout(jpeg)), std::string(c.space));
    for (Mode mode : {Mode::kHigh, Mode::kCompact}) {
      Policy p;
      p.mode = mode;
      const Outcome o = optimize(jpeg, p);
      if (c.requantised) {
        ASSERT_TRUE(o.replaced()) << o.message;
        EXPECT_NE(o.detail.find("requantised"), std::string::npos) << o.detail;
        continue;
      }
      EXPECT_NE(o.detail.find(
                    fmt::format("lossless only (its ICC profile declares '{}' samples", c.space)),
                std::string::npos)
          << o.detail;
      EXPECT_EQ(o.detail.find("re-encoded"), std::string::npos) << o.detail;
      if (o.replaced()) {
        EXPECT_TRUE(o.quality.pixels_identical);
        EXPECT_FALSE(has_quality_marker(parse_layout(o.bytes)));
      }
    }
  }
}

// The verifier holds the same line: a requantised output of a photo with an RGB profile passes,
// the same pair with the profile saying Lab (on both sides, so the metadata still match) fails.
TEST(Perceptual, VerifierRefusesRequantisedImagesOfOtherSamples) {
  const auto jpeg = testing::make_jpeg({.width = 320,
                                        .height = 240,
                                        .quality = 97,
                                        .markers = {{JPEG_APP0 + 2, icc_chunk("RGB ")}},
                                        .luma_sampling = 1});
  Policy p;
  p.mode = Mode::kHigh;
  p.jpeg_subsampling = SubsamplingPolicy::kKeep;
  const Outcome o = optimize(jpeg, p);
  ASSERT_TRUE(o.replaced()) << o.message;
  ASSERT_FALSE(o.quality.pixels_identical) << o.detail;
  EXPECT_TRUE(verify_jpeg(jpeg, o.bytes, p, std::nullopt, std::nullopt).ok);
  auto as_lab = [](std::vector<uint8_t> bytes) {
    for (const Segment& s : parse_layout(bytes).segments)
      if (s.marker == 0xE2) std::copy_n("Lab ", 4, bytes.begin() + long(s.offset + 4 + 14 + 16));
    return bytes;
  };
  const auto lab_in = as_lab(jpeg), lab_out = as_lab(o.bytes);
  ASSERT_EQ(icc_data_space(parse_layout(lab_out)), std::string("Lab "));
  const Verdict v = verify_jpeg(lab_in, lab_out, p, std::nullopt, std::nullopt);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.problem.find("ICC profile"), std::string::npos) << v.problem;
}

// SSIMULACRA2 (floor score) of `b` against `a` as the metric reads them through `colour`.
double score_through(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                     const ProfileColour* colour) {
  const std::optional<ImageRgb8> x = to_metric_image(decode_pixels(a), colour);
  const std::optional<ImageRgb8> y = to_metric_image(decode_pixels(b), colour);
  return floor_score(*x, *y, {.reference_colour = colour, .distorted_colour = colour}).score;
}

// A 320x240 4:4:4 photo of broad hues at quality 97, without metadata.
std::vector<uint8_t> colourful_444_q97() {
  return testing::make_jpeg({.width = 320,
                             .height = 240,
                             .quality = 97,
                             .markers = {},
                             .luma_sampling = 1,
                             .pixels = testing::colourful_pixels()});
}

// A viewer shows the samples of a ProPhoto RGB photo as more saturated colours than sRGB's, so
// the same errors look larger: the search and the verifier read the pixels through the profile.
// The output meets the floor so read; the output made for the same pixels read as sRGB falls
// under it, and the verifier refuses it once both files carry the profile.
TEST(Perceptual, PixelsAreScoredThroughAWideGamutProfile) {
  const std::vector<uint8_t> plain = colourful_444_q97();
  ASSERT_FALSE(plain.empty());
  const std::vector<uint8_t> profile = testing::prophoto_rgb_profile();
  const std::vector<uint8_t> jpeg = testing::with_icc_segment(plain, profile);
  const std::optional<ProfileColour> colour = metric_colour(parse_layout(jpeg), 3, Policy{});
  ASSERT_TRUE(colour);
  Policy p;
  p.mode = Mode::kCompact;
  const Outcome o = optimize(jpeg, p);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_NE(o.detail.find("colours read through the ICC profile"), std::string::npos) << o.detail;
  EXPECT_GE(score_through(jpeg, o.bytes, &*colour), 70.0);

  const Outcome as_srgb = optimize(plain, p);
  ASSERT_TRUE(as_srgb.replaced()) << as_srgb.message;
  EXPECT_EQ(as_srgb.detail.find("ICC profile"), std::string::npos) << as_srgb.detail;
  EXPECT_LT(as_srgb.bytes.size(), o.bytes.size());
  EXPECT_GE(score_through(plain, as_srgb.bytes, nullptr), 70.0);
  EXPECT_LT(score_through(plain, as_srgb.bytes, &*colour), 70.0);
  const Verdict v = verify_jpeg(jpeg, testing::with_icc_segment(as_srgb.bytes, profile), p,
                                std::nullopt, std::nullopt);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.problem.find("under the floor"), std::string::npos) << v.problem;
  EXPECT_TRUE(verify_jpeg(jpeg, o.bytes, p, std::nullopt, std::nullopt).ok);
}

// A profile whose curves reach 1e22 (gamma -1) once made every candidate score NaN, taken for
// 100: the search went to its coarsest tables. It is read as no profile, and the floor holds.
// So does one that reads every sample as one colour (a gamma of 0): every candidate scored 100
// through it, and compact wrote a q10 photo that scores 50 as it reads without it.
TEST(Perceptual, AProfileTheMetricCannotReadDoesNotPassEveryCandidate) {
  const std::vector<uint8_t> plain = colourful_444_q97();
  for (const double gamma : {-1.0, 0.0}) {
    SCOPED_TRACE(gamma);
    const std::vector<uint8_t> jpeg =
        testing::with_icc_segment(plain, testing::saved_profile(testing::rgb_profile(
                                             testing::kSrgbPrimaries, testing::kD65, gamma)));
    EXPECT_FALSE(metric_colour(parse_layout(jpeg), 3, Policy{}));
    Policy p;
    p.mode = Mode::kHigh;
    const Outcome o = optimize(jpeg, p);
    ASSERT_TRUE(o.replaced()) << o.message;
    ASSERT_TRUE(o.quality.ssimulacra2.has_value());
    EXPECT_TRUE(std::isfinite(*o.quality.ssimulacra2));
    EXPECT_GE(score_through(jpeg, o.bytes, nullptr), 80.0);
    EXPECT_LT(*o.quality.ssimulacra2, 99.0);
  }
}

// CMYK samples (255 - ink) of broad hues and a ripple: testing::colourful_pixels as the inks'
// complements, over a black plate that varies across the image.
std::vector<uint8_t> colourful_cmyk() {
  const std::vector<uint8_t> rgb = testing::colourful_pixels();
  std::vector<uint8_t> cmyk(320 * 240 * 4);
  for (size_t i = 0; i < 320 * 240; ++i) {
    std::copy_n(rgb.begin() + long(3 * i), 3, cmyk.begin() + long(4 * i));
    cmyk[4 * i + 3] = uint8_t(255 - (i % 320) * 80 / 320);
  }
  return cmyk;
}

// A CMYK JPEG carrying a press profile is read through it, as a colour-managed viewer shows it:
// the output meets the floor so read (by the optimiser, the verifier and lighten compare) and
// the detail names the profile. Rendered without it (rgb_from_cmyk), the samples are other
// colours, and the same output scores otherwise.
TEST(Perceptual, CmykIsScoredThroughItsProfile) {
  const std::vector<uint8_t> plain = testing::make_jpeg({.width = 320,
                                                         .height = 240,
                                                         .components = 4,
                                                         .quality = 97,
                                                         .markers = {},
                                                         .luma_sampling = 1,
                                                         .pixels = colourful_cmyk(),
                                                         .color_space = JCS_CMYK});
  ASSERT_FALSE(plain.empty());
  const std::vector<uint8_t> jpeg =
      testing::with_icc_segment(plain, testing::printed_cmyk_profile());
  const std::optional<ProfileColour> colour = metric_colour(parse_layout(jpeg), 4, Policy{});
  ASSERT_TRUE(colour);
  for (Mode mode : {Mode::kHigh, Mode::kCompact}) {
    Policy p;
    p.mode = mode;
    const Outcome o = optimize(jpeg, p);
    ASSERT_TRUE(o.replaced()) << o.message;
    EXPECT_NE(o.detail.find("colours read through the ICC profile \"Test press CMYK\""),
              std::string::npos)
        << o.detail;
    const double through = score_through(jpeg, o.bytes, &*colour);
    EXPECT_GE(through, quality_floor(p));
    EXPECT_NEAR(*compare_images(jpeg, o.bytes, false).ssimulacra2, through, 0.5);
    EXPECT_TRUE(verify_jpeg(jpeg, o.bytes, p, std::nullopt, std::nullopt).ok);
    const Outcome again = optimize(o.bytes, p);
    EXPECT_FALSE(again.replaced() && !again.quality.pixels_identical) << again.detail;

    // Rendered without the profile, the same output is scored far apart (here 9-10 points
    // lower: the profile's inks absorb less than rgb_from_cmyk's), and the same samples without
    // a profile are searched by that rendering.
    EXPECT_GT(std::abs(score_through(jpeg, o.bytes, nullptr) - through), 3.0);
    const Outcome rendered = optimize(plain, p);
    ASSERT_TRUE(rendered.replaced()) << rendered.message;
    EXPECT_EQ(rendered.detail.find("ICC profile"), std::string::npos) << rendered.detail;
    EXPECT_GE(score_through(plain, rendered.bytes, nullptr), quality_floor(p));
  }
}

// The verifier takes the optimiser's score for an output of the same coefficients only where
// both read the pixels alike: the same bytes shown through another colour space (a PDF's images)
// are scored again.
TEST(Perceptual, TheVerifierTakesAScoreOnlyAsItWasRead) {
  const auto jpeg = testing::make_jpeg({.width = 320, .height = 240, .quality = 97, .markers = {}});
  Policy p;
  p.mode = Mode::kHigh;
  const Outcome o = optimize(jpeg, p);
  ASSERT_TRUE(o.replaced()) << o.message;
  const auto prophoto = std::make_shared<const Bytes>(testing::prophoto_rgb_profile());
  const auto device = std::make_shared<const Bytes>();
  CoefficientImage output(o.bytes, nullptr);
  const ScoredFingerprint scored{fingerprint_coefficients(output), 99.5, 99.5, prophoto};
  auto checked_score = [&](std::shared_ptr<const Bytes> shown_through) {
    Policy read = p;
    read.jpeg_shown_through = std::move(shown_through);
    const Verdict v = verify_jpeg(jpeg, o.bytes, read, std::nullopt, scored);
    EXPECT_TRUE(v.ok) << v.problem;
    return v.quality.ssimulacra2.value_or(0);
  };
  EXPECT_EQ(checked_score(std::make_shared<const Bytes>(*prophoto)), 99.5);
  EXPECT_LT(checked_score(device), 99);
  EXPECT_LT(checked_score(nullptr), 99);
}

}  // namespace
}  // namespace lighten::jpeg
