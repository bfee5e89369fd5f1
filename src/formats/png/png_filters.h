// PNG scanline filters: undoing them, and choosing them anew.
#pragma once

#include <vector>

#include "formats/png/png_chunks.h"

namespace lighten {

struct PngPass {
  uint32_t width = 0, height = 0;
};

// The 1 (plain) or 7 (Adam7) passes of an image; passes with no pixels are included, empty.
std::vector<PngPass> png_passes(const PngHeader& header);

// Bytes of the inflated image data: every row of every pass with its filter byte.
// Throws FormatError(kLimitExceeded) when that exceeds `limit`.
uint64_t png_data_size(const PngHeader& header, uint64_t limit);

enum class PngFilterStrategy {
  kNone,
  kSub,
  kUp,
  kAverage,
  kPaeth,
  kMinSum,   // per row, the filter whose output has the smallest sum of absolute values
  kEntropy,  // per row, the filter whose output bytes have the lowest Shannon entropy
};
inline constexpr PngFilterStrategy kAllPngStrategies[] = {
    PngFilterStrategy::kNone,    PngFilterStrategy::kSub,   PngFilterStrategy::kUp,
    PngFilterStrategy::kAverage, PngFilterStrategy::kPaeth, PngFilterStrategy::kMinSum,
    PngFilterStrategy::kEntropy};

// Undoes the filters of `data` (inflated IDAT) in place; every row's filter byte becomes 0.
// Throws FormatError(kCorrupt) for an unknown filter type.
void png_unfilter(Bytes& data, const PngHeader& header);

// Filters unfiltered rows (as png_unfilter leaves them) with a strategy.
Bytes png_filter(const Bytes& raw, const PngHeader& header, PngFilterStrategy strategy);

}  // namespace lighten
