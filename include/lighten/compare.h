// Perceptual scores of two images of the same size (JPEG or PNG), for `lighten compare` and
// for users who want to check a file by number.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>

namespace lighten {

struct ImageScores {
  double ssimulacra2 = 100;  // SSIMULACRA 2.1, 100 = identical
  double ssimulacra2_worst_tile = 100;
  // What lighten's quality floors check: ssimulacra2 itself from 256 px on both sides; for a
  // smaller image the lower of it and the score of both images mirrored out to 256 px (the
  // metric's coarse scales shrink to a few pixels there and its score drifts with the size).
  double floor_score = 100;
  std::optional<double> butteraugli;  // empty: this build has no butteraugli (libjxl)
};

// Decodes both (libjpeg-turbo default settings for JPEG; PNG to 8-bit gray or RGB) and scores
// `distorted` against `reference`; butteraugli (libjxl: seconds and gigabytes for 12 MP) only
// when asked. Throws std::runtime_error when either does not decode, is CMYK, or the sizes
// differ.
ImageScores compare_images(std::span<const uint8_t> reference, std::span<const uint8_t> distorted,
                           bool with_butteraugli = true);

}  // namespace lighten
