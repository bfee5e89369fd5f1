// The EXIF fields lighten reads itself: the TIFF Orientation tag, which viewers apply when they
// show a JPEG's or a PNG's image, kept when the rest of the metadata goes, and the colour space
// a camera names without an ICC profile.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "core/bytes.h"

namespace lighten {

// Whether TIFF data (from its byte order mark, "II*\0" or "MM\0*") is little-endian; nullopt
// for neither.
std::optional<bool> tiff_little_endian(ByteView tiff);

// The Orientation (1..8) of IFD0 in TIFF-structured EXIF data (byte order mark first, as a PNG
// eXIf chunk holds it and a JPEG APP1 after its "Exif\0\0"), if present and readable.
std::optional<int> tiff_orientation(ByteView tiff);

// TIFF data with an IFD0 of the one Orientation entry (big-endian, no next IFD).
Bytes orientation_only_tiff(int orientation);

// The colour space an Exif IFD names where it is not sRGB: ColorSpace (0xA001) other than 1,
// and the interoperability index beside it (a camera in Adobe RGB mode writes 0xFFFF,
// "uncalibrated", and "R03"). Viewers follow them where no ICC profile is embedded.
struct ExifColourSpace {
  uint16_t colour_space = 1;
  std::array<uint8_t, 4> interop_index{};  // the ASCII value with its NUL; all zero when none
};
std::optional<ExifColourSpace> tiff_other_colour_space(ByteView tiff);

// The first value an EXIF names past the end of its own TIFF data, as an offset from the TIFF
// header: in IFD0 and IFD1, the Exif, GPS and interoperability IFDs, and a Sony maker note
// (whose preview image points into the bytes after the JPEG's image). Such offsets go stale
// when the image before them changes size. nullopt when every value lies inside.
std::optional<uint64_t> tiff_value_past_end(ByteView tiff);

// TIFF data (big-endian) with an IFD0 of Orientation (when not 1) and, when given, an Exif IFD
// of that ColorSpace and an interoperability IFD of its index: what --metadata strip keeps.
Bytes minimal_tiff(int orientation, const std::optional<ExifColourSpace>& colour);

}  // namespace lighten
