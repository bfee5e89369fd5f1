// Perceptual JPEG on text: pages and screenshots, whose strokes the row sample may miss and the
// trellis's default weight thins.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "formats/jpeg/coefficients.h"
#include "formats/jpeg/jpeg_format.h"
#include "formats/jpeg/markers.h"
#include "formats/jpeg/perceptual.h"
#include "lighten/compare.h"
#include "lighten/lighten.h"
#include "test_support.h"

namespace lighten::jpeg {
namespace {

// A page of text: lines of glyphs in the rows `text_row` picks, on textured paper.
template <typename TextRow>
std::vector<uint8_t> text_page_pixels(int width, int height, TextRow text_row) {
  std::vector<uint8_t> pixels(size_t(width) * height * 3);
  uint32_t seed = 7;
  auto next = [&seed] { return seed = seed * 1103515245u + 12345u; };
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      // Paper printed with a fine texture everywhere (so the sample's coefficients answer
      // requantisation as the page's do), and a little grain.
      int v = 190 + int(40 * std::sin(x * 0.9) * std::sin(y * 0.7)) + int(next() >> 29);
      // Lines of text 24 rows apart, in step with row 560.
      const int line_row = ((y - 560) % 24 + 24) % 24;
      if (text_row(y) && x >= 96 && x < width - 96 && line_row < 16 && x % 11 < 8) {
        // A glyph per 11 x 24 cell: a 4 x 4 bitmap of strokes picked by the cell's hash.
        const uint32_t cell = uint32_t(x / 11) * 2654435761u ^ uint32_t(y / 24) * 40503u;
        const int bit = (line_row / 4) * 4 + x % 11 / 2;
        if ((cell >> (bit % 16)) & 1) v = 30;
      }
      for (int c = 0; c < 3; ++c) pixels[(size_t(y) * width + x) * 3 + c] = uint8_t(v);
    }
  }
  return pixels;
}

// Black glyphs on flat white, as a screenshot has them: no paper texture or grain to mask.
std::vector<uint8_t> screenshot_pixels(int width, int height) {
  std::vector<uint8_t> pixels(size_t(width) * height * 3, 250);
  for (int y = 16; y < height - 16; ++y)
    for (int x = 16; x < width - 16; ++x) {
      const uint32_t cell = uint32_t(x / 7) * 2654435761u ^ uint32_t(y / 12) * 40503u;
      const int bit = (y % 12 / 3) * 4 + x % 7 / 2;
      if (y % 12 < 9 && x % 7 < 5 && ((cell >> (bit % 16)) & 1))
        std::fill_n(pixels.begin() + long((size_t(y) * width + x) * 3), 3, uint8_t(20));
    }
  return pixels;
}

// A page of text whose lines lie between the rows the search samples (bands at 256-512 and
// 1024-1280 of 1536): the sample is bare paper, so its worst tile scores far above the page's.
// The first whole-page confirmation shows it, and the page is searched on its own evaluations,
// ending near the floor (or its worst tile's, 10 under it). On real pages the sample alone led
// the search to levels far too fine (a 200 dpi page in compact: q98 where q86 passes).
TEST(Perceptual, ASampleOfBarePaperHandsTheSearchToTheWholePage) {
  const int width = 2048, height = 1536;
  const auto jpeg = testing::make_jpeg({.width = width,
                                        .height = height,
                                        .quality = 95,
                                        .markers = {},
                                        .pixels = text_page_pixels(width, height, [](int y) {
                                          return (y >= 560 && y < 960) || (y >= 1320 && y < 1500);
                                        })});
  ASSERT_FALSE(jpeg.empty());
  Policy p;
  p.mode = Mode::kCompact;
  const Outcome o = optimize(jpeg, p);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_NE(o.detail.find("then on the whole image alone"), std::string::npos) << o.detail;
  const ImageScores s = compare_images(jpeg, o.bytes, false);
  EXPECT_GE(s.floor_score, 70.0) << o.detail;
  EXPECT_GE(s.ssimulacra2_worst_tile, 60.0) << o.detail;
  // Near one floor or the other (led by the sample to the end, it stopped at 71.75 here).
  EXPECT_LE(std::min(s.floor_score - 70.0, s.ssimulacra2_worst_tile.value() - 60.0), 1.0)
      << o.detail;
}

// The trellis's default weight zeroes much of the strokes' detail, which the metric misses on
// text more than the coarser tables a heavier weight needs: on a page of text the row sample
// races the weights and keeps the heavier one, for fewer bytes at the same floor.
TEST(Perceptual, APageOfTextKeepsTheHeavierTrellisWeight) {
  const int width = 2048, height = 1536;
  const auto jpeg = testing::make_jpeg(
      {.width = width,
       .height = height,
       .quality = 95,
       .markers = {},
       .pixels = text_page_pixels(width, height, [](int y) { return y >= 64 && y < 1472; })});
  ASSERT_FALSE(jpeg.empty());
  Policy p;
  p.mode = Mode::kHigh;
  const Layout layout = parse_layout(jpeg);
  size_t bytes[2];
  for (bool race : {true, false}) {
    SCOPED_TRACE(race ? "raced" : "default weight");
    std::optional<ImageRgb8> reference;
    CoefficientImage image(jpeg, nullptr);
    const PerceptualResult r =
        FloorSearch(image, jpeg, layout, p, nullptr, reference, nullptr, race).run();
    ASSERT_TRUE(r.requantized) << r.detail;
    EXPECT_EQ(r.detail.find("(weight 2:") != std::string::npos, race) << r.detail;
    const Bytes out = write_coefficients(image, WriteOptions{});
    EXPECT_GE(compare_images(jpeg, out, false).floor_score, quality_floor(p)) << r.detail;
    bytes[race ? 0 : 1] = out.size();
  }
  // 15 % smaller here.
  EXPECT_LT(double(bytes[0]), 0.93 * double(bytes[1])) << bytes[0] << " " << bytes[1];
  // Below effort 4 the default weight is searched alone.
  p.effort = 3;
  const Outcome fast = optimize(jpeg, p);
  ASSERT_TRUE(fast.replaced()) << fast.message;
  EXPECT_EQ(fast.detail.find("(weight"), std::string::npos) << fast.detail;
}

// An image too small for a row sample races the weights only where the user asks for the smallest
// files (effort 8 on): each weight gets a search of the whole image, and the smaller pick stays.
TEST(Perceptual, ASmallPageOfTextRacesTheWeightsOnTheWholeImageFromEffort8) {
  const int width = 1024, height = 768;
  const auto jpeg = testing::make_jpeg(
      {.width = width,
       .height = height,
       .quality = 95,
       .markers = {},
       .pixels = text_page_pixels(width, height, [](int y) { return y >= 32 && y < 736; })});
  ASSERT_FALSE(jpeg.empty());
  Policy p;
  p.mode = Mode::kHigh;
  p.effort = 8;
  const Outcome raced = optimize(jpeg, p);
  ASSERT_TRUE(raced.replaced()) << raced.message;
  EXPECT_NE(raced.detail.find("(weight 2: "), std::string::npos) << raced.detail;
  EXPECT_NE(raced.detail.find("on the whole image)"), std::string::npos) << raced.detail;
  EXPECT_GE(compare_images(jpeg, raced.bytes, false).floor_score, quality_floor(p)) << raced.detail;
  p.effort = 7;
  const Outcome alone = optimize(jpeg, p);
  ASSERT_TRUE(alone.replaced()) << alone.message;
  EXPECT_EQ(alone.detail.find("(weight 2"), std::string::npos) << alone.detail;
  EXPECT_LT(double(raced.bytes.size()), 0.95 * double(alone.bytes.size()))
      << raced.bytes.size() << " " << alone.bytes.size();
}

// A screenshot of text (640x480 unless said) saved at `quality`.
std::vector<uint8_t> screenshot_jpeg(int quality, int width = 640, int height = 480) {
  return testing::make_jpeg({.width = width,
                             .height = height,
                             .quality = quality,
                             .markers = {},
                             .pixels = screenshot_pixels(width, height)});
}

// `jpeg` optimised under `p`, checked to meet its floor in fewer bytes than the lossless output.
Outcome smaller_than_lossless(const std::vector<uint8_t>& jpeg, const Policy& p) {
  Policy lossless = p;
  lossless.mode = Mode::kLossless;
  const Outcome l = optimize(jpeg, lossless);
  EXPECT_TRUE(l.replaced()) << l.message;
  const Outcome o = optimize(jpeg, p);
  EXPECT_TRUE(o.replaced()) << o.message;
  if (!l.replaced() || !o.replaced()) return o;
  EXPECT_GE(compare_images(jpeg, o.bytes, false).floor_score, quality_floor(p)) << o.detail;
  EXPECT_LT(o.bytes.size(), l.bytes.size()) << o.detail;
  return o;
}

// On a screenshot of text the default trellis weight thins the strokes at every level, so that
// nothing meets the floor; the heavier weight is searched before the file is left lossless.
TEST(Perceptual, TextTheDefaultWeightCannotKeepIsSearchedAtTheHeavierOne) {
  const auto jpeg = screenshot_jpeg(90);
  ASSERT_FALSE(jpeg.empty());
  Policy p;
  p.mode = Mode::kHigh;
  const Outcome o = smaller_than_lossless(jpeg, p);
  EXPECT_NE(o.detail.find("(weight 2: nothing met the floor at 0.5"), std::string::npos)
      << o.detail;
  // Below effort 4 the default weight alone is searched, and the file stays lossless.
  p.effort = 3;
  const Outcome fast = optimize(jpeg, p);
  ASSERT_TRUE(fast.replaced()) << fast.message;
  EXPECT_NE(fast.detail.find("lossless only"), std::string::npos) << fast.detail;
}

// At a floor near what the source's own tables score, the heavier weight thins the strokes too:
// the last resort's weight is searched before the file is left lossless (here 6.5 % smaller than
// the lossless output, which was all there was before).
TEST(Perceptual, TextNeitherRacedWeightKeepsIsSearchedAtTheLastResort) {
  const auto jpeg = screenshot_jpeg(85);
  ASSERT_FALSE(jpeg.empty());
  Policy p;
  p.mode = Mode::kVisuallyLossless;
  const Outcome o = smaller_than_lossless(jpeg, p);
  EXPECT_NE(o.detail.find("(weight 8: nothing met the floor at 0.5 in"), std::string::npos)
      << o.detail;
  EXPECT_NE(o.detail.find(" or 2 in "), std::string::npos) << o.detail;
}

// The same on a screenshot large enough for a row sample, where the sample races the weights:
// whichever weight the race keeps, the last resort's is searched when it meets nothing on the
// whole image (before, a race won by weight 2 ended there, lossless), and a weight whose sample
// met nothing is not searched again on the whole image.
TEST(Perceptual, TextNeitherRacedWeightKeepsIsSearchedAtTheLastResortAfterTheRace) {
  const auto jpeg = screenshot_jpeg(85, 2048, 1536);
  ASSERT_FALSE(jpeg.empty());
  Policy p;
  p.mode = Mode::kVisuallyLossless;
  const Outcome o = smaller_than_lossless(jpeg, p);
  EXPECT_NE(o.detail.find("(weight 8: nothing met the floor at 0.5 in "), std::string::npos)
      << o.detail;
  // Weight 2 met nothing on the row sample: no whole-image tries of it.
  EXPECT_NE(o.detail.find(" or 2 on the row sample)"), std::string::npos) << o.detail;
  EXPECT_NE(o.detail.find("on a quarter of the rows"), std::string::npos) << o.detail;
}

}  // namespace
}  // namespace lighten::jpeg
