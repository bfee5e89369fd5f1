// Perceptual modes on JPEGs that are not YCbCr: RGB-coded (Adobe transform 0), CMYK and YCCK.
// The metric reads CMYK rendered as RGB; everything else is as for YCbCr photos.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "formats/jpeg/coefficients.h"
#include "formats/jpeg/markers.h"
#include "formats/jpeg/metadata.h"
#include "formats/jpeg/perceptual.h"
#include "lighten/compare.h"
#include "lighten/lighten.h"
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

}  // namespace
}  // namespace lighten::jpeg
