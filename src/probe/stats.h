// Order statistics of measured samples.
#pragma once

#include <span>

#include "lighten/probe.h"

namespace lighten::probe {

// Percentile p (0..100) of sorted values, linearly interpolated between ranks (the same
// definition as numpy's default), so p50 of {1, 2} is 1.5. 0 for no values.
double percentile_sorted(std::span<const double> sorted, double p);
// count, sum, mean, min, max, p50, p95, p99 of `values` (in any order).
Distribution summarize(std::span<const double> values);

}  // namespace lighten::probe
