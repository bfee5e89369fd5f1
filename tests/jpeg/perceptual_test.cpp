// Perceptual modes end to end through the public optimize(): every output meets its floor by
// lighten's metric on the final bytes, keeps dimensions, components and metadata, carries the
// quality marker, and a second run changes nothing.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>

#include "formats/jpeg/coefficients.h"
#include "formats/jpeg/jpeg_format.h"
#include "formats/jpeg/markers.h"
#include "formats/jpeg/perceptual.h"
#include "formats/jpeg/requantize.h"
#include "formats/jpeg/subsampling.h"
#include "lighten/compare.h"
#include "lighten/lighten.h"
#include "perceptual_checks.h"
#include "support/corpus.h"
#include "test_support.h"

namespace lighten::jpeg {
namespace {

TEST(Perceptual, SyntheticImageMeetsEachFloor) {
  const auto jpeg = testing::make_jpeg({.width = 400, .height = 300, .quality = 97, .markers = {}});
  for (Mode mode : {Mode::kVisuallyLossless, Mode::kHigh, Mode::kCompact}) {
    Policy p;
    p.mode = mode;
    check_perceptual(jpeg, p, "synthetic " + std::to_string(int(mode)));
  }
}

TEST(Perceptual, TargetScoreIsAFloorToo) {
  const auto jpeg = testing::make_jpeg({.width = 256, .height = 256, .quality = 95, .markers = {}});
  Policy p;
  p.mode = Mode::kHigh;
  p.target_score = 90;
  const Outcome o = optimize(jpeg, p);
  if (o.replaced() && !o.quality.pixels_identical) {
    EXPECT_GE(*o.quality.ssimulacra2, 90.0);
  }
}

// A 4:4:4 photo also searched as 4:2:0 from its pixels: the smaller output wins, scored against
// the original by an independent decode; --jpeg-subsampling keep keeps the sampling; a second
// run does no lossy work; the verifier takes the new sampling only where the policy allows it.
TEST(Perceptual, FullResolutionChromaMayBecomeHalfResolution) {
  const auto jpeg = testing::make_jpeg({.width = 320,
                                        .height = 240,
                                        .quality = 97,
                                        .markers = {},
                                        .luma_sampling = 1,
                                        .smooth_chroma = true});
  Policy p;
  p.mode = Mode::kHigh;
  const Outcome o = optimize(jpeg, p);
  ASSERT_TRUE(o.replaced()) << o.message;
  CoefficientImage out(o.bytes, nullptr);
  EXPECT_EQ(out.info().comp_info[0].h_samp_factor, 2) << o.detail;
  EXPECT_EQ(out.info().comp_info[0].v_samp_factor, 2) << o.detail;
  EXPECT_NE(o.detail.find("re-encoded from pixels as 4:2:0"), std::string::npos) << o.detail;
  // Under 256 pixels a side the reported score is the floor's (the lower of the plain one and
  // the one mirrored out to 256 px).
  const ImageScores scores = compare_images(jpeg, o.bytes, false);
  EXPECT_GE(scores.floor_score, 80.0);
  ASSERT_TRUE(o.quality.ssimulacra2.has_value());
  EXPECT_NEAR(scores.floor_score, *o.quality.ssimulacra2, 0.01);

  Policy keep = p;
  keep.jpeg_subsampling = SubsamplingPolicy::kKeep;
  const Outcome k = optimize(jpeg, keep);
  ASSERT_TRUE(k.replaced()) << k.message;
  CoefficientImage kept(k.bytes, nullptr);
  EXPECT_EQ(kept.info().comp_info[0].h_samp_factor, 1);
  EXPECT_LT(o.bytes.size(), k.bytes.size());
  EXPECT_FALSE(verify_jpeg(jpeg, o.bytes, keep, std::nullopt, std::nullopt).ok);
  EXPECT_TRUE(verify_jpeg(jpeg, o.bytes, p, std::nullopt, std::nullopt).ok);

  const Outcome again = optimize(o.bytes, p);
  EXPECT_FALSE(again.replaced() && !again.quality.pixels_identical) << again.detail;
}

// 4:2:2 (chroma at half width, full height) may become 4:2:0 as well; 4:2:0 never changes.
TEST(Perceptual, HalfWidthChromaMayBecomeHalfHeightToo) {
  const auto jpeg = testing::make_jpeg({.width = 320,
                                        .height = 240,
                                        .quality = 97,
                                        .markers = {},
                                        .luma_sampling = 2,
                                        .luma_v_sampling = 1,
                                        .smooth_chroma = true});
  CoefficientImage source(jpeg, nullptr);
  ASSERT_TRUE(chroma_finer_than_420(source));
  Policy p;
  p.mode = Mode::kHigh;
  const Outcome o = optimize(jpeg, p);
  ASSERT_TRUE(o.replaced()) << o.message;
  CoefficientImage out(o.bytes, nullptr);
  EXPECT_EQ(out.info().comp_info[0].v_samp_factor, 2) << o.detail;
  EXPECT_NE(o.detail.find("re-encoded from pixels as 4:2:0"), std::string::npos) << o.detail;
  EXPECT_GE(compare_images(jpeg, o.bytes, false).ssimulacra2, 80.0);
  Policy keep = p;
  keep.jpeg_subsampling = SubsamplingPolicy::kKeep;
  EXPECT_FALSE(verify_jpeg(jpeg, o.bytes, keep, std::nullopt, std::nullopt).ok);
  EXPECT_TRUE(verify_jpeg(jpeg, o.bytes, p, std::nullopt, std::nullopt).ok);
  EXPECT_FALSE(chroma_finer_than_420(out));
}

// Adobe's encoders number the components 0, 1, 2: the 4:2:0 re-encode keeps the source's
// identifiers, or the verifier (rightly) rejects the output as a different frame.
TEST(Perceptual, ResampledFramesKeepTheComponentIdentifiers) {
  const auto jpeg = testing::make_jpeg({.width = 320,
                                        .height = 240,
                                        .quality = 97,
                                        .markers = {},
                                        .luma_sampling = 1,
                                        .smooth_chroma = true,
                                        .component_ids = {0, 1, 2}});
  Policy p;
  p.mode = Mode::kHigh;
  const Outcome o = optimize(jpeg, p);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_NE(o.detail.find("re-encoded from pixels as 4:2:0"), std::string::npos) << o.detail;
  CoefficientImage out(o.bytes, nullptr);
  for (int ci = 0; ci < 3; ++ci) EXPECT_EQ(out.info().comp_info[ci].component_id, ci);
  EXPECT_GE(compare_images(jpeg, o.bytes, false).ssimulacra2, 80.0);
}

// A YCbCr photo whose JFIF marker says YCbCr but whose components are numbered 'R', 'G', 'B':
// the JPEGs the search writes for itself carry no marker, and libjpeg would read them as RGB
// (every candidate far under the floor). They are read as the image they came from, so the
// output is the one the same photo numbered 1, 2, 3 gets, numbered as its source. Small 4:4:4
// and 4:2:0 sources, and a large one searched on a sample of its rows.
TEST(Perceptual, YCbCrNumberedRgbIsSearchedAsYCbCr) {
  const std::vector<int> rgb_ids = {'R', 'G', 'B'};
  for (auto [width, height, luma_sampling] :
       {std::tuple{320, 240, 1}, std::tuple{320, 240, 2}, std::tuple{2048, 1536, 2}}) {
    SCOPED_TRACE(fmt::format("{}x{}, luma sampling {}", width, height, luma_sampling));
    testing::EncodeOptions source{.width = width,
                                  .height = height,
                                  .quality = 97,
                                  .markers = {},
                                  .luma_sampling = luma_sampling,
                                  .smooth_chroma = true};
    const auto plain = testing::make_jpeg(source);
    source.component_ids = rgb_ids;
    const auto jpeg = testing::make_jpeg(source);
    ASSERT_EQ(CoefficientImage(jpeg, nullptr).info().jpeg_color_space, JCS_YCbCr);
    Policy p;
    p.mode = Mode::kHigh;
    const Outcome o = optimize(jpeg, p);
    ASSERT_TRUE(o.replaced()) << o.message;
    EXPECT_NE(o.detail.find("requantised"), std::string::npos) << o.detail;
    EXPECT_EQ(o.bytes.size(), optimize(plain, p).bytes.size()) << o.detail;
    CoefficientImage out(o.bytes, nullptr);
    EXPECT_EQ(out.info().jpeg_color_space, JCS_YCbCr);
    for (int ci = 0; ci < 3; ++ci) EXPECT_EQ(out.info().comp_info[ci].component_id, rgb_ids[ci]);
    EXPECT_GE(compare_images(jpeg, o.bytes, false).ssimulacra2, 80.0) << o.detail;
  }
}

// Images of 3 MP and more are searched on a quarter of their rows and confirmed on the whole:
// the floor holds on the final bytes all the same.
TEST(Perceptual, LargeImagesAreSearchedOnASampleOfRows) {
  const auto jpeg =
      testing::make_jpeg({.width = 2048, .height = 1536, .quality = 95, .markers = {}});
  Policy p;
  p.mode = Mode::kCompact;
  const Outcome o = optimize(jpeg, p);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_NE(o.detail.find("on a quarter of the rows"), std::string::npos) << o.detail;
  EXPECT_GE(compare_images(jpeg, o.bytes, false).ssimulacra2, quality_floor(p)) << o.detail;
}

// On a tiny image the new tables and the marker can cost more than the coarser coefficients save:
// the lossless output is kept where it is smaller.
TEST(Perceptual, ATinyImageIsNeverLargerThanItsLosslessOutput) {
  for (auto [width, height] : {std::pair{1, 1}, std::pair{7, 9}, std::pair{33, 17}}) {
    SCOPED_TRACE(std::to_string(width) + "x" + std::to_string(height));
    const auto jpeg =
        testing::make_jpeg({.width = width, .height = height, .quality = 95, .markers = {}});
    Policy lossless;
    lossless.mode = Mode::kLossless;
    const Outcome l = optimize(jpeg, lossless);
    ASSERT_TRUE(l.replaced()) << l.message;
    for (Mode mode : {Mode::kVisuallyLossless, Mode::kHigh, Mode::kCompact}) {
      Policy p;
      p.mode = mode;
      const Outcome o = optimize(jpeg, p);
      ASSERT_TRUE(o.replaced()) << o.message;
      EXPECT_LE(o.bytes.size(), l.bytes.size()) << o.detail;
      if (o.detail.find("lossless only") != std::string::npos) {
        EXPECT_EQ(o.bytes, l.bytes);
      }
    }
  }
}

// The bytes of a JPEG's primary image less its metadata segments.
size_t image_data(const Bytes& jpeg) {
  const Layout l = parse_layout(jpeg);
  size_t metadata = 0;
  for (const Segment& s : l.segments)
    if (s.is_metadata()) metadata += s.length;
  return l.image_end - metadata;
}

// A requantised output is kept only where its image data is at least 1 % smaller than the
// lossless output's (and the file smaller): a floor just under what the source's own tables give
// (the search then stays at them, zeroing a few coefficients) would otherwise trade quality for a
// few bytes. A small image among large metadata is still requantised.
TEST(Perceptual, RequantisingMustSaveMoreThanTheLosslessOutput) {
  const auto jpeg = testing::make_jpeg({.width = 256, .height = 256, .quality = 90, .markers = {}});
  Policy lossless;
  const Outcome l = optimize(jpeg, lossless);
  ASSERT_TRUE(l.replaced()) << l.message;
  int not_worth = 0;
  for (double target : {86.0, 88.0, 90.0, 92.0, 94.0, 96.0}) {
    Policy p;
    p.mode = Mode::kHigh;
    p.target_score = target;
    const Outcome o = optimize(jpeg, p);
    ASSERT_TRUE(o.replaced()) << o.message;
    if (o.detail.find("lossless only") != std::string::npos) {
      EXPECT_EQ(o.bytes, l.bytes) << target;
      not_worth += o.detail.find("not worth the quality") != std::string::npos;
    } else {
      EXPECT_LT(o.bytes.size(), l.bytes.size()) << o.detail;
      EXPECT_LE(double(image_data(o.bytes)), 0.99 * double(image_data(l.bytes))) << o.detail;
    }
  }
  EXPECT_GE(not_worth, 1);  // floors 90 and 92 here: 0.8 and 0.3 % saved

  testing::EncodeOptions small{.width = 96, .height = 64, .quality = 97, .markers = {}};
  for (int i = 0; i < 6; ++i) small.markers.push_back({JPEG_COM, std::string(60000, 'm')});
  const auto commented = testing::make_jpeg(small);
  Policy high;
  high.mode = Mode::kHigh;
  const Outcome o = optimize(commented, high);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_NE(o.detail.find("requantised q~"), std::string::npos) << o.detail;
  EXPECT_LT(double(commented.size() - o.bytes.size()), 0.01 * double(commented.size()));
}

// SSIMULACRA 2's coarse scales shrink to a few pixels on an image under 256 px a side, and under
// 113 px it drops scales: its score drifts up (strips like these scored 89-91 at q10). Such an
// image meets its floor also when both it and the original are mirrored out to 256 px
// (floor_score), in the search and in the verifier, so a strip is not coarsened far beyond what
// its content bears in a larger picture.
TEST(Perceptual, ThinImagesMeetTheFloorMirroredOutToFullSize) {
  for (auto [width, height] : {std::pair{1200, 24}, std::pair{16, 900}}) {
    SCOPED_TRACE(std::to_string(width) + "x" + std::to_string(height));
    const auto jpeg =
        testing::make_jpeg({.width = width, .height = height, .quality = 95, .markers = {}});
    Policy p;
    p.mode = Mode::kCompact;
    const Outcome o = optimize(jpeg, p);
    ASSERT_TRUE(o.replaced()) << o.message;
    ASSERT_FALSE(o.quality.pixels_identical) << o.detail;
    const ImageScores s = compare_images(jpeg, o.bytes, false);
    EXPECT_GE(s.floor_score, quality_floor(p)) << o.detail;
    EXPECT_GE(s.ssimulacra2, quality_floor(p));
    ASSERT_TRUE(o.quality.ssimulacra2.has_value());
    EXPECT_NEAR(*o.quality.ssimulacra2, s.floor_score, 0.05) << "the reported score is the floor's";
  }
}

// The verifier checks the same score: an output of a thin image whose published score meets the
// floor while its floor score does not is refused.
TEST(Perceptual, VerifierHoldsThinImagesToTheFloorScore) {
  const auto original =
      testing::make_jpeg({.width = 1200, .height = 24, .quality = 95, .markers = {}});
  const auto coarse =
      testing::make_jpeg({.width = 1200, .height = 24, .quality = 50, .markers = {}});
  const ImageScores s = compare_images(original, coarse, false);
  ASSERT_GT(s.ssimulacra2.value() - s.floor_score, 2.0);
  Policy p;
  p.mode = Mode::kHigh;
  p.target_score = (s.ssimulacra2.value() + s.floor_score) / 2;
  const Verdict refused = verify_jpeg(original, coarse, p, std::nullopt, std::nullopt);
  EXPECT_FALSE(refused.ok);
  EXPECT_NE(refused.problem.find("under the floor"), std::string::npos) << refused.problem;
  p.target_score = s.floor_score - 0.5;
  const Verdict taken = verify_jpeg(original, coarse, p, std::nullopt, std::nullopt);
  EXPECT_TRUE(taken.ok) << taken.problem;
}

// Under kBoth the two sources are compared on their row samples first; one that is decisively
// larger is not searched further (unless the other then meets nothing), and whatever is
// requantised meets the floor on the whole image.
void check_race(const SourceSearches& s, const Policy& p) {
  SCOPED_TRACE(s.race + " / " + s.own.detail + " / " + s.subsampled.detail);
  if (s.race.find("4:2:0 searched alone") != std::string::npos) {
    EXPECT_NE(s.own.requantized, s.subsampled.requantized);  // own only when 4:2:0 met nothing
  } else if (s.race.find("4:2:0 not searched further") != std::string::npos) {
    EXPECT_NE(s.own.requantized, s.subsampled.requantized);
  } else {
    EXPECT_EQ(s.race, "");
  }
  EXPECT_TRUE(s.own.requantized || s.subsampled.requantized);
  for (const PerceptualResult* r : {&s.own, &s.subsampled})
    if (r->requantized) {
      EXPECT_GE(r->score, quality_floor(p));
    }
}

TEST(Perceptual, TwoSourcesRaceOnTheirRowSamples) {
  for (bool smooth : {true, false}) {
    SCOPED_TRACE(smooth);
    const auto jpeg = testing::make_jpeg({.width = 2048,
                                          .height = 1536,
                                          .quality = 97,
                                          .markers = {},
                                          .luma_sampling = 1,
                                          .smooth_chroma = smooth});
    Policy p;
    p.mode = Mode::kHigh;
    CoefficientImage image(jpeg, nullptr);
    std::optional<ImageRgb8> reference;
    std::optional<SubsampledSource> source_420 = subsampled_source(image, jpeg, nullptr, reference);
    ASSERT_TRUE(source_420.has_value());
    check_race(search_sources(image, &*source_420, SubsamplingPlan::kBoth, jpeg, parse_layout(jpeg),
                              p, nullptr, reference, nullptr),
               p);
  }
}

// A zero quantisation entry (outside the standard; libjpeg reads it) bounded the 4:2:0
// re-encoding's tables below the one step its writer stores, and the requantiser took that for
// its own bug ("internal-error ... please report it").
TEST(Perceptual, AZeroTableEntryIsOneStep) {
  Bytes jpeg = testing::make_jpeg({.width = 640,
                                   .height = 480,
                                   .quality = 97,
                                   .markers = {},
                                   .luma_sampling = 2,
                                   .luma_v_sampling = 1,
                                   .smooth_chroma = true});
  size_t last_dqt = 0;
  for (size_t i = 2; i + 4 < jpeg.size() && !(jpeg[i] == 0xFF && jpeg[i + 1] == 0xDA); ++i)
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xDB) last_dqt = i;
  ASSERT_NE(last_dqt, 0u);
  const size_t length = size_t(jpeg[last_dqt + 2]) << 8 | jpeg[last_dqt + 3];
  jpeg[last_dqt + 2 + length - 1] = 0;  // the last entry of the last table (8-bit entries)
  Policy p;
  p.mode = Mode::kCompact;
  const Outcome o = optimize(jpeg, p);
  EXPECT_NE(o.reason, Reason::kInternalError) << o.message;
  EXPECT_NE(o.reason, Reason::kVerifyFailed) << o.message;
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_NE(o.detail.find("re-encoded from pixels as 4:2:0"), std::string::npos) << o.detail;
}

TEST(Perceptual, SubsamplingPlanFollowsTheHeadroom) {
  EXPECT_EQ(plan_subsampling(84.0, 85.0), SubsamplingPlan::kFullOnly);
  EXPECT_EQ(plan_subsampling(85.0 + kSubsampledHeadroom, 85.0), SubsamplingPlan::kBoth);
  EXPECT_EQ(plan_subsampling(70.0 + kSubsampledOnlyHeadroom, 70.0),
            SubsamplingPlan::kSubsampledOnly);
}

// A 4:4:4 source gets chroma tables at twice the luma's permille; subsampled chroma does not.
TEST(Perceptual, FullResolutionChromaGetsCoarserTables) {
  for (int samp : {1, 2}) {
    CoefficientImage image(
        testing::make_jpeg(
            {.width = 64, .height = 64, .quality = 98, .markers = {}, .luma_sampling = samp}),
        nullptr);
    const Requantizer rq(image);
    const std::vector<QuantTable> tables = rq.tables_for(600);
    const int luma = image.info().comp_info[0].quant_tbl_no;
    const int chroma = image.info().comp_info[1].quant_tbl_no;
    ASSERT_NE(luma, chroma);
    EXPECT_EQ(tables[size_t(luma)], target_table(600));
    EXPECT_EQ(tables[size_t(chroma)], target_table(samp == 1 ? 1200 : 600)) << samp;
  }
}

// The Requantizer reads the image until its first write and keeps the source from just before
// it: estimates agree before and after candidates were written, and the source tables with
// plain rounding give back the input's coefficients exactly.
TEST(Perceptual, RequantizerKeepsTheSourceFromBeforeItsFirstWrite) {
  const auto jpeg = testing::make_jpeg({.width = 200, .height = 120, .quality = 95, .markers = {}});
  CoefficientImage image(jpeg, nullptr);
  const Requantizer rq(image);
  const std::vector<QuantTable> probe = rq.tables_for(1500);
  const double before = rq.distortion_estimate(1)(probe);
  const Bytes written_before = write_coefficients(image, WriteOptions{});
  rq.apply(rq.tables_for(4000), RdoParams{});
  EXPECT_NE(write_coefficients(image, WriteOptions{}), written_before);
  EXPECT_EQ(rq.distortion_estimate(1)(probe), before);
  rq.restore_source();
  CoefficientImage fresh(jpeg, nullptr);
  EXPECT_EQ(fingerprint_coefficients(image), fingerprint_coefficients(fresh));
  EXPECT_EQ(write_coefficients(image, WriteOptions{}), written_before);
}

// An extended-sequential file whose coefficients exceed what baseline JPEG can code (a fuzzer's
// find): no level meets the floor, and the source must come back exactly. Putting it back by
// requantising to its own tables clamped those coefficients, and the verifier then caught a
// lossy output that nothing had scored.
TEST(Perceptual, SearchThatFindsNothingPutsOutOfRangeCoefficientsBack) {
  const Bytes jpeg = testing::read_file(std::filesystem::path(LIGHTEN_SOURCE_DIR) / "tests" /
                                        "fuzz" / "crashers" / "jpeg" / "mem_dest_double_free");
  ASSERT_FALSE(jpeg.empty());
  for (Mode mode : {Mode::kVisuallyLossless, Mode::kCompact}) {
    Policy p;
    p.mode = mode;
    const Outcome o = optimize(jpeg, p);
    EXPECT_NE(o.reason, Reason::kVerifyFailed) << o.message;
    if (o.replaced()) {
      EXPECT_TRUE(o.quality.pixels_identical) << o.detail;
    }
  }
}

// The search's cheap estimate, from magnitudes counted once, against a direct pass over the
// sampled blocks with the same rounding and weights.
TEST(Perceptual, DistortionEstimateMatchesADirectPass) {
  CoefficientImage image(
      testing::make_jpeg({.width = 200, .height = 120, .quality = 95, .markers = {}}), nullptr);
  const Requantizer rq(image);
  const auto& info = image.info();
  for (unsigned row_step : {1u, 3u}) {
    const Requantizer::DistortionEstimate estimate = rq.distortion_estimate(row_step);
    for (int permille : {150, 600, 2500}) {
      const std::vector<QuantTable> tables = rq.tables_for(permille);
      double direct = 0;
      for (int ci = 0; ci < info.num_components; ++ci) {
        const jpeg_component_info& c = info.comp_info[ci];
        const QuantTable& q_old = rq.source_tables()[size_t(c.quant_tbl_no)];
        const QuantTable& q_new = tables[size_t(c.quant_tbl_no)];
        const QuantTable annex_k = ijg_table(50, ci != 0);
        double sum = 0;
        unsigned sampled = 0;
        for (JDIMENSION row = 0; row < c.height_in_blocks; row += row_step, ++sampled) {
          const JBLOCK* blocks = image.block_row(ci, row);
          for (JDIMENSION b = 0; b < c.width_in_blocks; ++b)
            for (int k = 0; k < 64; ++k) {
              const double x = double(blocks[b][k]) * q_old[size_t(k)];
              const double e = x - std::round(x / q_new[size_t(k)]) * q_new[size_t(k)];
              sum += e * e * 256.0 / (double(annex_k[size_t(k)]) * annex_k[size_t(k)]);
            }
        }
        direct += sum * c.height_in_blocks / sampled;
      }
      direct /= double(info.image_width) * info.image_height;
      EXPECT_NEAR(estimate(tables), direct, 1e-9 * direct) << row_step << " " << permille;
      EXPECT_GT(direct, 0);
    }
  }
}

// The verifier takes the search's score only for an output that decodes to the very coefficients
// and tables that were scored; anything else is scored afresh.
TEST(Perceptual, VerifierReusesAScoreOnlyForTheScoredCandidate) {
  const auto jpeg = testing::make_jpeg({.width = 320, .height = 240, .quality = 97, .markers = {}});
  Policy p;
  p.mode = Mode::kHigh;
  const Outcome o = optimize(jpeg, p);
  ASSERT_TRUE(o.replaced()) << o.message;
  ASSERT_FALSE(o.quality.pixels_identical) << o.detail;
  const Verdict fresh = verify_jpeg(jpeg, o.bytes, p);
  ASSERT_TRUE(fresh.ok) << fresh.problem;
  DecodedFingerprint fp;
  {
    CoefficientImage out(o.bytes, nullptr);
    fp = fingerprint_coefficients(out);
  }
  // A matching fingerprint: its score is taken (a score under the floor then fails the file).
  const Verdict reused =
      verify_jpeg(jpeg, o.bytes, p, std::nullopt, ScoredFingerprint{fp, 99.5, 99, nullptr});
  ASSERT_TRUE(reused.ok) << reused.problem;
  EXPECT_EQ(reused.quality.ssimulacra2, 99.5);
  EXPECT_FALSE(
      verify_jpeg(jpeg, o.bytes, p, std::nullopt, ScoredFingerprint{fp, 10, 10, nullptr}).ok);
  // Another fingerprint: the output is scored afresh, whatever the note says.
  const DecodedFingerprint other{fp[0] + 1, fp[1]};
  const Verdict rescored =
      verify_jpeg(jpeg, o.bytes, p, std::nullopt, ScoredFingerprint{other, 10, 10, nullptr});
  ASSERT_TRUE(rescored.ok) << rescored.problem;
  EXPECT_EQ(rescored.quality.ssimulacra2, fresh.quality.ssimulacra2);
  // Through the engine the chosen candidate's own score comes back: the one in the outcome, by
  // the search's quick metric (maps of negligible weight left out), so within its slack of the
  // full computation, and above the floor by both.
  EXPECT_NEAR(*o.quality.ssimulacra2, *fresh.quality.ssimulacra2, 0.01);
  EXPECT_GE(*fresh.quality.ssimulacra2, quality_floor(p));
}

// On two 4:2:2 camera photos the race decides each way (canon_5d keeps its own sampling,
// lumia800 becomes 4:2:0 in high), and the source it keeps is not larger on the whole image
// than the one it dropped, each searched alone.
TEST(PerceptualCorpus, TheRaceAgreesWithTheWholeImages) {
  const auto dir = testing::shared_dir() / "corpus" / "jpeg";
  if (!std::filesystem::exists(dir / "canon_5d.jpg")) GTEST_SKIP() << "no shared corpus";
  for (const char* name : {"canon_5d", "lumia800"}) {
    SCOPED_TRACE(name);
    const Bytes jpeg = testing::read_file(dir / (std::string(name) + ".jpg"));
    Policy p;
    p.mode = Mode::kHigh;
    const Layout layout = parse_layout(jpeg);
    std::optional<ImageRgb8> reference;
    CoefficientImage image(jpeg, nullptr), own(jpeg, nullptr);
    std::optional<SubsampledSource> raced = subsampled_source(image, jpeg, nullptr, reference);
    std::optional<SubsampledSource> alone = subsampled_source(own, jpeg, nullptr, reference);
    ASSERT_TRUE(raced && alone);
    const SourceSearches s = search_sources(image, &*raced, SubsamplingPlan::kBoth, jpeg, layout, p,
                                            nullptr, reference, nullptr);
    check_race(s, p);
    ASSERT_NE(s.race, "");
    ASSERT_TRUE(requantize_for_floor(own, jpeg, layout, p, nullptr, reference).requantized);
    ASSERT_TRUE(
        requantize_for_floor(*alone->image, jpeg, layout, p, nullptr, reference).requantized);
    const size_t own_bytes = write_coefficients(own, WriteOptions{}).size();
    const size_t bytes_420 = write_coefficients(*alone->image, WriteOptions{}).size();
    if (s.own.requantized)
      EXPECT_LE(own_bytes, bytes_420);
    else
      EXPECT_LE(bytes_420, own_bytes);
  }
}

// The 16 camera photos of ../shared/oracles/README.md in one mode (all modes:
// bench/jpeg_perceptual).
TEST(PerceptualCorpus, CameraPhotosMeetTheHighFloor) {
  static const char* kPhotos[] = {
      "canon_20d_vert", "canon_5d",  "canon_lr_22mp", "dimage_ex_221212",
      "fuji_f40fd",     "galaxy_s7", "iphone6plus",   "iphone_hdr",
      "jolla",          "leica_t",   "lumia800",      "motog",
      "nikon_d90",      "nokia83",   "noritsu_scan",  "olympus_fe230"};
  const auto dir = testing::shared_dir() / "corpus" / "jpeg";
  if (!std::filesystem::exists(dir / "jolla.jpg")) GTEST_SKIP() << "no shared corpus";
  Policy p;
  p.mode = Mode::kHigh;
  p.effort = 2;  // two metric evaluations per file keep this test near a minute
  for (const char* name : kPhotos) {
    const auto path = dir / (std::string(name) + ".jpg");
    if (!std::filesystem::exists(path)) continue;
    check_perceptual(testing::read_file(path), p, name);
  }
}

}  // namespace
}  // namespace lighten::jpeg
