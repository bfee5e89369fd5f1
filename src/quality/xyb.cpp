#include "quality/xyb.h"

#include <array>
#include <bit>
#include <cmath>

#include "quality/simd.h"

namespace lighten {
namespace {

using simd::V8;
using simd::V8i;

// libjxl's opsin absorbance matrix and bias (frozen by the JPEG XL spec), in float as there.
constexpr float kM00 = 0.30f, kM02 = 0.078f, kM01 = 1.0f - kM02 - kM00;
constexpr float kM10 = 0.23f, kM12 = 0.078f, kM11 = 1.0f - kM12 - kM10;
constexpr float kM20 = 0.24342268924547819f, kM21 = 0.20476744424496821f, kM22 = 1.0f - kM20 - kM21;
constexpr float kBias = 0.0037930732552754493f;

// Cube root of positive x to float precision: a bit-level first guess (about 3 % off), then
// two Halley steps (cubic convergence). std::cbrt does not vectorise and dominates otherwise.
[[gnu::always_inline]] inline V8 cbrt_positive(const V8& x) {
  const V8i bits = std::bit_cast<V8i>(x);
  const V8 third = __builtin_convertvector(bits, V8) * (1.0f / 3.0f);
  V8i guess = __builtin_convertvector(third, V8i) + 709921077;
  V8 y = std::bit_cast<V8>(guess);
  for (int i = 0; i < 2; ++i) {
    const V8 y3 = y * y * y;
    y = y * (y3 + 2.0f * x) / (2.0f * y3 + x);
  }
  return x > 0.0f ? y : V8{};
}

std::array<float, 256> make_srgb_table() {
  std::array<float, 256> table{};
  for (int i = 0; i < 256; ++i) {
    const double v = i / 255.0;
    table[i] = static_cast<float>(v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4));
  }
  return table;
}

}  // namespace

const float* srgb_to_linear_table() {
  static const std::array<float, 256> kTable = make_srgb_table();
  return kTable.data();
}

LIGHTEN_MULTIVERSION
void linear_to_positive_xyb(const float* r, const float* g, const float* b, float* out_x,
                            float* out_y, float* out_b, size_t n) {
  const float neg_bias_cbrt = -std::cbrt(kBias);
  for (size_t i = 0; i < n; i += simd::kLanes) {
    const V8 vr = simd::load(r + i), vg = simd::load(g + i), vb = simd::load(b + i);
    // Clamp as libjxl does (only matters for out-of-gamut input).
    const V8 mixed0 = simd::max(kM00 * vr + kM01 * vg + kM02 * vb + kBias, V8{});
    const V8 mixed1 = simd::max(kM10 * vr + kM11 * vg + kM12 * vb + kBias, V8{});
    const V8 l = cbrt_positive(mixed0) + neg_bias_cbrt;
    const V8 m = cbrt_positive(mixed1) + neg_bias_cbrt;
    const V8 x = 0.5f * (l - m);
    const V8 y = 0.5f * (l + m);
    if (out_b) {
      const V8 mixed2 = simd::max(kM20 * vr + kM21 * vg + kM22 * vb + kBias, V8{});
      const V8 s = cbrt_positive(mixed2) + neg_bias_cbrt;
      simd::store(out_b + i, (s - y) + 0.55f);
    }
    simd::store(out_x + i, x * 14.0f + 0.42f);
    simd::store(out_y + i, y + 0.01f);
  }
}

}  // namespace lighten
