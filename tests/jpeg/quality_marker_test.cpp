// --quality-marker omit: no APP15 segment, and a re-run knows lighten's output by its tables
// alone; an output whose tables would not tell is not written (the file stays lossless), under
// either policy, since a written marker may be stripped later.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "formats/jpeg/markers.h"
#include "formats/jpeg/metadata.h"
#include "lighten/lighten.h"
#include "test_support.h"

namespace lighten::jpeg {
namespace {

TEST(QualityMarker, OmittedWhenAskedAndTheTablesTellInstead) {
  // 4:2:0 (one shared scale) and 4:4:4 (chroma tables at another level than the luma's) from a
  // q97 source; from a q90 one, whose chroma tables are coarser than the targets' in most
  // entries and stay the source's there (in compact at 4:2:0 only the luma's table shows the
  // level), and whose luma may stay mostly the source's too where the search ends near q90.
  struct Case {
    int quality;
    Mode mode;
    int sampling;
    bool requantised;  // must be; otherwise it may also be written losslessly, with the reason
  };
  int lossless = 0;
  for (const Case c : {Case{97, Mode::kCompact, 2, true}, Case{97, Mode::kCompact, 1, true},
                       Case{90, Mode::kCompact, 2, true}, Case{90, Mode::kCompact, 1, false},
                       Case{90, Mode::kHigh, 2, false}, Case{90, Mode::kHigh, 1, false}}) {
    const std::string name =
        fmt::format("q{} sampling {} mode {}", c.quality, c.sampling, int(c.mode));
    const auto jpeg = testing::make_jpeg({.width = 320,
                                          .height = 240,
                                          .quality = c.quality,
                                          .markers = {},
                                          .luma_sampling = c.sampling});
    Policy p;
    p.mode = c.mode;
    p.quality_marker = QualityMarker::kOmit;
    const Outcome o = optimize(jpeg, p);
    ASSERT_TRUE(o.replaced()) << name << ": " << o.message;
    EXPECT_FALSE(has_quality_marker(parse_layout(o.bytes)));
    if (c.requantised) {
      EXPECT_FALSE(o.quality.pixels_identical) << name << ": " << o.detail;
    }
    if (o.quality.pixels_identical) {
      // Tables a re-run could not tell from a source's: not written.
      EXPECT_NE(o.detail.find("requantise again"), std::string::npos) << name << o.detail;
      ++lossless;
      continue;
    }
    // Without the marker the tables prove the output is at its target: no second
    // requantisation.
    const Outcome again = optimize(o.bytes, p);
    EXPECT_FALSE(again.replaced() && !again.quality.pixels_identical)
        << name << ": " << again.detail;
  }
  EXPECT_GT(lossless, 0);
}

TEST(QualityMarker, HighTargetScoresStillRequantiseWithoutTheMarker) {
  // From a floor of about 90 up, the search starts at q95-97: the tables' proof must not reach
  // past the finest level the search writes, where every table (a q100 one's too) would pass
  // for one already requantised and every file would stay lossless.
  const auto jpeg =
      testing::make_jpeg({.width = 320, .height = 240, .quality = 100, .markers = {}});
  for (const double target : {91.0, 93.0}) {
    Policy p;
    p.mode = Mode::kHigh;
    p.target_score = target;
    p.quality_marker = QualityMarker::kOmit;
    const Outcome o = optimize(jpeg, p);
    ASSERT_TRUE(o.replaced()) << target << ": " << o.message;
    EXPECT_FALSE(o.quality.pixels_identical) << target << ": " << o.detail;
    ASSERT_TRUE(o.quality.ssimulacra2.has_value());
    EXPECT_GE(*o.quality.ssimulacra2, target);
    const Outcome again = optimize(o.bytes, p);
    EXPECT_FALSE(again.replaced() && !again.quality.pixels_identical)
        << target << ": " << again.detail;
  }
}

// A file lighten requantised without a marker (written under omit, or its marker stripped by
// another tool since) is known by its tables under the default policy too: searched again, its
// degraded pixels would be the reference and each run would lose more (scores against the
// original fell from 80 to 74 and then 68).
TEST(QualityMarker, AFileWithoutItsMarkerIsNotRequantisedAgain) {
  const auto jpeg = testing::make_jpeg({.width = 320, .height = 240, .quality = 97, .markers = {}});
  for (const Mode mode : {Mode::kHigh, Mode::kCompact}) {
    Policy omit;
    omit.mode = mode;
    omit.quality_marker = QualityMarker::kOmit;
    const Outcome first = optimize(jpeg, omit);
    ASSERT_TRUE(first.replaced()) << first.message;
    ASSERT_FALSE(first.quality.pixels_identical) << first.detail;
    ASSERT_FALSE(has_quality_marker(parse_layout(first.bytes)));
    Policy written;
    written.mode = mode;
    const Outcome again = optimize(first.bytes, written);
    EXPECT_FALSE(again.replaced() && !again.quality.pixels_identical) << again.detail;
    EXPECT_NE(again.detail.find("already requantised by lighten"), std::string::npos)
        << again.detail << again.message;
  }
}

// The marker written by default may be gone later (`jpegtran -copy none`, exiftool -all=): an
// output whose tables would not tell it from a source's is then requantised again. Such outputs
// are not written under the default policy either.
TEST(QualityMarker, AnOutputStaysKnownWhenItsWrittenMarkerIsStripped) {
  const auto strip_marker = [](const Bytes& jpeg) {
    const Layout layout = parse_layout(jpeg);
    for (const Segment& s : layout.segments)
      if (is_quality_marker(s)) {
        Bytes out(jpeg.begin(), jpeg.begin() + long(s.offset));
        out.insert(out.end(), jpeg.begin() + long(s.end()), jpeg.end());
        return out;
      }
    return jpeg;
  };
  int lossless = 0;
  for (const int quality : {90, 97})
    for (const Mode mode : {Mode::kVisuallyLossless, Mode::kHigh, Mode::kCompact})
      for (const int sampling : {1, 2}) {
        const std::string name =
            fmt::format("q{} mode {} sampling {}", quality, int(mode), sampling);
        const auto jpeg = testing::make_jpeg({.width = 320,
                                              .height = 240,
                                              .quality = quality,
                                              .markers = {},
                                              .luma_sampling = sampling});
        Policy p;
        p.mode = mode;
        const Outcome first = optimize(jpeg, p);
        ASSERT_TRUE(first.replaced()) << name << ": " << first.message;
        if (first.quality.pixels_identical) {
          ++lossless;
          continue;
        }
        const Bytes stripped = strip_marker(first.bytes);
        ASSERT_FALSE(has_quality_marker(parse_layout(stripped))) << name;
        const Outcome again = optimize(stripped, p);
        EXPECT_FALSE(again.replaced() && !again.quality.pixels_identical)
            << name << ": " << again.detail;
      }
  EXPECT_GT(lossless, 0);  // the q90 sources in high: the tables stay mostly the source's
}

// A plain encoder's file already near the mode's target (a q85 page in visually-lossless, q75 in
// high) keeps many of its own table entries: merely coarse tables, which a re-run under `omit`
// takes as done but one under the default `write` did not. Once the marker was stripped, that
// run requantised the output again (85.05, then 81.72 against the original). Such tables, the
// larger of a plain table and one of lighten's targets entry by entry, now tell.
TEST(QualityMarker, TablesRaisedFromAPlainEncodersTellWithoutTheMarker) {
  int requantised = 0;
  for (const int components : {1, 3})
    for (const auto& [mode, quality] :
         {std::pair{Mode::kVisuallyLossless, 85}, std::pair{Mode::kVisuallyLossless, 82},
          std::pair{Mode::kHigh, 75}, std::pair{Mode::kHigh, 72}}) {
      const std::string name =
          fmt::format("q{} mode {} components {}", quality, int(mode), components);
      const auto jpeg = testing::make_jpeg({.width = 320,
                                            .height = 240,
                                            .components = components,
                                            .quality = quality,
                                            .markers = {}});
      Policy p;
      p.mode = mode;
      const Outcome first = optimize(jpeg, p);
      ASSERT_TRUE(first.replaced()) << name << ": " << first.message;
      if (first.quality.pixels_identical) continue;
      ++requantised;
      Bytes stripped = first.bytes;
      const Layout layout = parse_layout(first.bytes);
      for (const Segment& s : layout.segments)
        if (is_quality_marker(s))
          stripped.erase(stripped.begin() + long(s.offset), stripped.begin() + long(s.end()));
      ASSERT_FALSE(has_quality_marker(parse_layout(stripped))) << name;
      const Outcome again = optimize(stripped, p);
      EXPECT_FALSE(again.replaced() && !again.quality.pixels_identical)
          << name << ": " << again.detail;
    }
  EXPECT_GT(requantised, 0);
  // The plain encoder's own file is no such table: it is requantised.
  Policy vl;
  vl.mode = Mode::kVisuallyLossless;
  const Outcome plain =
      optimize(testing::make_jpeg({.width = 320, .height = 240, .quality = 95, .markers = {}}), vl);
  ASSERT_TRUE(plain.replaced()) << plain.message;
  EXPECT_FALSE(plain.quality.pixels_identical) << plain.detail;
}

}  // namespace
}  // namespace lighten::jpeg
