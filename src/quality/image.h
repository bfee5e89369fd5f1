#pragma once

#include <cstdint>
#include <vector>

#include "core/uninitialized_vector.h"

namespace lighten {

// Samples as decoders write them (no zero-fill first).
using SampleBuffer = UninitializedVector<uint8_t>;

// A decoded 8-bit image in sRGB: 1 channel (gray) or 3 (RGB), samples interleaved, rows packed;
// or in the space of an ICC profile it is read through (ProfileColour), 4 channels for CMYK.
struct ImageRgb8 {
  uint32_t width = 0, height = 0;
  uint32_t channels = 3;
  SampleBuffer samples;
};

// CMYK samples (4 a pixel) rendered as RGB over the same buffer, which shrinks to 3 a pixel:
// each ink's channel is what the ink lets through, times what the black lets through. The
// samples hold 255 - ink, Adobe's convention, which PIL and browsers assume for every CMYK
// JPEG, marker or not. For CMYK without an ICC profile: the metric compares two renderings made
// alike, as PIL makes them.
void rgb_from_cmyk(SampleBuffer& samples);

}  // namespace lighten
