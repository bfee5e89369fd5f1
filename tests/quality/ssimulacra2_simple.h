#pragma once

#include "quality/image.h"

namespace lighten::test {

// SSIMULACRA 2.1 computed the plain way, as libjxl's tool does: whole float planes per scale, no
// streaming and no tiles. Slow and memory-hungry; it exists to check the streamed implementation.
double ssimulacra2_whole_image(const ImageRgb8& reference, const ImageRgb8& distorted);

}  // namespace lighten::test
