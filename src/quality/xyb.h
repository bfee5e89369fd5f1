#pragma once

#include <cstddef>

namespace lighten {

// Linear light in [0, 1] for each 8-bit sRGB code value (IEC 61966-2-1 transfer function).
const float* srgb_to_linear_table();

// Converts linear sRGB to the XYB space of SSIMULACRA 2.1, rescaled by its "MakePositiveXYB" step
// so that all three components lie roughly in [0, 1]: X' = 14 X + 0.42, Y' = Y + 0.01,
// B' = B - Y + 0.55. Planar rows; reads and writes round_up(n, 8) elements of each row. The
// outputs may alias the inputs. A null `out_b` leaves B' out (a third of the work).
void linear_to_positive_xyb(const float* r, const float* g, const float* b, float* out_x,
                            float* out_y, float* out_b, size_t n);

}  // namespace lighten
