// Percentiles and summaries: numpy's default (linear) definition.
#include <gtest/gtest.h>

#include <vector>

#include "probe/stats.h"

namespace lighten::probe {
namespace {

TEST(Stats, PercentilesInterpolateBetweenRanks) {
  const std::vector<double> v{1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0), 1);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 100), 4);
  EXPECT_NEAR(percentile_sorted(v, 95), 3.85, 1e-12);  // numpy.percentile([1,2,3,4], 95)
}

TEST(Stats, SummaryOfUnsortedValues) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  const Distribution d = summarize(v);
  EXPECT_EQ(d.count, 100u);
  EXPECT_DOUBLE_EQ(d.sum, 5050);
  EXPECT_DOUBLE_EQ(d.mean, 50.5);
  EXPECT_DOUBLE_EQ(d.min, 1);
  EXPECT_DOUBLE_EQ(d.max, 100);
  EXPECT_DOUBLE_EQ(d.p50, 50.5);
  EXPECT_NEAR(d.p95, 95.05, 1e-9);
  EXPECT_NEAR(d.p99, 99.01, 1e-9);
}

TEST(Stats, EmptyAndSingle) {
  EXPECT_EQ(summarize(std::vector<double>{}).count, 0u);
  EXPECT_DOUBLE_EQ(percentile_sorted(std::vector<double>{}, 50), 0);
  const Distribution one = summarize(std::vector<double>{7});
  EXPECT_DOUBLE_EQ(one.p50, 7);
  EXPECT_DOUBLE_EQ(one.p99, 7);
}

}  // namespace
}  // namespace lighten::probe
