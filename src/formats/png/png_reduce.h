// Lossless colour-type and bit-depth reductions (--png-reduce): every pixel, expanded to RGBA at
// 16 bits, stays the same; the chunks that depend on the colour type follow or the reduction is
// not made.
#pragma once

#include <string>
#include <vector>

#include "formats/png/png_chunks.h"

namespace lighten {

// One way to store an image: its header, its unfiltered rows, and every chunk but IDAT.
struct PngLayout {
  PngHeader header;
  Bytes raw;                  // rows of every pass, each with a filter byte of 0
  std::vector<Bytes> chunks;  // complete chunks (length, type, data, CRC) in file order, no IDAT
  size_t idat_at = 0;         // the image data goes before chunks[idat_at]
  ByteView trailing;          // bytes after IEND, kept as they are
  std::string description;    // "" for the input's own layout
};

// The input's own layout: its chunks exactly as they are.
PngLayout original_png_layout(const PngFile& png, Bytes raw);

// The smaller layouts the input's pixels allow: a grey/truecolour one with fewer channels or
// bits, and a palette one; none when a chunk could not follow. `raw` is the input's unfiltered
// image data.
std::vector<PngLayout> reduced_png_layouts(const PngFile& png, const Bytes& raw);

// A chunk's length is at most 2^31 - 1.
inline constexpr size_t kMaxPngChunkData = 0x7FFFFFFF;

// The file a layout makes with the given (compressed) image data, in IDAT chunks of at most
// `max_idat` bytes each.
Bytes assemble_png(const PngLayout& layout, ByteView idat, size_t max_idat = kMaxPngChunkData);

}  // namespace lighten
