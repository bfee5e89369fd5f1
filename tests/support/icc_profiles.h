// ICC profiles made by Little CMS for tests, and JPEGs that carry them.
#pragma once

#include <lcms2.h>

#include <algorithm>
#include <cmath>
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

// A press-like CMYK profile of lookup tables: inks that spread (dot gain) and absorb imperfectly,
// in linear-light sRGB, tabulated to XYZ on a 9-point grid (as the A2B0 tables of printers'
// profiles are). Ink amounts 0-1.
inline void printed_colour(const double ink[4], double rgb[3]) {
  // How much of red, green and blue light each of cyan, magenta, yellow and black absorbs.
  static constexpr double kAbsorbs[4][3] = {
      {0.92, 0.35, 0.10}, {0.15, 0.88, 0.30}, {0.02, 0.10, 0.90}, {0.93, 0.93, 0.92}};
  for (int k = 0; k < 3; ++k) {
    rgb[k] = 1.0;
    for (int i = 0; i < 4; ++i) rgb[k] *= 1.0 - kAbsorbs[i][k] * std::pow(ink[i], 0.75);
  }
}

inline cmsInt32Number sample_printed_xyz(const cmsUInt16Number in[], cmsUInt16Number out[],
                                         void* transform) {
  double ink[4], rgb[3];
  for (int i = 0; i < 4; ++i) ink[i] = in[i] / 65535.0;
  printed_colour(ink, rgb);
  float linear[3] = {float(rgb[0]), float(rgb[1]), float(rgb[2])};
  cmsDoTransform(static_cast<cmsHTRANSFORM>(transform), linear, out, 1);
  return 1;
}

// A profile of `space` samples (`inputs` channels a pixel) whose A2B0 is one table to XYZ of
// `grid` points a side, filled by `sampler` (16-bit samples in, 16-bit XYZ out) with `cargo`,
// between straight curves: the lutAtoBType a v4 profile stores it in. Named `description` when
// that is not null.
inline std::vector<uint8_t> table_profile(cmsProfileClassSignature device_class,
                                          cmsColorSpaceSignature space, int inputs, int grid,
                                          cmsSAMPLER16 sampler, void* cargo,
                                          const char* description) {
  cmsHPROFILE p = cmsCreateProfilePlaceholder(nullptr);
  cmsSetProfileVersion(p, 4.3);
  cmsSetDeviceClass(p, device_class);
  cmsSetColorSpace(p, space);
  cmsSetPCS(p, cmsSigXYZData);
  if (description) {
    cmsMLU* name = cmsMLUalloc(nullptr, 1);
    cmsMLUsetASCII(name, "en", "US", description);
    cmsWriteTag(p, cmsSigProfileDescriptionTag, name);
    cmsMLUfree(name);
  }
  cmsPipeline* lut = cmsPipelineAlloc(nullptr, cmsUInt32Number(inputs), 3);
  cmsStage* table =
      cmsStageAllocCLut16bit(nullptr, cmsUInt32Number(grid), cmsUInt32Number(inputs), 3, nullptr);
  cmsStageSampleCLut16bit(table, sampler, cargo, 0);
  cmsPipelineInsertStage(lut, cmsAT_END,
                         cmsStageAllocToneCurves(nullptr, cmsUInt32Number(inputs), nullptr));
  cmsPipelineInsertStage(lut, cmsAT_END, table);
  cmsPipelineInsertStage(lut, cmsAT_END, cmsStageAllocToneCurves(nullptr, 3, nullptr));
  cmsWriteTag(p, cmsSigAToB0Tag, lut);
  cmsWriteTag(p, cmsSigMediaWhitePointTag, cmsD50_XYZ());
  cmsPipelineFree(lut);
  return saved_profile(p);
}

inline std::vector<uint8_t> printed_cmyk_profile() {
  cmsHPROFILE linear = rgb_profile(kSrgbPrimaries, kD65, 1.0);
  cmsHPROFILE xyz = cmsCreateXYZProfile();
  cmsHTRANSFORM t = cmsCreateTransform(linear, TYPE_RGB_FLT, xyz, TYPE_XYZ_16,
                                       INTENT_RELATIVE_COLORIMETRIC, cmsFLAGS_NOOPTIMIZE);
  std::vector<uint8_t> icc = table_profile(cmsSigOutputClass, cmsSigCmykData, 4, 9,
                                           sample_printed_xyz, t, "Test press CMYK");
  cmsDeleteTransform(t);
  cmsCloseProfile(xyz);
  cmsCloseProfile(linear);
  return icc;
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
