// Choosing filters and compressing the image data: trial candidates, keep the smallest.
#pragma once

#include <string>
#include <vector>

#include "core/context.h"
#include "formats/png/png_reduce.h"

namespace lighten {

struct PngPacked {
  size_t layout = 0;  // which of the layouts won
  Bytes idat;         // its compressed image data (zlib stream)
  std::string description;
};

// Filters and deflates every layout with the trials the policy's effort pays for and returns the
// one of the smallest file (its chunks counted: a palette's PLTE can outweigh what it saves in
// image data). layouts[0] is the input's own; `original_filtered` its rows with the input's filters
// and `input_idat` its compressed image data. An empty idat means no trial can pay. Throws
// FormatError(kLimitExceeded) when the time budget runs out.
PngPacked pack_png_layouts(const std::vector<PngLayout>& layouts, Bytes original_filtered,
                           ByteView input_idat, Context& context);

}  // namespace lighten
