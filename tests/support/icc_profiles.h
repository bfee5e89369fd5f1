// ICC profiles made by Little CMS for tests, and JPEGs that carry them.
#pragma once

#include <lcms2.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

namespace lighten::testing {

// The bytes of `p`, which is closed.
inline std::vector<uint8_t> saved_profile(cmsHPROFILE p) {
  cmsUInt32Number size = 0;
  cmsSaveProfileToMem(p, nullptr, &size);
  std::vector<uint8_t> bytes(size);
  cmsSaveProfileToMem(p, bytes.data(), &size);
  cmsCloseProfile(p);
  return bytes;
}

// An RGB matrix-shaper profile of the given primaries and white, one gamma for all three.
inline cmsHPROFILE rgb_profile(cmsCIExyYTRIPLE primaries, cmsCIExyY white, double gamma) {
  cmsToneCurve* curve = cmsBuildGamma(nullptr, gamma);
  cmsToneCurve* curves[3] = {curve, curve, curve};
  cmsHPROFILE p = cmsCreateRGBProfile(&white, &primaries, curves);
  cmsFreeToneCurve(curve);
  return p;
}

inline constexpr cmsCIExyY kD65{0.3127, 0.3290, 1.0}, kD50{0.3457, 0.3585, 1.0};
inline constexpr cmsCIExyYTRIPLE kSrgbPrimaries{{0.64, 0.33, 1}, {0.30, 0.60, 1}, {0.15, 0.06, 1}};

inline std::vector<uint8_t> adobe_rgb_profile() {
  return saved_profile(
      rgb_profile({{0.64, 0.33, 1}, {0.21, 0.71, 1}, {0.15, 0.06, 1}}, kD65, 563 / 256.0));
}
inline std::vector<uint8_t> prophoto_rgb_profile() {
  return saved_profile(
      rgb_profile({{0.7347, 0.2653, 1}, {0.1596, 0.8404, 1}, {0.0366, 0.0001, 1}}, kD50, 1.8));
}

// `jpeg` with an APP2 segment carrying `profile` in one chunk, right after SOI.
inline std::vector<uint8_t> with_icc_segment(const std::vector<uint8_t>& jpeg,
                                             const std::vector<uint8_t>& profile) {
  const std::string head("ICC_PROFILE\0\x01\x01", 14);
  const size_t length = 2 + head.size() + profile.size();
  // Sized once and filled by position (GCC 12 warns falsely on vector::insert).
  std::vector<uint8_t> out(jpeg.size() + 2 + length);
  auto at = std::copy_n(jpeg.begin(), 2, out.begin());
  const uint8_t marker[4] = {0xFF, 0xE2, uint8_t(length >> 8), uint8_t(length & 0xFF)};
  at = std::copy(std::begin(marker), std::end(marker), at);
  at = std::copy(head.begin(), head.end(), at);
  at = std::copy(profile.begin(), profile.end(), at);
  std::copy(jpeg.begin() + 2, jpeg.end(), at);
  return out;
}

}  // namespace lighten::testing
