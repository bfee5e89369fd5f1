// Butteraugli through libjxl's public API (jxl/butteraugli.h, libjxl 0.7), for reports and spot
// checks: it takes seconds and gigabytes on a 12 MP pair, so the search never calls it.
#pragma once

#include <optional>

#include "quality/image.h"

namespace lighten {

class ProfileColour;

// The max-norm butteraugli distance of `distorted` against `reference` (1.0 is about the
// threshold of a visible difference), or nullopt when this build has no libjxl or libjxl fails.
// Each image is read through its colour (its ICC profile, as SSIMULACRA2 reads it; null: sRGB).
// Throws std::invalid_argument when sizes differ or an image does not match its colour.
std::optional<double> butteraugli_distance(const ImageRgb8& reference, const ImageRgb8& distorted,
                                           const ProfileColour* reference_colour = nullptr,
                                           const ProfileColour* distorted_colour = nullptr);

}  // namespace lighten
