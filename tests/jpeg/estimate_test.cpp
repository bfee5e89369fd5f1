// The scan estimates the progressive search ranks its candidates by: the one-pass estimate of
// every first scan from one start agrees with estimating each band alone, and the baseline
// lower bound never exceeds what baseline writing takes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "formats/jpeg/coefficients.h"
#include "formats/jpeg/estimate.h"
#include "formats/jpeg/huffman_stats.h"
#include "support/corpus.h"
#include "support/jpeg_maker.h"

namespace lighten::jpeg {
namespace {

using testing::JpegRecipe;

void expect_first_scans_agree(CoefficientImage& image, const std::string& what) {
  for (int ci = 0; ci < image.info().num_components; ++ci)
    for (unsigned step : {1u, 3u}) {
      ComponentIndex index(image, ci, step);
      for (unsigned restart : {0u, 1u, 5u}) {
        for (int ss : {1, 2, 6, 30, 63})
          for (int al = 0; al <= 3; ++al) {
            std::vector<int> ends;
            for (int e : {1, 2, 5, 8, 13, 20, 29, 41, 62, 63})
              if (e >= ss) ends.push_back(e);
            const std::vector<size_t> together = index.estimate_first_scans(ss, ends, al, restart);
            ASSERT_EQ(together.size(), ends.size());
            for (size_t j = 0; j < ends.size(); ++j)
              EXPECT_EQ(together[j], index.estimate({ss, ends[j], 0, al}, restart))
                  << what << " component " << ci << " rows 1/" << step << " restart " << restart
                  << " band " << ss << ".." << ends[j] << " al " << al;
          }
      }
    }
}

TEST(ScanEstimate, FirstScansFromOneStartAgreeWithEachBandAlone) {
  for (const JpegRecipe& r :
       {JpegRecipe{.width = 97, .height = 61, .quality = 95},
        JpegRecipe{.width = 40, .height = 300, .components = 1, .quality = 40},
        JpegRecipe{.width = 130, .height = 70, .quality = 70, .h_samp = 2, .v_samp = 2}}) {
    CoefficientImage image(testing::make_jpeg(r), nullptr);
    expect_first_scans_agree(image, std::to_string(r.width) + "x" + std::to_string(r.height));
  }
}

TEST(ScanEstimate, FirstScansAgreeOnACorpusPhoto) {
  const auto path = testing::shared_dir() / "corpus" / "jpeg" / "jolla.jpg";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  CoefficientImage image(testing::read_file(path), nullptr);
  expect_first_scans_agree(image, "jolla.jpg");
}

TEST(ScanEstimate, RejectsEndsOutsideTheBand) {
  CoefficientImage image(testing::make_jpeg({}), nullptr);
  ComponentIndex index(image, 0);
  EXPECT_TRUE(index.estimate_first_scans(5, {}, 0, 0).empty());
  for (const auto& ends : {std::vector<int>{3, 9}, std::vector<int>{9, 7}, std::vector<int>{64}})
    for (size_t bytes : index.estimate_first_scans(5, ends, 0, 0)) EXPECT_EQ(bytes, SIZE_MAX);
  for (size_t bytes : index.estimate_first_scans(1, {63}, 4, 0)) EXPECT_EQ(bytes, SIZE_MAX);
}

TEST(ScanEstimate, BaselineLowerBoundHoldsAndIsClose) {
  for (const JpegRecipe& r : {JpegRecipe{.width = 200, .height = 150, .quality = 92},
                              JpegRecipe{.width = 71, .height = 53, .components = 1},
                              JpegRecipe{.width = 59, .height = 41, .components = 4},
                              JpegRecipe{.width = 1, .height = 1}}) {
    CoefficientImage image(testing::make_jpeg(r), nullptr);
    for (unsigned restart : {0u, 2u}) {
      const auto counts = count_sequential_symbols(image, restart);
      ASSERT_TRUE(counts.has_value());
      WriteOptions o;
      o.restart_interval = restart;
      const size_t written = write_coefficients(image, o).size();
      const uint64_t bound = sequential_bytes_lower_bound(*counts);
      EXPECT_LT(bound, written) << r.width << "x" << r.height;
      // Headers (DQT, SOF, DHT, SOS) and the Huffman codes' excess over entropy make the rest.
      if (written > 10000) {
        EXPECT_GT(double(bound), 0.9 * double(written)) << r.width;
      }
    }
  }
}

}  // namespace
}  // namespace lighten::jpeg
