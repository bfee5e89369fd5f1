// The Multi-Picture Format index (CIPA DC-007, APP2 "MPF\0"): the MP Entry offsets of the
// secondary images are relative to the MPF segment's TIFF header, so they change when the
// primary image shrinks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "formats/jpeg/markers.h"

namespace lighten::jpeg {

struct MpfIndex {
  size_t segment_offset = 0;  // of the APP2 segment's FF in the input
  bool little_endian = false;
  struct Entry {
    size_t field_offset = 0;  // of the 16-byte MP Entry, relative to the segment start
    uint32_t attribute = 0;
    uint32_t size = 0;
    uint32_t offset = 0;  // relative to the TIFF header; 0 for the primary image
  };
  std::vector<Entry> entries;

  // The TIFF header is right after FF E2, the length and "MPF\0".
  static constexpr size_t kTiffInSegment = 8;
};

bool is_mpf_segment(const Segment& s);

// Parses the first MPF segment of the primary image, if any. Throws FormatError(kCorrupt) when
// its IFD or MP Entries do not fit in the segment.
std::optional<MpfIndex> parse_mpf(ByteView input, const Layout& layout);

// Whether two indexes list the same images: as many entries, each of the same type and each
// primary (offset 0) in both or in neither. Returns the difference, if any.
std::optional<std::string> compare_mpf_entries(const MpfIndex& a, const MpfIndex& b);

// Where a secondary image of the index lies in a file.
struct SecondaryImage {
  size_t entry = 0;           // its index in MpfIndex::entries
  size_t begin = 0, end = 0;  // byte offsets in the file
};

// The secondary images the index points to, in file order, when each lies wholly in the data
// after the primary image, starts with an SOI and overlaps no other; nullopt otherwise (or when
// there are none), and the data after the primary image is then kept as it is.
std::optional<std::vector<SecondaryImage>> locate_secondary_images(ByteView file,
                                                                   const Layout& layout,
                                                                   const MpfIndex& mpf);

// Rewrites, in `output`, the MPF segment copied to `new_segment_offset`, so that each secondary
// image's offset points to the same trailing bytes after the primary image moved from ending at
// `old_image_end` to ending at `new_image_end`; the primary's size is updated when it was
// exact. With `moved` (where each secondary now lies in `output`), offsets and sizes are those.
// Throws FormatError(kUnsupportedVariant) when an offset does not land on an SOI.
void rewrite_mpf(Bytes& output, const MpfIndex& mpf, size_t new_segment_offset,
                 size_t old_image_end, size_t new_image_end,
                 const std::vector<SecondaryImage>* moved = nullptr);

}  // namespace lighten::jpeg
