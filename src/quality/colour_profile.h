// How an image's 8-bit samples read as light when its ICC profile says they are not sRGB: the
// metric scores what a colour-managed viewer shows (the published SSIMULACRA 2 tool converts
// both images through their profiles to linear sRGB as well). Read as sRGB instead, outputs of
// four camera photos converted to Adobe RGB scored 1.4-2.3 points less so (68.1-68.7 in compact)
// than they were taken for, and to ProPhoto RGB 2.7-5.7 less.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/bytes.h"

namespace lighten {

// The data colour space an ICC profile's header declares ("RGB ", "GRAY", "CMYK", "Lab ", ...:
// bytes 16-19); nullopt for fewer than 20 bytes.
std::optional<std::string> icc_header_data_space(ByteView icc);

class ProfileColour {
 public:
  // From an ICC profile's bytes, for images of `channels` samples a pixel (1 gray, 3 RGB, 4
  // CMYK samples that hold 255 - ink, as Adobe's applications write them and rgb_from_cmyk
  // reads them). nullopt when there is nothing to convert: Little CMS cannot read the profile
  // (viewers then show the samples as they would without one), its data space is not the
  // samples', or (gray, RGB) it reads every colour as sRGB does (to 1/1000 of full scale in
  // linear light). The perceptual intent's table where a profile has several: viewers differ
  // (PDF viewers default to relative colorimetric), and both images go through the same one.
  // Read at relative colorimetric with black point compensation instead, the `compact` outputs
  // of two photos in U.S. Web Coated (SWOP) scored 0.003 lower and 0.04 higher: a PDF image's
  // /Intent is not worth reading.
  static std::optional<ProfileColour> from_icc(ByteView icc, uint32_t channels);

  // Whether Little CMS reads `icc` as a profile for `channels` samples a pixel (1 gray, 3 RGB)
  // that shows every colour as sRGB does: from_icc then has nothing to convert. False for CMYK
  // and for a profile it cannot read.
  static bool shows_as_srgb(ByteView icc, uint32_t channels);

  uint32_t channels() const { return channels_; }
  // The profile's description, for the optimiser's details ("Adobe RGB (1998)").
  const std::string& description() const { return description_; }
  // Linear-light sRGB, planar, of `n` pixels of interleaved samples; outside [0, 1] where a
  // colour lies outside sRGB's gamut. Thread-safe.
  void to_linear(const uint8_t* samples, size_t n, float* r, float* g, float* b) const;

 private:
  ProfileColour() = default;
  // from_icc, telling in `as_srgb` whether a nullopt means "reads as sRGB".
  static std::optional<ProfileColour> read(ByteView icc, uint32_t channels, bool& as_srgb);
  static bool separates_colours(const ProfileColour& c);
  void from_lattice(const uint8_t* samples, size_t n, float* r, float* g, float* b) const;
  void from_cmyk_lattice(const uint8_t* samples, size_t n, float* r, float* g, float* b) const;

  uint32_t channels_ = 3;
  std::string description_;
  // A matrix-shaper profile (most RGB and gray ones): each channel's tone curve in linear light,
  // then a matrix to linear sRGB (row-major); gray uses curves_[0] alone.
  std::array<std::array<float, 256>, 3> curves_{};
  std::array<float, 9> matrix_{};
  // Any other profile (lookup tables, and every CMYK one): Little CMS's transform sampled once,
  // at every gray (1 channel) or on a lattice of every kLatticeStep-th code value (3), or every
  // kCmykStep-th (4: K the outermost axis), interpolated between its nodes by tetrahedra (and
  // linearly in K); 3 floats a node. Little CMS's transform itself, pixel by pixel, made a 12 MP
  // photo's search ten times slower.
  static constexpr int kLatticeStep = 5, kLatticeSide = 255 / kLatticeStep + 1;
  static constexpr int kCmykStep = 15, kCmykSide = 255 / kCmykStep + 1;
  static_assert(255 % kLatticeStep == 0 && 255 % kCmykStep == 0, "a node at 255");
  std::vector<float> lattice_;
};

}  // namespace lighten
