// Perceptual scores of two images of the same size (JPEG or PNG), for `lighten compare` and
// for users who want to check a file by number.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

namespace lighten {

struct ImageScores {
  // SSIMULACRA 2.1, 100 = identical, and its worst 256 px tile. Empty for an image under 8 px
  // on a side: the metric has no scale to measure there (the published algorithm says 100
  // whatever the pixels); floor_score still scores it.
  std::optional<double> ssimulacra2, ssimulacra2_worst_tile;
  // What lighten's quality floors check: ssimulacra2 itself from 256 px on both sides; for a
  // smaller image the lower of it and the score of both images mirrored out to 256 px (the
  // metric's coarse scales shrink to a few pixels there and its score drifts with the size).
  double floor_score = 100;
  std::optional<double> butteraugli;
  std::string butteraugli_note;  // why butteraugli is empty, when it was asked for
};

// libjxl's butteraugli holds about 240 bytes per pixel (5.8 GB at 24 MP) and aborts the process
// when an allocation fails, so larger images are not given to it unless asked.
inline constexpr uint64_t kButteraugliMaxPixels = 24'000'000;

// One of the two images does not decode (not a JPEG or PNG, or damaged).
struct ImageDecodeError : std::runtime_error {
  ImageDecodeError(bool distorted, const std::string& message)
      : std::runtime_error(message), is_distorted(distorted) {}
  bool is_distorted;  // false: the reference
};

// Decodes both (libjpeg-turbo default settings for JPEG; PNG to 8-bit gray or RGB) and scores
// `distorted` against `reference`, each read through the ICC profile it carries (JPEG APP2, PNG
// iCCP) when that is not sRGB's, as lighten's floors read them (CMYK without a CMYK profile
// rendered by rgb_from_cmyk); butteraugli reads them alike, only when asked and for at most
// `butteraugli_max_pixels`. Throws ImageDecodeError when either does not decode, and
// std::runtime_error when the sizes differ.
ImageScores compare_images(std::span<const uint8_t> reference, std::span<const uint8_t> distorted,
                           bool with_butteraugli = true,
                           uint64_t butteraugli_max_pixels = kButteraugliMaxPixels);

}  // namespace lighten
