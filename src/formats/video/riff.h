// RIFF chunk trees (AVI, AVIX): a bounds-checked parser into a flat pre-order list of chunks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/bytes.h"

namespace lighten::video {

// A four-character code as the file stores it (first character in the low byte).
constexpr uint32_t fourcc(const char (&s)[5]) {
  return uint32_t(uint8_t(s[0])) | uint32_t(uint8_t(s[1])) << 8 | uint32_t(uint8_t(s[2])) << 16 |
         uint32_t(uint8_t(s[3])) << 24;
}
std::string fourcc_text(uint32_t code);  // printable, with '?' for other bytes

struct RiffChunk {
  uint32_t id = 0;
  uint32_t list_type = 0;  // for RIFF and LIST chunks
  uint64_t offset = 0;     // of the chunk header
  uint32_t size = 0;       // the size field: data bytes (for lists, including the list type)
  uint32_t depth = 0;      // 0 for the top-level RIFF chunks
  bool is_list = false;
  bool has_pad = false;  // an odd-sized chunk followed by its pad byte
  size_t end = 0;        // index just past this chunk's last descendant in RiffTree::chunks

  uint64_t data_offset() const { return offset + (is_list ? 12 : 8); }
  uint64_t data_size() const { return is_list ? size - 4u : size; }
  uint64_t total_size() const { return 8ull + size + (has_pad ? 1 : 0); }
};

struct RiffTree {
  std::vector<RiffChunk> chunks;  // pre-order
  uint64_t trailing_offset = 0;   // bytes after the last top-level RIFF chunk, kept verbatim

  // The chunk whose header starts at `offset`, or -1.
  long find_at(uint64_t offset) const;
};

// Parses every top-level RIFF chunk and everything inside. Throws FormatError: kCorrupt for
// sizes that overrun their parent or lists nested too deep, kTruncated when the file ends
// inside a chunk. A missing pad byte at the very end of the file is accepted.
RiffTree parse_riff(ByteView input);

inline uint32_t load_le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
inline void store_le32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v), p[1] = uint8_t(v >> 8), p[2] = uint8_t(v >> 16), p[3] = uint8_t(v >> 24);
}
inline uint64_t load_le64(const uint8_t* p) {
  return uint64_t(load_le32(p)) | uint64_t(load_le32(p + 4)) << 32;
}
inline void store_le64(uint8_t* p, uint64_t v) {
  store_le32(p, uint32_t(v));
  store_le32(p + 4, uint32_t(v >> 32));
}

}  // namespace lighten::video
