#include "quality/image.h"

#include <cstddef>

namespace lighten {

void rgb_from_cmyk(std::vector<uint8_t>& samples, bool inverted) {
  const std::size_t pixels = samples.size() / 4;
  const unsigned flip = inverted ? 0 : 255;  // to what each ink lets through
  // Pixel i's three outputs land at or before its four inputs: the pass may run in place.
  for (std::size_t i = 0; i < pixels; ++i) {
    const uint8_t* in = samples.data() + 4 * i;
    const unsigned through_k = flip ^ in[3];
    uint8_t rgb[3];
    for (int c = 0; c < 3; ++c) rgb[c] = uint8_t(((flip ^ in[c]) * through_k + 127) / 255);
    uint8_t* out = samples.data() + 3 * i;
    out[0] = rgb[0];
    out[1] = rgb[1];
    out[2] = rgb[2];
  }
  samples.resize(pixels * 3);
}

}  // namespace lighten
