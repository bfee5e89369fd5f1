#include "quality/gaussian_blur.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "quality/simd.h"

namespace lighten {
namespace {

using V4 = float __attribute__((vector_size(16)));

[[gnu::always_inline]] inline V4 load4(const float* p) {
  V4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
// Lane i takes v[i - k], zeros enter at lane 0 (Highway's ShiftLeftLanes).
template <int k>
[[gnu::always_inline]] inline V4 shift_lanes(const V4& v) {
  V4 r{};
  for (int i = k; i < 4; ++i) r[i] = v[i - k];
  return r;
}

}  // namespace

RecursiveGaussian make_recursive_gaussian(double sigma) {
  // Equation numbers refer to the paper; the maths is libjxl's CreateRecursiveGaussian.
  constexpr double kPi = 3.141592653589793238;
  const double radius = std::round(3.2795 * sigma + 0.2546);  // (57)
  const double w = kPi / (2.0 * radius);
  const double omega[3] = {w, 3.0 * w, 5.0 * w};
  const double p1 = 1.0 / std::tan(0.5 * omega[0]);  // (37)
  const double p3 = -1.0 / std::tan(0.5 * omega[1]);
  const double p5 = 1.0 / std::tan(0.5 * omega[2]);
  const double r1 = p1 * p1 / std::sin(omega[0]);  // (44)
  const double r3 = -p3 * p3 / std::sin(omega[1]);
  const double r5 = p5 * p5 / std::sin(omega[2]);
  double rho[3];  // (50)
  for (int i = 0; i < 3; ++i) {
    rho[i] = std::exp(-0.5 * sigma * sigma * omega[i] * omega[i]) / radius;
  }
  const double d13 = p1 * r3 - r1 * p3;  // (52)
  const double d35 = p3 * r5 - r3 * p5;
  const double d51 = p5 * r1 - r5 * p1;
  const double zeta15 = d35 / d13, zeta35 = d51 / d13;
  // Solve A beta = gamma, (53)-(56), by Cramer's rule.
  const double a[3][3] = {{p1, p3, p5}, {r1, r3, r5}, {zeta15, zeta35, 1.0}};
  const double gamma[3] = {1.0, radius * radius - sigma * sigma,
                           zeta15 * rho[0] + zeta35 * rho[1] + rho[2]};
  auto det3 = [](const double m[3][3]) {
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
           m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  };
  const double det = det3(a);
  RecursiveGaussian rg;
  rg.radius = static_cast<int>(radius);
  for (int i = 0; i < 3; ++i) {
    double m[3][3];
    for (int row = 0; row < 3; ++row) {
      for (int col = 0; col < 3; ++col) m[row][col] = col == i ? gamma[row] : a[row][col];
    }
    const double beta = det3(m) / det;
    const double n2 = -beta * std::cos(omega[i] * (radius + 1.0));  // (33)
    const double d1 = -2.0 * std::cos(omega[i]);
    const double d2 = d1 * d1;
    rg.n2[i] = static_cast<float>(n2);
    rg.d1[i] = static_cast<float>(d1);
    // (35) expanded over four consecutive outputs.
    const double prev[4] = {-d1, d2 - 1.0, -d2 * d1 + 2.0 * d1, d2 * d2 - 3.0 * d2 + 1.0};
    const double prev2[4] = {-1.0, d1, -d2 + 1.0, d2 * d1 - 2.0 * d1};
    const double in[4] = {n2, -d1 * n2, d2 * n2 - n2, -d2 * d1 * n2 + 2.0 * d1 * n2};
    for (int lane = 0; lane < 4; ++lane) {
      rg.mul_prev[i][lane] = static_cast<float>(prev[lane]);
      rg.mul_prev2[i][lane] = static_cast<float>(prev2[lane]);
      rg.mul_in[i][lane] = static_cast<float>(in[lane]);
    }
  }
  return rg;
}

const RecursiveGaussian& ssimulacra2_gaussian() {
  static const RecursiveGaussian kGaussian = make_recursive_gaussian(1.5);
  return kGaussian;
}

namespace {

template <int lane>
[[gnu::always_inline]] inline V4 broadcast(const V4& v) {
  return __builtin_shufflevector(v, v, lane, lane, lane, lane);
}

// The horizontal pass over 2 * pairs rows in lockstep. The recursion is a long dependency chain
// per row, so interleaving independent rows keeps the FMA units busy, and two rows share one
// 8-lane vector (4 lanes each, broadcasts within each half). Each row sees exactly the operations
// libjxl's FastGaussian1D performs with its 4-lane vectors.
// GCC 12 at -O3 wrongly reports the broadcast state vectors as maybe uninitialised.
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
template <int pairs>
[[gnu::always_inline]] inline void blur_row_pairs(const RecursiveGaussian& rg,
                                                  const float* const* in, float* const* out,
                                                  size_t n) {
  using simd::V8;
  constexpr int count = 2 * pairs;
  const ptrdiff_t size = static_cast<ptrdiff_t>(n);
  const ptrdiff_t radius = rg.radius;
  auto twice = [](const V4& v) { return __builtin_shufflevector(v, v, 0, 1, 2, 3, 0, 1, 2, 3); };
  V8 mul_in[3], mul_in1[3], mul_in2[3], mul_in3[3], mul_prev[3], mul_prev2[3];
  for (int k = 0; k < 3; ++k) {
    const V4 m = load4(rg.mul_in[k]);
    mul_in[k] = twice(m);
    mul_in1[k] = twice(shift_lanes<1>(m));
    mul_in2[k] = twice(shift_lanes<2>(m));
    mul_in3[k] = twice(shift_lanes<3>(m));
    mul_prev[k] = twice(load4(rg.mul_prev[k]));
    mul_prev2[k] = twice(load4(rg.mul_prev2[k]));
  }
  // One output with bounds checks; lane 0 of the unrolled weights is the plain recursion.
  float prev[count][3] = {}, prev2[count][3] = {};
  auto scalar_step = [&](ptrdiff_t i) {
    const ptrdiff_t left = i - radius - 1, right = i + radius - 1;
    for (int r = 0; r < count; ++r) {
      const float sum = (left >= 0 ? in[r][left] : 0.0f) + (right < size ? in[r][right] : 0.0f);
      float y[3];
      for (int k = 0; k < 3; ++k) {
        y[k] = sum * rg.mul_in[k][0];
        y[k] = rg.mul_prev2[k][0] * prev2[r][k] + y[k];
        y[k] = rg.mul_prev[k][0] * prev[r][k] + y[k];
        prev2[r][k] = prev[r][k];
        prev[r][k] = y[k];
      }
      if (i >= 0) out[r][i] = y[0] + (y[1] + y[2]);
    }
  };
  ptrdiff_t i = 1 - radius;
  const ptrdiff_t first_aligned = std::min<ptrdiff_t>((radius + 1 + 3) / 4 * 4, size);
  for (; i < first_aligned; ++i) scalar_step(i);
  V8 vprev[pairs][3], vprev2[pairs][3];
  for (int p = 0; p < pairs; ++p) {
    for (int k = 0; k < 3; ++k) {
      const float a = prev[2 * p][k], b = prev[2 * p + 1][k];
      const float a2 = prev2[2 * p][k], b2 = prev2[2 * p + 1][k];
      vprev[p][k] = V8{a, a, a, a, b, b, b, b};
      vprev2[p][k] = V8{a2, a2, a2, a2, b2, b2, b2, b2};
    }
  }
  for (; i < size - radius + 1 - 3; i += 4) {
    for (int p = 0; p < pairs; ++p) {
      const float* a = in[2 * p];
      const float* b = in[2 * p + 1];
      const V4 sum_a = load4(a + i - radius - 1) + load4(a + i + radius - 1);
      const V4 sum_b = load4(b + i - radius - 1) + load4(b + i + radius - 1);
      const V8 sum = __builtin_shufflevector(sum_a, sum_b, 0, 1, 2, 3, 4, 5, 6, 7);
      const V8 in0 = __builtin_shufflevector(sum, sum, 0, 0, 0, 0, 4, 4, 4, 4);
      const V8 in1 = __builtin_shufflevector(sum, sum, 1, 1, 1, 1, 5, 5, 5, 5);
      const V8 in2 = __builtin_shufflevector(sum, sum, 2, 2, 2, 2, 6, 6, 6, 6);
      const V8 in3 = __builtin_shufflevector(sum, sum, 3, 3, 3, 3, 7, 7, 7, 7);
      V8 y[3];
      for (int k = 0; k < 3; ++k) {
        y[k] = in0 * mul_in[k];
        y[k] = mul_in1[k] * in1 + y[k];
        y[k] = mul_in2[k] * in2 + y[k];
        y[k] = mul_in3[k] * in3 + y[k];
        y[k] = mul_prev2[k] * vprev2[p][k] + y[k];
        y[k] = mul_prev[k] * vprev[p][k] + y[k];
        vprev2[p][k] = __builtin_shufflevector(y[k], y[k], 2, 2, 2, 2, 6, 6, 6, 6);
        vprev[p][k] = __builtin_shufflevector(y[k], y[k], 3, 3, 3, 3, 7, 7, 7, 7);
      }
      const V8 total = y[0] + (y[1] + y[2]);
      std::memcpy(out[2 * p] + i, &total, 4 * sizeof(float));
      std::memcpy(out[2 * p + 1] + i, reinterpret_cast<const float*>(&total) + 4,
                  4 * sizeof(float));
    }
  }
  for (int p = 0; p < pairs; ++p) {
    for (int k = 0; k < 3; ++k) {
      prev[2 * p][k] = vprev[p][k][0];
      prev[2 * p + 1][k] = vprev[p][k][4];
      prev2[2 * p][k] = vprev2[p][k][0];
      prev2[2 * p + 1][k] = vprev2[p][k][4];
    }
  }
  for (; i < size; ++i) scalar_step(i);
}
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace

LIGHTEN_MULTIVERSION
void gaussian_blur_rows(const RecursiveGaussian& rg, const float* const* in, float* const* out,
                        int count, size_t n) {
  // A lone row is paired with itself (computed twice, written twice: harmless).
  for (; count >= 4; count -= 4, in += 4, out += 4) blur_row_pairs<2>(rg, in, out, n);
  if (count >= 2) {
    blur_row_pairs<1>(rg, in, out, n);
    count -= 2, in += 2, out += 2;
  }
  if (count == 1) {
    const float* in2[2] = {in[0], in[0]};
    float* out2[2] = {out[0], out[0]};
    blur_row_pairs<1>(rg, in2, out2, n);
  }
}

void gaussian_blur_row(const RecursiveGaussian& rg, const float* in, float* out, size_t n) {
  gaussian_blur_rows(rg, &in, &out, 1, n);
}

LIGHTEN_MULTIVERSION
void gaussian_vertical_step(const RecursiveGaussian& rg, const float* top, const float* bottom,
                            float** state, float* out, size_t columns) {
  using simd::V8;
  const float n2_1 = rg.n2[0], n2_3 = rg.n2[1], n2_5 = rg.n2[2];
  const float d1_1 = rg.d1[0], d1_3 = rg.d1[1], d1_5 = rg.d1[2];
  const float *p1 = state[0], *p3 = state[1], *p5 = state[2];
  float *pp1 = state[3], *pp3 = state[4], *pp5 = state[5];
  for (size_t x = 0; x < columns; x += simd::kLanes) {
    V8 sum;
    if (top && bottom) {
      sum = simd::load(top + x) + simd::load(bottom + x);
    } else {
      sum = top ? simd::load(top + x) : bottom ? simd::load(bottom + x) : V8{};
    }
    const V8 a1 = simd::load(p1 + x), a3 = simd::load(p3 + x), a5 = simd::load(p5 + x);
    const V8 y1 = n2_1 * sum + (-(d1_1 * a1) - simd::load(pp1 + x));
    const V8 y3 = n2_3 * sum + (-(d1_3 * a3) - simd::load(pp3 + x));
    const V8 y5 = n2_5 * sum + (-(d1_5 * a5) - simd::load(pp5 + x));
    // Output n - 2 is read for the last time here: its rows take output n.
    simd::store(pp1 + x, y1);
    simd::store(pp3 + x, y3);
    simd::store(pp5 + x, y5);
    if (out) simd::store(out + x, y1 + (y3 + y5));
  }
  for (int k = 0; k < 3; ++k) std::swap(state[k], state[k + 3]);
}

}  // namespace lighten
