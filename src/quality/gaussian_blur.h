#pragma once

#include <cstddef>

namespace lighten {

// libjxl's recursive Gaussian (Charalampidis 2016, "Recursive Implementation of the Gaussian
// Filter Using Truncated Cosine Functions"), the blur SSIMULACRA 2 is defined with: three
// second-order sections in float, zero padding outside the image. In exact arithmetic it is a
// 9-tap FIR, but its poles sit on the unit circle, so float rounding leaves a small residue that
// drifts along rows and columns. The published scores include that residue (it is worth up to
// 2 points near 95 against an exact FIR), so we reproduce the recursion, operation for operation,
// rather than an idealised blur.
struct RecursiveGaussian {
  int radius = 0;  // "N" of the paper
  float n2[3]{};   // input weight of sections k = 1, 3, 5, (33)
  float d1[3]{};   // feedback weight
  // The recursion unrolled over 4 outputs, as libjxl's horizontal pass runs it.
  float mul_in[3][4]{}, mul_prev[3][4]{}, mul_prev2[3][4]{};
};

RecursiveGaussian make_recursive_gaussian(double sigma);
const RecursiveGaussian& ssimulacra2_gaussian();  // sigma 1.5 (radius 5)

// Horizontal pass over one row of n samples (libjxl's FastGaussian1D, 4 outputs per step).
void gaussian_blur_row(const RecursiveGaussian& rg, const float* in, float* out, size_t n);
// The same over `count` rows (faster than one at a time).
void gaussian_blur_rows(const RecursiveGaussian& rg, const float* const* in, float* const* out,
                        int count, size_t n);

// One step n of the vertical pass over `columns` columns (a multiple of 8): `top` is input row
// n - N - 1 and `bottom` row n + N - 1, nullptr where outside the image. `state` points to six
// rows: each section's output at n - 1 (0..2) and n - 2 (3..5), zero before the first step
// (n = 1 - N); the step writes output n over n - 2's rows and swaps the pointers, so the rows
// are never copied. Writes output row n to `out` unless it is nullptr (n < 0).
void gaussian_vertical_step(const RecursiveGaussian& rg, const float* top, const float* bottom,
                            float** state, float* out, size_t columns);

}  // namespace lighten
