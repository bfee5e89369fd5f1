#include "quality/colour_profile.h"

#include <lcms2.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <vector>

#include "quality/xyb.h"

namespace lighten {

std::optional<std::string> icc_header_data_space(ByteView icc) {
  if (icc.size() < 20) return std::nullopt;
  return std::string(icc.begin() + 16, icc.begin() + 20);
}
namespace {

struct ProfileCloser {
  void operator()(void* p) const { cmsCloseProfile(p); }
};
using Profile = std::unique_ptr<void, ProfileCloser>;

// Linear-light sRGB as a profile: sRGB's primaries and D65 white with straight tone curves.
Profile linear_srgb_profile() {
  const cmsCIExyY d65{0.3127, 0.3290, 1.0};
  const cmsCIExyYTRIPLE primaries{{0.64, 0.33, 1.0}, {0.30, 0.60, 1.0}, {0.15, 0.06, 1.0}};
  cmsToneCurve* straight = cmsBuildGamma(nullptr, 1.0);
  if (!straight) return nullptr;
  cmsToneCurve* curves[3] = {straight, straight, straight};
  Profile p(cmsCreateRGBProfile(&d65, &primaries, curves));
  cmsFreeToneCurve(straight);
  return p;
}

// The columns are the red, green and blue colorants (XYZ, adapted to D50 as ICC profiles keep
// them): linear RGB to the profile connection space.
std::optional<std::array<double, 9>> colorant_matrix(cmsHPROFILE p) {
  const auto* r = static_cast<const cmsCIEXYZ*>(cmsReadTag(p, cmsSigRedColorantTag));
  const auto* g = static_cast<const cmsCIEXYZ*>(cmsReadTag(p, cmsSigGreenColorantTag));
  const auto* b = static_cast<const cmsCIEXYZ*>(cmsReadTag(p, cmsSigBlueColorantTag));
  if (!r || !g || !b) return std::nullopt;
  return std::array<double, 9>{r->X, g->X, b->X, r->Y, g->Y, b->Y, r->Z, g->Z, b->Z};
}

std::optional<std::array<double, 9>> inverse(const std::array<double, 9>& m) {
  const double det = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
                     m[2] * (m[3] * m[7] - m[4] * m[6]);
  if (!(std::abs(det) > 1e-9)) return std::nullopt;
  return std::array<double, 9>{(m[4] * m[8] - m[5] * m[7]) / det, (m[2] * m[7] - m[1] * m[8]) / det,
                               (m[1] * m[5] - m[2] * m[4]) / det, (m[5] * m[6] - m[3] * m[8]) / det,
                               (m[0] * m[8] - m[2] * m[6]) / det, (m[2] * m[3] - m[0] * m[5]) / det,
                               (m[3] * m[7] - m[4] * m[6]) / det, (m[1] * m[6] - m[0] * m[7]) / det,
                               (m[0] * m[4] - m[1] * m[3]) / det};
}

// A tone curve at the 256 code values, in linear light; false when the tag is missing.
bool tabulate(cmsHPROFILE p, cmsTagSignature tag, std::array<float, 256>& out) {
  const auto* curve = static_cast<const cmsToneCurve*>(cmsReadTag(p, tag));
  if (!curve) return false;
  for (int v = 0; v < 256; ++v) out[size_t(v)] = cmsEvalToneCurveFloat(curve, float(v) / 255.0f);
  return true;
}

// Whether `c` reads every gray (1 channel) or every colour of a 16-step grid (3) as sRGB does.
bool reads_as_srgb(const ProfileColour& c) {
  constexpr double kTolerance = 1e-3;
  const float* srgb = srgb_to_linear_table();
  std::vector<uint8_t> samples;
  for (int r = 0; r < 256; r += c.channels() == 1 ? 1 : 17)
    for (int g = 0; g < (c.channels() == 1 ? 1 : 256); g += 17)
      for (int b = 0; b < (c.channels() == 1 ? 1 : 256); b += 17) {
        samples.push_back(uint8_t(r));
        if (c.channels() == 3) samples.insert(samples.end(), {uint8_t(g), uint8_t(b)});
      }
  const size_t n = samples.size() / c.channels();
  std::vector<float> linear(3 * n);
  c.to_linear(samples.data(), n, linear.data(), linear.data() + n, linear.data() + 2 * n);
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < 3; ++k) {
      const uint8_t v = samples[i * c.channels() + (c.channels() == 1 ? 0 : k)];
      if (!(std::abs(linear[k * n + i] - srgb[v]) <= kTolerance)) return false;
    }
  return true;
}

// Each code value's cell on a lattice of every `step`-th code value (the last cell takes 255)
// and its place in it.
struct LatticeCells {
  explicit LatticeCells(int step) {
    const int last = 255 / step - 1;
    for (int v = 0; v < 256; ++v) {
      cell[size_t(v)] = std::min(v / step, last);
      place[size_t(v)] = float(v - cell[size_t(v)] * step) / float(step);
    }
  }
  std::array<int, 256> cell;
  std::array<float, 256> place;
};

// A point of the cube at `origin` (node strides `sr`, `sg`, `sb`; fractions `fr`, `fg`, `fb`)
// interpolated in the tetrahedron that holds it: from the origin along the axis of the largest
// fraction, then the next, to the far corner.
inline void tetrahedral(const float* origin, size_t sr, size_t sg, size_t sb, float fr, float fg,
                        float fb, float out[3]) {
  size_t first, second;
  float f1, f2, f3;
  if (fr >= fg && fg >= fb) {
    first = sr, second = sr + sg, f1 = fr, f2 = fg, f3 = fb;
  } else if (fr >= fb && fb >= fg) {
    first = sr, second = sr + sb, f1 = fr, f2 = fb, f3 = fg;
  } else if (fb >= fr && fr >= fg) {
    first = sb, second = sr + sb, f1 = fb, f2 = fr, f3 = fg;
  } else if (fb >= fg && fg >= fr) {
    first = sb, second = sg + sb, f1 = fb, f2 = fg, f3 = fr;
  } else if (fg >= fb && fb >= fr) {
    first = sg, second = sg + sb, f1 = fg, f2 = fb, f3 = fr;
  } else {
    first = sg, second = sr + sg, f1 = fg, f2 = fr, f3 = fb;
  }
  const float* a = origin + first;
  const float* c = origin + second;
  const float* far = origin + sr + sg + sb;
  for (int k = 0; k < 3; ++k)
    out[k] = origin[k] + f1 * (a[k] - origin[k]) + f2 * (c[k] - a[k]) + f3 * (far[k] - c[k]);
}

}  // namespace

void ProfileColour::from_lattice(const uint8_t* samples, size_t n, float* r, float* g,
                                 float* b) const {
  if (channels_ == 1) {
    for (size_t i = 0; i < n; ++i) {
      const float* node = &lattice_[3 * size_t(samples[i])];
      r[i] = node[0], g[i] = node[1], b[i] = node[2];
    }
    return;
  }
  static const LatticeCells kCells(kLatticeStep);
  constexpr size_t kB = 3, kG = kB * kLatticeSide, kR = kG * kLatticeSide;  // node strides
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* s = samples + 3 * i;
    const float* origin =
        &lattice_[size_t(kCells.cell[s[0]]) * kR + size_t(kCells.cell[s[1]]) * kG +
                  size_t(kCells.cell[s[2]]) * kB];
    float out[3];
    tetrahedral(origin, kR, kG, kB, kCells.place[s[0]], kCells.place[s[1]], kCells.place[s[2]],
                out);
    r[i] = out[0], g[i] = out[1], b[i] = out[2];
  }
}

void ProfileColour::from_cmyk_lattice(const uint8_t* samples, size_t n, float* r, float* g,
                                      float* b) const {
  static const LatticeCells kCells(kCmykStep);
  constexpr size_t kY = 3, kM = kY * kCmykSide, kC = kM * kCmykSide, kK = kC * kCmykSide;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* s = samples + 4 * i;
    const float* origin =
        &lattice_[size_t(kCells.cell[s[3]]) * kK + size_t(kCells.cell[s[0]]) * kC +
                  size_t(kCells.cell[s[1]]) * kM + size_t(kCells.cell[s[2]]) * kY];
    const float fc = kCells.place[s[0]], fm = kCells.place[s[1]], fy = kCells.place[s[2]];
    float lower[3], upper[3];
    tetrahedral(origin, kC, kM, kY, fc, fm, fy, lower);
    tetrahedral(origin + kK, kC, kM, kY, fc, fm, fy, upper);
    const float fk = kCells.place[s[3]];
    r[i] = lower[0] + fk * (upper[0] - lower[0]);
    g[i] = lower[1] + fk * (upper[1] - lower[1]);
    b[i] = lower[2] + fk * (upper[2] - lower[2]);
  }
}

std::optional<ProfileColour> ProfileColour::from_icc(ByteView icc, uint32_t channels) {
  bool as_srgb = false;
  return read(icc, channels, as_srgb);
}

namespace {

float luminance(float r, float g, float b) { return 0.2126f * r + 0.7152f * g + 0.0722f * b; }

}  // namespace

// Whether the profile keeps colours apart as any real one does: its white well above its black,
// its grey ramp in many steps, and (RGB) its primaries spanning colour. A constant curve, a gamma
// of 0 or colorants of zero read every sample as one colour, and every candidate would then
// score 100: such a profile is not read.
bool ProfileColour::separates_colours(const ProfileColour& c) {
  const size_t n = c.channels_;
  const auto colour = [&](std::initializer_list<uint8_t> samples) {
    std::array<float, 3> rgb{};
    c.to_linear(std::data(samples), 1, &rgb[0], &rgb[1], &rgb[2]);
    return rgb;
  };
  const auto grey = [&](uint8_t v) {
    const std::array<uint8_t, 4> samples{v, v, v, v};
    std::array<float, 3> rgb{};
    c.to_linear(samples.data(), 1, &rgb[0], &rgb[1], &rgb[2]);
    return luminance(rgb[0], rgb[1], rgb[2]);
  };
  constexpr float kLeastContrast = 0.05f;  // of sRGB's white: real profiles span about 1
  if (!(std::abs(grey(255) - grey(0)) >= kLeastContrast)) return false;
  std::vector<float> ramp;
  for (int v = 0; v < 256; ++v) ramp.push_back(std::round(grey(uint8_t(v)) * 1e5f));
  std::sort(ramp.begin(), ramp.end());
  constexpr size_t kLeastSteps = 32;  // a lattice's interpolation gives hundreds
  if (size_t(std::unique(ramp.begin(), ramp.end()) - ramp.begin()) < kLeastSteps) return false;
  if (n != 3) return true;
  const auto k = colour({0, 0, 0});
  std::array<std::array<float, 3>, 3> m{};
  const std::array<std::array<float, 3>, 3> primaries = {colour({255, 0, 0}), colour({0, 255, 0}),
                                                         colour({0, 0, 255})};
  for (size_t i = 0; i < 3; ++i)
    for (size_t j = 0; j < 3; ++j) m[i][j] = primaries[i][j] - k[j];
  const double det = double(m[0][0]) * (double(m[1][1]) * m[2][2] - double(m[1][2]) * m[2][1]) -
                     double(m[0][1]) * (double(m[1][0]) * m[2][2] - double(m[1][2]) * m[2][0]) +
                     double(m[0][2]) * (double(m[1][0]) * m[2][1] - double(m[1][1]) * m[2][0]);
  return std::abs(det) >= 1e-3;  // sRGB's primaries: 1
}

std::optional<ProfileColour> ProfileColour::read(ByteView icc, uint32_t channels, bool& as_srgb) {
  as_srgb = false;
  if ((channels != 1 && channels != 3 && channels != 4) || icc.empty()) return std::nullopt;
  const Profile source(cmsOpenProfileFromMem(icc.data(), cmsUInt32Number(icc.size())));
  if (!source) return std::nullopt;
  const cmsColorSpaceSignature space = cmsGetColorSpace(source.get());
  const cmsColorSpaceSignature samples = channels == 1   ? cmsSigGrayData
                                         : channels == 3 ? cmsSigRgbData
                                                         : cmsSigCmykData;
  if (space != samples) return std::nullopt;
  const Profile target = linear_srgb_profile();
  if (!target) return std::nullopt;

  ProfileColour c;
  c.channels_ = channels;
  char text[256] = {};
  if (cmsGetProfileInfoASCII(source.get(), cmsInfoDescription, "en", "US", text, sizeof text))
    c.description_ = text;
  while (!c.description_.empty() && c.description_.back() == ' ') c.description_.pop_back();
  bool shaped = false;
  // A table for the perceptual intent (AToB0, or v4's float DToB0) comes before colorants and
  // curves (ICC.1 8.3: Little CMS, and viewers, read a profile that has both through it).
  const bool tabulated =
      cmsIsTag(source.get(), cmsSigAToB0Tag) || cmsIsTag(source.get(), cmsSigDToB0Tag);
  if (channels == 1 && !tabulated) {
    shaped = tabulate(source.get(), cmsSigGrayTRCTag, c.curves_[0]);
  } else if (channels == 3 && !tabulated) {
    const auto to_pcs = colorant_matrix(source.get());
    const auto srgb_to_pcs = colorant_matrix(target.get());
    const auto from_pcs = srgb_to_pcs ? inverse(*srgb_to_pcs) : std::nullopt;
    shaped = to_pcs && from_pcs && tabulate(source.get(), cmsSigRedTRCTag, c.curves_[0]) &&
             tabulate(source.get(), cmsSigGreenTRCTag, c.curves_[1]) &&
             tabulate(source.get(), cmsSigBlueTRCTag, c.curves_[2]);
    if (shaped)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          double sum = 0;
          for (int k = 0; k < 3; ++k)
            sum += (*from_pcs)[size_t(3 * i + k)] * (*to_pcs)[size_t(3 * k + j)];
          c.matrix_[size_t(3 * i + j)] = float(sum);
        }
  }
  if (!shaped) {
    const cmsUInt32Number format = channels == 1   ? TYPE_GRAY_8
                                   : channels == 3 ? TYPE_RGB_8
                                                   : TYPE_CMYK_8;
    cmsHTRANSFORM t = cmsCreateTransform(source.get(), format, target.get(), TYPE_RGB_FLT,
                                         INTENT_PERCEPTUAL, cmsFLAGS_NOCACHE);
    if (!t) return std::nullopt;
    std::vector<uint8_t> nodes;
    if (channels == 1) {
      for (int v = 0; v < 256; ++v) nodes.push_back(uint8_t(v));
    } else if (channels == 3) {
      for (int r = 0; r < kLatticeSide; ++r)
        for (int g = 0; g < kLatticeSide; ++g)
          for (int b = 0; b < kLatticeSide; ++b)
            nodes.insert(nodes.end(), {uint8_t(r * kLatticeStep), uint8_t(g * kLatticeStep),
                                       uint8_t(b * kLatticeStep)});
    } else {
      // The nodes are in samples, 255 - ink; Little CMS takes ink (its reversed 8-bit CMYK
      // does not go to float output).
      const auto ink = [](int node) { return uint8_t(255 - node * kCmykStep); };
      for (int k = 0; k < kCmykSide; ++k)
        for (int cyan = 0; cyan < kCmykSide; ++cyan)
          for (int m = 0; m < kCmykSide; ++m)
            for (int y = 0; y < kCmykSide; ++y)
              nodes.insert(nodes.end(), {ink(cyan), ink(m), ink(y), ink(k)});
    }
    const size_t count = nodes.size() / channels;
    c.lattice_.resize(3 * count);
    cmsDoTransform(t, nodes.data(), c.lattice_.data(), cmsUInt32Number(count));
    cmsDeleteTransform(t);
  }
  // A curve of negative gamma takes code 0 to 1e22 (Little CMS's stand-in for infinity), whose
  // squares overflow to infinity and make the score NaN. Real profiles keep every colour within a
  // few times sRGB's range; one that does not is not read, as one Little CMS cannot open.
  constexpr float kFarOutside = 16.0f;
  const auto sane = [](float v) { return std::abs(v) <= kFarOutside; };  // false for NaN
  for (const auto& curve : c.curves_)
    if (!std::all_of(curve.begin(), curve.end(), sane)) return std::nullopt;
  if (!std::all_of(c.matrix_.begin(), c.matrix_.end(), sane) ||
      !std::all_of(c.lattice_.begin(), c.lattice_.end(), sane))
    return std::nullopt;
  if (!separates_colours(c)) return std::nullopt;
  if (channels != 4 && reads_as_srgb(c)) {
    as_srgb = true;
    return std::nullopt;
  }
  return c;
}

bool ProfileColour::shows_as_srgb(ByteView icc, uint32_t channels) {
  bool as_srgb = false;
  if (channels == 1 || channels == 3) read(icc, channels, as_srgb);
  return as_srgb;
}

void ProfileColour::to_linear(const uint8_t* samples, size_t n, float* r, float* g,
                              float* b) const {
  if (channels_ == 4) {
    from_cmyk_lattice(samples, n, r, g, b);
    return;
  }
  if (!lattice_.empty()) {
    from_lattice(samples, n, r, g, b);
    return;
  }
  if (channels_ == 1) {
    for (size_t i = 0; i < n; ++i) r[i] = g[i] = b[i] = curves_[0][samples[i]];
    return;
  }
  const std::array<float, 9>& m = matrix_;
  for (size_t i = 0; i < n; ++i) {
    const float x = curves_[0][samples[3 * i]], y = curves_[1][samples[3 * i + 1]],
                z = curves_[2][samples[3 * i + 2]];
    r[i] = m[0] * x + m[1] * y + m[2] * z;
    g[i] = m[3] * x + m[4] * y + m[5] * z;
    b[i] = m[6] * x + m[7] * y + m[8] * z;
  }
}

}  // namespace lighten
