// The EXIF fields lighten reads itself: the TIFF Orientation tag, which viewers apply when they
// show a JPEG's or a PNG's image, kept when the rest of the metadata goes, and the colour space
// a camera names without an ICC profile.
#pragma once

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

// Whether the Exif IFD names a colour space other than sRGB: ColorSpace (0xA001) other than 1
// (a camera in Adobe RGB mode writes 0xFFFF, "uncalibrated", with the interoperability index
// "R03"), which viewers follow where no ICC profile is embedded.
bool tiff_names_other_colour_space(ByteView tiff);

}  // namespace lighten
