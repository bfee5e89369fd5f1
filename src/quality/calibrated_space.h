// PDF's calibrated colour spaces (CalGray and CalRGB, ISO 32000-1 8.6.5.2-3) as ICC profiles, so
// that the metric reads an image in one as a viewer shows it: through the space's own tone curves
// and primaries rather than as sRGB. A CalRGB space with gamma 1.8 and wide primaries scores
// apart from the same samples read as sRGB as much as an Adobe or ProPhoto RGB profile does.
#pragma once

#include <array>
#include <cstdint>

#include "core/bytes.h"

namespace lighten {

struct CalibratedSpace {
  uint32_t channels = 3;                 // 1: CalGray, 3: CalRGB
  std::array<double, 3> white_point{};   // XYZ of the diffuse white; Y is 1
  std::array<double, 3> gamma{1, 1, 1};  // per component; CalGray uses the first
  // CalRGB's /Matrix: the XYZ of full A, of full B and of full C (XA YA ZA XB YB ZB XC YC ZC).
  std::array<double, 9> matrix{1, 0, 0, 0, 1, 0, 0, 0, 1};
};

// The space as a matrix-shaper ICC profile (its colorants adapted from the space's white point
// to the profile connection space's D50 by Bradford, as colour-managed viewers adapt it), or empty
// where the space breaks the standard's rules (a white point with X or Z not positive or Y not
// 1, a gamma not positive, a singular matrix), which viewers treat each their own way, or where
// a profile cannot hold it (a gamma outside 1/64 to 64, an adapted colorant beyond 16).
// /BlackPoint (zero almost everywhere) is not represented.
Bytes calibrated_profile(const CalibratedSpace& space);

}  // namespace lighten
