#pragma once

// Portable 8-lane float vectors (GCC/Clang vector extensions). They compile to SSE pairs on the
// x86-64 baseline and to AVX registers inside functions marked LIGHTEN_MULTIVERSION.
// Internal to src/quality: include only from .cpp files.

#include <cstdint>
#include <cstring>

// Passing 32-byte vectors between functions compiled for different targets changes the ABI; our
// helpers are always inlined, so the note does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define LIGHTEN_MULTIVERSION __attribute__((target_clones("arch=x86-64-v3", "default")))
// AVX2 registers without FMA, for code whose rounding must follow plain multiply and add.
#define LIGHTEN_MULTIVERSION_NO_FMA __attribute__((target_clones("avx2", "default")))
#else
#define LIGHTEN_MULTIVERSION
#define LIGHTEN_MULTIVERSION_NO_FMA
#endif

namespace lighten::simd {

constexpr int kLanes = 8;
using V8 = float __attribute__((vector_size(32)));
using V8i = int32_t __attribute__((vector_size(32)));

[[gnu::always_inline]] inline V8 load(const float* p) {
  V8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store(float* p, const V8& v) { std::memcpy(p, &v, sizeof v); }
[[gnu::always_inline]] inline V8 splat(float f) { return V8{} + f; }
[[gnu::always_inline]] inline V8 max(const V8& a, const V8& b) { return a > b ? a : b; }
[[gnu::always_inline]] inline V8 abs(const V8& a) { return a < 0.0f ? -a : a; }
[[gnu::always_inline]] inline float sum(const V8& v) {
  float s = 0.0f;
  for (int i = 0; i < kLanes; ++i) s += v[i];
  return s;
}

}  // namespace lighten::simd
