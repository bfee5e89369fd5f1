// Which APPn/COM segments go into the output, under the metadata policy.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codecs/exif.h"
#include "core/bytes.h"
#include "formats/jpeg/markers.h"
#include "lighten/policy.h"

namespace lighten::jpeg {

struct PlannedSegment {
  Bytes bytes;                      // the whole segment, FF xx and length included
  size_t source_offset = SIZE_MAX;  // where it was in the input; SIZE_MAX when generated
};

struct MetadataPlan {
  std::vector<PlannedSegment> before_sof;  // right after SOI, in input order
  std::vector<PlannedSegment> after_sof;   // right after the frame header, in input order
  size_t dropped = 0;
  std::vector<std::string> warnings;
};

MetadataPlan plan_metadata(ByteView input, const Layout& layout, MetadataPolicy policy);

// Whether the file carries C2PA Content Credentials (a JUMBF box labelled "c2pa" in APP11): their
// signature covers a hash of the file's other bytes, so no rewrite keeps them valid.
bool carries_content_credentials(const Layout& layout);

// Why the EXIF a policy keeps cannot stay valid in any output, if it cannot: it names data past
// its own segment (a Sony maker note's preview image in the bytes after the image), by offsets
// that go stale when the image data before them changes size. nullopt when it can.
std::optional<std::string> exif_pointing_past_itself(const Layout& layout, MetadataPolicy policy);

// Whether libjpeg recognises the segment as JFIF: APP0 "JFIF\0" with its fixed fields (a payload
// of 14 bytes or more). JFIF makes it read three planes as YCbCr whatever their identifiers.
bool libjpeg_reads_jfif(const Segment& s);

// The colour transform byte of an Adobe APP14 segment (payload "Adobe", version, flags0, flags1,
// then the transform: 0 RGB or CMYK, 1 YCbCr, 2 YCCK), read as libjpeg reads it (from payloads
// of 12 bytes or more); nullopt for any other segment.
std::optional<uint8_t> adobe_transform(const Segment& s);
// Sets that byte in every Adobe segment of `plan`: for RGB planes written again as YCbCr.
// Returns how many segments it set.
int set_adobe_transform(MetadataPlan& plan, uint8_t transform);

// The data colour space the image's ICC profile declares ("RGB ", "GRAY", "CMYK", "Lab ", ...:
// bytes 16-19 of the profile header), read from the first chunk numbered 1 among the ICC_PROFILE
// segments before the first scan; nullopt when there is no such chunk or it is too short.
std::optional<std::string> icc_data_space(const Layout& layout);
// The ICC profile carried in the ICC_PROFILE segments before the first scan, its chunks joined
// in their numbered order; nullopt without one, or when its chunks do not number 1 to their
// count exactly once each (readers then ignore it).
std::optional<Bytes> icc_profile(const Layout& layout);
// That space quoted for messages, bytes outside printable ASCII shown as '?'.
std::string quoted_icc_space(const std::string& space);

// EXIF Orientation (1..8) from an APP1 payload starting "Exif\0\0", if present and readable.
std::optional<int> exif_orientation(ByteView app1_payload);
// A whole APP1 segment with a minimal EXIF carrying only the Orientation tag, and the colour
// space where one is given (codecs/exif.h, minimal_tiff).
Bytes minimal_exif_segment(int orientation,
                           const std::optional<ExifColourSpace>& colour = std::nullopt);

// lighten's own APP15 segment on perceptual outputs: "LIGHTEN\0" then ASCII
// "v1 floor=F score=S". It says the file was already requantised by lighten, so later runs stay
// lossless (no generation loss even when the file was copied away from its journal).
inline constexpr std::string_view kQualityMarkerId{"LIGHTEN\0", 8};
bool is_quality_marker(const Segment& s);
Bytes quality_marker_segment(double floor, double score);
// True when the input carries a quality marker anywhere before its frame.
bool has_quality_marker(const Layout& layout);

// Whether an XMP segment holds Google's container directory (Ultra HDR gain maps, motion
// photos: Container:Item entries with Item:Length): readers may find the items after the image
// by the lengths it records, so none of them may change size.
bool xmp_has_container_directory(const Layout& layout);

// "Exif", "XMP", "ICC", "MPF", "JFIF", "Adobe", "Photoshop", ... or "" when unknown.
std::string segment_label(const Segment& s);

}  // namespace lighten::jpeg
