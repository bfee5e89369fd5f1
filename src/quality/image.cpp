#include "quality/image.h"

#include <cstddef>

namespace lighten {

void rgb_from_cmyk(SampleBuffer& samples) {
  const std::size_t pixels = samples.size() / 4;
  // Pixel i's three outputs land at or before its four inputs: the pass may run in place.
  for (std::size_t i = 0; i < pixels; ++i) {
    const uint8_t* in = samples.data() + 4 * i;
    uint8_t rgb[3];
    for (int c = 0; c < 3; ++c) rgb[c] = uint8_t((unsigned(in[c]) * in[3] + 127) / 255);
    uint8_t* out = samples.data() + 3 * i;
    out[0] = rgb[0];
    out[1] = rgb[1];
    out[2] = rgb[2];
  }
  samples.resize(pixels * 3);
}

}  // namespace lighten
