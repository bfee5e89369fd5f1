// Butteraugli through libjxl's public API (jxl/butteraugli.h, libjxl 0.7), for reports and spot
// checks: it takes seconds and gigabytes on a 12 MP pair, so the search never calls it.
#pragma once

#include <optional>

#include "quality/image.h"

namespace lighten {

// The max-norm butteraugli distance of `distorted` against `reference` (1.0 is about the
// threshold of a visible difference), or nullopt when this build has no libjxl or libjxl fails.
// Throws std::invalid_argument when sizes differ.
std::optional<double> butteraugli_distance(const ImageRgb8& reference, const ImageRgb8& distorted);

}  // namespace lighten
