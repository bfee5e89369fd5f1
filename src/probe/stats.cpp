#include "probe/stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace lighten::probe {

double percentile_sorted(std::span<const double> sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * double(sorted.size() - 1);
  const size_t below = size_t(std::floor(rank));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double frac = rank - double(below);
  return sorted[below] + (sorted[above] - sorted[below]) * frac;
}

Distribution summarize(std::span<const double> values) {
  Distribution d;
  if (values.empty()) return d;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  d.count = sorted.size();
  for (double v : sorted) d.sum += v;
  d.mean = d.sum / double(d.count);
  d.min = sorted.front();
  d.max = sorted.back();
  d.p50 = percentile_sorted(sorted, 50);
  d.p95 = percentile_sorted(sorted, 95);
  d.p99 = percentile_sorted(sorted, 99);
  return d;
}

}  // namespace lighten::probe
