// JPEG marker segment walker: where each segment is, where the image ends, what follows EOI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/bytes.h"

namespace lighten::jpeg {

inline constexpr uint8_t kSoi = 0xD8;
inline constexpr uint8_t kEoi = 0xD9;
inline constexpr uint8_t kSos = 0xDA;
inline constexpr uint8_t kDqt = 0xDB;
inline constexpr uint8_t kDri = 0xDD;
inline constexpr uint8_t kDht = 0xC4;
inline constexpr uint8_t kCom = 0xFE;
inline constexpr uint8_t kApp0 = 0xE0;

// One marker segment (FF xx plus its length-counted payload). For SOS, `entropy_end` is where
// the scan's entropy-coded data ends (the next marker); for other segments it equals `end()`.
struct Segment {
  uint8_t marker = 0;
  size_t offset = 0;  // of the FF byte
  size_t length = 0;  // whole segment: 2 marker bytes + length field + payload
  ByteView payload;   // after the length field
  size_t entropy_end = 0;

  size_t end() const { return offset + length; }
  bool is_app() const { return marker >= 0xE0 && marker <= 0xEF; }
  bool is_metadata() const { return is_app() || marker == kCom; }
};

bool is_sof(uint8_t marker);

struct FrameInfo {
  uint8_t marker = 0;  // SOFn
  uint8_t precision = 0;
  uint16_t height = 0;
  uint16_t width = 0;
  struct Component {
    uint8_t id = 0, h = 1, v = 1, tq = 0;
  };
  std::vector<Component> components;
};

struct Layout {
  std::vector<Segment> segments;  // every marker segment from after SOI to before EOI, in order
  size_t sof_index = 0;           // index in segments of the frame header
  FrameInfo frame;
  size_t scans = 0;       // number of SOS segments
  size_t image_end = 0;   // offset just after EOI
  size_t junk_bytes = 0;  // bytes between segments that are not markers (dropped)
  size_t fill_bytes = 0;  // 0xFF fill bytes before markers, which the standard allows (dropped)

  ByteView trailing(ByteView input) const { return input.subspan(image_end); }
};

// Walks the whole primary image. Throws FormatError: kCorrupt when it does not start with SOI
// or a segment is malformed, kTruncated when it ends before EOI, kUnsupportedVariant for frame
// types libjpeg-turbo cannot carry losslessly (12-bit, lossless, hierarchical).
Layout parse_layout(ByteView input);

// The frame header alone (for describe and limits), parsed from a SOFn payload.
FrameInfo parse_frame(const Segment& sof);

// Human-readable marker name ("APP1", "SOF2", "DQT", ...).
const char* marker_name(uint8_t marker);

}  // namespace lighten::jpeg
