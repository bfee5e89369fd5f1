// The bands of rows a large image is searched on first (sample_bands).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "formats/jpeg/perceptual.h"

namespace lighten::jpeg {
namespace {

uint64_t sampled_pixels(const std::vector<McuRows>& bands, uint32_t width, unsigned mcu_height) {
  uint64_t rows = 0;
  for (const McuRows& b : bands) rows += b.count;
  return rows * mcu_height * width;
}

// Every band lies inside the image, whole MCU rows of at least 256 pixels, in order and apart.
void expect_well_formed(const std::vector<McuRows>& bands, uint32_t height, unsigned mcu_height) {
  const unsigned whole_rows = height / mcu_height;
  for (size_t i = 0; i < bands.size(); ++i) {
    EXPECT_GE(bands[i].count * mcu_height, 256u);
    EXPECT_LE(bands[i].first + bands[i].count, whole_rows);
    if (i > 0) {
      EXPECT_GT(bands[i].first, bands[i - 1].first + bands[i - 1].count);
    }
  }
}

TEST(SampleBands, SmallImagesAreSearchedWhole) {
  EXPECT_TRUE(sample_bands(1600, 1200, 16).empty());  // under 3 MP
  EXPECT_TRUE(sample_bands(4000, 1000, 16).empty());  // 4 MP, but under 1024 rows
}

TEST(SampleBands, PhotosGetAQuarterOfTheirRowsSpreadOverTheImage) {
  struct Case {
    uint32_t width, height;
    unsigned mcu_height;
    size_t bands;
  };
  // 12 MP 4:2:0, 16 MP 4:2:2 (8-pixel MCU rows) and 22 MP 4:4:4 as the corpus's photos are, 48 and
  // 96 MP, and a tall 30 MP strip.
  for (const Case c :
       {Case{4032, 3024, 16, 3}, Case{4928, 3264, 8, 3}, Case{5760, 3840, 8, 4},
        Case{8064, 6048, 16, 6}, Case{12000, 8000, 16, 8}, Case{2000, 15000, 16, 15}}) {
    const std::vector<McuRows> bands = sample_bands(c.width, c.height, c.mcu_height);
    EXPECT_EQ(bands.size(), c.bands) << c.width << "x" << c.height;
    expect_well_formed(bands, c.height, c.mcu_height);
    const double share =
        double(sampled_pixels(bands, c.width, c.mcu_height)) / (double(c.width) * c.height);
    EXPECT_GT(share, 0.2) << c.width << "x" << c.height;
    EXPECT_LT(share, 0.3) << c.width << "x" << c.height;
    // Spread over the image: the first in its upper third, the last in its lower third.
    ASSERT_FALSE(bands.empty());
    EXPECT_LT(bands.front().first * c.mcu_height, c.height / 3);
    EXPECT_GT((bands.back().first + bands.back().count) * c.mcu_height, 2 * c.height / 3);
  }
}

}  // namespace
}  // namespace lighten::jpeg
