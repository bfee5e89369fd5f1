// The thumbnail JPEG of an EXIF segment (IFD1's JPEGInterchangeFormat): a picture of the scene
// that file browsers and cameras show, optimised through the engine like an MPF preview and
// written back in place of the original where nothing in the segment lies after it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "core/bytes.h"
#include "core/context.h"
#include "formats/jpeg/metadata.h"

namespace lighten::jpeg {

// Where a replaceable thumbnail lies in a whole APP1 segment (FF E1, the length, "Exif\0\0",
// then the TIFF data).
struct ExifThumbnail {
  size_t begin = 0, end = 0;  // the thumbnail's bytes, in the segment
  size_t length_at = 0;       // JPEGInterchangeFormatLength's value, in the segment
  bool little_endian = false;
  bool short_length = false;  // that value is a SHORT (2 bytes), not a LONG
};

// The segment's thumbnail, where it can be replaced by shorter bytes without moving anything
// the TIFF structure points at: only zero bytes follow it to the segment's end, and no IFD or
// value of IFD0, IFD1, the Exif, GPS or interoperability IFD lies in or after it. nullopt for any
// other segment, an unreadable TIFF structure, or a thumbnail that is not a JPEG stream.
std::optional<ExifThumbnail> locate_exif_thumbnail(ByteView segment);

// `segment` with `thumbnail` (at most as long as its own) in place of the one `at` locates, its
// length value and the segment's length set to match, the zero bytes after it kept.
Bytes with_exif_thumbnail(ByteView segment, const ExifThumbnail& at, ByteView thumbnail);

// The policy a thumbnail is optimised and verified under: `policy`, its scans kept as they are
// (DCF thumbnails are baseline, and cameras' playback screens may decode nothing else), and no
// quality marker (Exif thumbnails carry no APPn segment).
Policy exif_thumbnail_policy(const Policy& policy);

struct ThumbnailSavings {
  int optimised = 0;
  size_t saved = 0;  // bytes, all of them together
};

// Optimises the thumbnail of every EXIF segment `plan` keeps as it was in the input, through the
// context under its policy (a thumbnail shows the scene, as an MPF preview does), and puts each
// that came out smaller into its segment.
ThumbnailSavings optimise_exif_thumbnails(MetadataPlan& plan, Context& context);

// Checks an output's EXIF segment `got` against the input's `want` where they differ: the same
// bytes but for the thumbnail, its length value and the segment's length, and the thumbnail
// verified through `context` under `policy`. Returns the problem, if any. Without a context a
// changed thumbnail is a problem. `pixels_identical` is cleared where the thumbnail's pixels
// changed.
std::optional<std::string> compare_exif_thumbnail(ByteView want, ByteView got, const Policy& policy,
                                                  Context* context, bool& pixels_identical);

}  // namespace lighten::jpeg
