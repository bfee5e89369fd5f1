// PNG chunk layout: the signature, then length-type-data-CRC records up to IEND.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/bytes.h"

namespace lighten {

struct PngChunk {
  std::array<char, 4> type{};
  ByteView data;   // the chunk's data
  ByteView whole;  // length, type, data and CRC as they appear in the file

  std::string type_name() const { return std::string(type.begin(), type.end()); }
  bool is(const char* name) const { return std::equal(type.begin(), type.end(), name); }
  bool critical() const { return (type[0] & 0x20) == 0; }
};

struct PngHeader {
  uint32_t width = 0, height = 0;
  uint8_t bit_depth = 0, color_type = 0, interlace = 0;

  unsigned channels() const;
  // Bytes per complete pixel, at least 1: the distance filters look back.
  unsigned filter_stride() const { return std::max(1u, channels() * bit_depth / 8); }
  uint64_t row_bytes(uint32_t pixels) const {
    return (uint64_t(pixels) * channels() * bit_depth + 7) / 8;
  }
};

struct PngFile {
  PngHeader header;
  std::vector<PngChunk> chunks;  // every chunk in order, IDATs included
  ByteView trailing;             // bytes after IEND, kept as they are
};

inline constexpr char kPngSignature[] = "\x89PNG\r\n\x1a\n";

// Parses and checks every chunk's CRC, IHDR's fields, and the chunk order PNG requires.
// Throws FormatError.
PngFile read_png_chunks(ByteView bytes);

// The first chunk of `type` ("PLTE"), or nullptr.
const PngChunk* find_png_chunk(const PngFile& png, const char* type);

// Appends one chunk with its length and CRC.
void append_png_chunk(Bytes& out, const char* type, ByteView data);

}  // namespace lighten
