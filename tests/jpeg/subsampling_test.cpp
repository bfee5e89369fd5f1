// The 4:2:0 re-encoding of photos whose chroma is finer: the plan's score, the finer chroma it
// keeps when it is searched alone, and the Requantizer's bound that holds such an image to its
// source's tables.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "formats/jpeg/coefficients.h"
#include "formats/jpeg/jpeg_format.h"
#include "formats/jpeg/markers.h"
#include "formats/jpeg/perceptual.h"
#include "formats/jpeg/requantize.h"
#include "formats/jpeg/subsampling.h"
#include "lighten/compare.h"
#include "lighten/lighten.h"
#include "quality/floor_score.h"
#include "test_support.h"

namespace lighten::jpeg {
namespace {

// Every entry of `table` is at least `bound`'s.
bool nowhere_finer(const QuantTable& table, const QuantTable& bound) {
  for (int k = 0; k < 64; ++k)
    if (table[size_t(k)] < bound[size_t(k)]) return false;
  return true;
}

QuantTable component_table(CoefficientImage& image, int ci) {
  QuantTable t{};
  for (int k = 0; k < 64; ++k) t[size_t(k)] = image.info().comp_info[ci].quant_table->quantval[k];
  return t;
}

// Given bounding tables, the Requantizer writes nothing finer than them (its own tables are
// finer), reports the source's quality from them, and refuses a bound finer than its own tables.
TEST(Subsampling, BoundingTablesHoldTheRequantizer) {
  CoefficientImage image(
      testing::make_jpeg({.width = 64, .height = 64, .quality = 98, .markers = {}}), nullptr);
  const Requantizer own(image);
  std::vector<QuantTable> bound = own.source_tables();
  for (QuantTable& t : bound)
    for (uint16_t& step : t)
      if (step) step = uint16_t(std::min(255, step * 8));
  const Requantizer bounded(image, bound);
  EXPECT_EQ(bounded.finest_tables(), bound);
  EXPECT_EQ(bounded.source_tables(), own.source_tables());
  EXPECT_LT(bounded.source_quality(), own.source_quality() - 10);
  const int luma = image.info().comp_info[0].quant_tbl_no;
  const int chroma = image.info().comp_info[1].quant_tbl_no;
  for (int permille : {100, 600, 2000}) {
    const std::vector<QuantTable> tables = bounded.tables_for(permille);
    for (int slot : {luma, chroma}) {
      EXPECT_TRUE(nowhere_finer(tables[size_t(slot)], bound[size_t(slot)])) << permille;
      EXPECT_TRUE(nowhere_finer(tables[size_t(slot)], own.tables_for(permille)[size_t(slot)]));
    }
  }
  // The finest level is the bound itself where the target is finer.
  EXPECT_EQ(bounded.tables_for(50)[size_t(luma)], bound[size_t(luma)]);

  std::vector<QuantTable> finer = bound;
  const QuantTable& own_chroma = own.source_tables()[size_t(chroma)];
  const auto coarse =
      std::find_if(own_chroma.begin(), own_chroma.end(), [](uint16_t step) { return step > 1; });
  ASSERT_NE(coarse, own_chroma.end());
  const size_t at = size_t(coarse - own_chroma.begin());
  finer[size_t(chroma)][at] = uint16_t(own_chroma[at] - 1);  // finer than the image's own step
  EXPECT_THROW(Requantizer(image, finer), FormatError);
  EXPECT_THROW(Requantizer(image, std::vector<QuantTable>(1)), FormatError);
}

// A 4:4:4 photo whose 4:2:0 re-encoding alone leaves the compact floor far behind is searched
// as 4:2:0 only, from a re-encoding whose chroma sits at half the source's steps. The output's
// tables are still nowhere finer than the input's, it meets the floor by an independent score,
// and a second run does no lossy work. Nearer its floor (a target score that leaves both
// searches) the re-encoding keeps the source's steps.
TEST(Subsampling, SearchedAloneTheReencodingKeepsFinerChroma) {
  const auto jpeg = testing::make_jpeg({.width = 640,
                                        .height = 480,
                                        .quality = 95,
                                        .markers = {},
                                        .luma_sampling = 1,
                                        .smooth_chroma = true});
  CoefficientImage image(jpeg, nullptr);
  std::optional<ImageRgb8> reference;
  const std::optional<double> alone = reencoding_score(image, jpeg, reference, nullptr);
  ASSERT_TRUE(alone.has_value());
  Policy p;
  p.mode = Mode::kCompact;
  ASSERT_EQ(plan_subsampling(*alone, quality_floor(p)), SubsamplingPlan::kSubsampledOnly) << *alone;

  const QuantTable source_chroma = component_table(image, 1);
  const std::optional<SubsampledSource> finer =
      subsampled_source(image, jpeg, nullptr, reference, ReencodedChroma::kHalfSteps);
  ASSERT_TRUE(finer.has_value());
  const QuantTable written_chroma = component_table(*finer->image, 1);
  for (int k = 0; k < 64; ++k)
    EXPECT_EQ(written_chroma[size_t(k)], std::max(1, source_chroma[size_t(k)] / 2)) << k;
  ASSERT_FALSE(finer->finest_tables.empty());
  EXPECT_EQ(finer->finest_tables[size_t(finer->image->info().comp_info[1].quant_tbl_no)],
            source_chroma);
  const std::optional<SubsampledSource> plain = subsampled_source(image, jpeg, nullptr, reference);
  ASSERT_TRUE(plain.has_value());
  EXPECT_TRUE(plain->finest_tables.empty());
  EXPECT_EQ(component_table(*plain->image, 1), source_chroma);

  const Outcome o = optimize(jpeg, p);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_NE(o.detail.find("4:2:0 (alone"), std::string::npos) << o.detail;
  EXPECT_NE(o.detail.find("with chroma at half the source's steps"), std::string::npos) << o.detail;
  CoefficientImage out(o.bytes, nullptr);
  EXPECT_EQ(out.info().comp_info[0].h_samp_factor, 2);
  EXPECT_TRUE(nowhere_finer(component_table(out, 1), source_chroma));
  EXPECT_TRUE(nowhere_finer(component_table(out, 0), component_table(image, 0)));
  EXPECT_TRUE(verify_jpeg(jpeg, o.bytes, p, std::nullopt, std::nullopt).ok);
  const ImageScores scores = compare_images(jpeg, o.bytes, false);
  EXPECT_GE(scores.floor_score, quality_floor(p));
  const Outcome again = optimize(o.bytes, p);
  EXPECT_FALSE(again.replaced() && !again.quality.pixels_identical) << again.detail;

  Policy near = p;
  near.target_score = *alone - (kSubsampledHeadroom + kSubsampledOnlyHeadroom) / 2;
  ASSERT_EQ(plan_subsampling(*alone, quality_floor(near)), SubsamplingPlan::kBoth);
  const Outcome v = optimize(jpeg, near);
  EXPECT_EQ(v.detail.find("half the source's steps"), std::string::npos) << v.detail;
}

// Cb and Cr share one table in the 4:2:0 re-encoding: where the source's Cr table is coarser than
// its Cb's, the shared one is never finer than either (Cb's alone made the output's Cr finer
// than the input's, and the output failed verification).
TEST(Subsampling, TheSharedChromaTableIsNeverFinerThanEitherSource) {
  const auto jpeg = testing::make_jpeg({.width = 640,
                                        .height = 480,
                                        .quality = 95,
                                        .markers = {},
                                        .luma_sampling = 1,
                                        .smooth_chroma = true,
                                        .cr_quality = 70});
  CoefficientImage image(jpeg, nullptr);
  ASSERT_EQ(image.info().comp_info[2].quant_tbl_no, 2);
  const QuantTable cb = component_table(image, 1), cr = component_table(image, 2);
  ASSERT_FALSE(nowhere_finer(cb, cr));  // Cr's steps are coarser
  const ReencodingTables tables = reencoding_tables(image);
  EXPECT_TRUE(nowhere_finer(tables.chroma, cb));
  EXPECT_TRUE(nowhere_finer(tables.chroma, cr));
  for (const Mode mode : {Mode::kHigh, Mode::kCompact}) {
    Policy p;
    p.mode = mode;
    const Outcome o = optimize(jpeg, p);
    ASSERT_TRUE(o.replaced()) << o.message;  // not "verify-failed"
    // In high the search ends at the source's own tables: written losslessly (a re-run could
    // not tell it from a source).
    if (mode == Mode::kHigh && o.quality.pixels_identical) continue;
    EXPECT_NE(o.detail.find("4:2:0"), std::string::npos) << o.detail;
    CoefficientImage out(o.bytes, nullptr);
    EXPECT_TRUE(nowhere_finer(component_table(out, 2), cr));
    EXPECT_TRUE(nowhere_finer(component_table(out, 1), cb));
  }
}

// The plan's score of a small image is the whole re-encoding's, decoded and scored as the search
// scores candidates.
TEST(Subsampling, ThePlanScoresTheWholeReencodingOfASmallImage) {
  const auto jpeg = testing::make_jpeg(
      {.width = 480, .height = 320, .quality = 92, .markers = {}, .luma_sampling = 1});
  CoefficientImage image(jpeg, nullptr);
  std::optional<ImageRgb8> reference;
  const std::optional<double> alone = reencoding_score(image, jpeg, reference, nullptr);
  ASSERT_TRUE(alone.has_value() && reference.has_value());
  const std::optional<SubsampledSource> whole = subsampled_source(image, jpeg, nullptr, reference);
  ASSERT_TRUE(whole.has_value());
  const std::optional<ImageRgb8> decoded = to_metric_image(decode_pixels(whole->bytes), nullptr);
  ASSERT_TRUE(decoded.has_value());
  const double score =
      floor_score(*reference, *decoded, {.tile_size = 256, .negligible_weight = 0.002}).score;
  EXPECT_DOUBLE_EQ(*alone, score);
  EXPECT_LT(*alone, 100.0);

  // A 4:2:0 source has no re-encoding.
  const auto subsampled = testing::make_jpeg({.width = 64, .height = 64, .markers = {}});
  CoefficientImage own(subsampled, nullptr);
  std::optional<ImageRgb8> none;
  EXPECT_FALSE(reencoding_score(own, subsampled, none, nullptr).has_value());
}

}  // namespace
}  // namespace lighten::jpeg
