#include "formats/jpeg/metadata.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "codecs/exif.h"
#include "formats/jpeg/mpf.h"
#include "quality/colour_profile.h"

namespace lighten::jpeg {
namespace {

bool payload_starts(const Segment& s, std::string_view prefix) {
  return starts_with(s.payload, prefix);
}

bool is_exif(const Segment& s) {
  return s.marker == 0xE1 && payload_starts(s, std::string_view("Exif\0\0", 6));
}
bool is_xmp(const Segment& s) {
  return s.marker == 0xE1 && (payload_starts(s, "http://ns.adobe.com/xap/1.0/") ||
                              payload_starts(s, "http://ns.adobe.com/xmp/extension/"));
}
bool is_icc(const Segment& s) {
  return s.marker == 0xE2 && payload_starts(s, std::string_view("ICC_PROFILE\0", 12));
}
bool is_jfif(const Segment& s) {
  return s.marker == kApp0 && payload_starts(s, std::string_view("JFIF\0", 5));
}
bool is_adobe(const Segment& s) { return s.marker == 0xEE && payload_starts(s, "Adobe"); }
// ISO 21496-1 gain-map metadata: how a gain map brightens the image on an HDR display.
bool is_iso_gain_map(const Segment& s) {
  return s.marker == 0xE2 && payload_starts(s, "urn:iso:std:iso:ts:21496:-1");
}
// Motion-JPEG's field order (ffmpeg reads which field of an interlaced frame comes first).
bool is_avi1(const Segment& s) { return s.marker == kApp0 && payload_starts(s, "AVI1"); }

bool contains(ByteView bytes, std::string_view needle) {
  auto it = std::search(bytes.begin(), bytes.end(), needle.begin(), needle.end());
  return it != bytes.end();
}

// Keep mode keeps everything; safe drops comments and editor records (APP12 Ducky/Picture
// Info, APP13 Photoshop IRB/IPTC), none of which changes how an image displays.
bool keep_in_safe(const Segment& s) {
  return s.marker != kCom && s.marker != 0xEC && s.marker != 0xED;
}

// Strip keeps only what changes decoding or display, and lighten's marker (it guards the
// image against generation loss).
bool keep_in_strip(const Segment& s) {
  return is_jfif(s) || is_icc(s) || is_adobe(s) || is_avi1(s) || is_mpf_segment(s) ||
         is_iso_gain_map(s) || is_quality_marker(s);
}

bool has_icc(const Layout& layout) {
  return std::any_of(layout.segments.begin(), layout.segments.end(), is_icc);
}

}  // namespace

bool is_quality_marker(const Segment& s) {
  return s.marker == 0xEF && payload_starts(s, kQualityMarkerId);
}

Bytes quality_marker_segment(double floor, double score) {
  char text[64];
  const int n =
      std::max(std::snprintf(text, sizeof(text), "v1 floor=%.1f score=%.2f", floor, score), 0);
  // Sized once and filled by position (GCC 12 warns falsely on vector::insert).
  Bytes s(4 + kQualityMarkerId.size() + size_t(n));
  s[0] = 0xFF;
  s[1] = 0xEF;
  s[2] = static_cast<uint8_t>((s.size() - 2) >> 8);
  s[3] = static_cast<uint8_t>(s.size() - 2);
  std::memcpy(s.data() + 4, kQualityMarkerId.data(), kQualityMarkerId.size());
  std::memcpy(s.data() + 4 + kQualityMarkerId.size(), text, size_t(n));
  return s;
}

bool has_quality_marker(const Layout& layout) {
  for (size_t i = 0; i < layout.segments.size() && i < layout.sof_index; ++i)
    if (is_quality_marker(layout.segments[i])) return true;
  return false;
}

std::string segment_label(const Segment& s) {
  if (is_exif(s)) return "Exif";
  if (is_xmp(s))
    return payload_starts(s, "http://ns.adobe.com/xmp/extension/") ? "XMP extension" : "XMP";
  if (is_icc(s)) return "ICC";
  if (is_mpf_segment(s)) return "MPF";
  if (is_quality_marker(s)) return "lighten";
  if (is_jfif(s)) return "JFIF";
  if (s.marker == kApp0 && payload_starts(s, std::string_view("JFXX\0", 5))) return "JFXX";
  if (is_adobe(s)) return "Adobe";
  if (is_avi1(s)) return "AVI1";
  if (s.marker == 0xED && payload_starts(s, "Photoshop 3.0")) return "Photoshop";
  if (s.marker == 0xEC && payload_starts(s, "Ducky")) return "Ducky";
  if (s.marker == kCom) return "comment";
  return "";
}

std::optional<std::string> icc_data_space(const Layout& layout) {
  // After "ICC_PROFILE\0", a chunk's number and the chunk count, then the profile's bytes.
  constexpr size_t kProfileStart = 14;
  for (const Segment& s : layout.segments) {
    if (s.marker == kSos) break;
    if (!is_icc(s) || s.payload.size() <= 12 || s.payload[12] != 1) continue;
    if (s.payload.size() < kProfileStart) return std::nullopt;
    return icc_header_data_space(s.payload.subspan(kProfileStart));
  }
  return std::nullopt;
}

std::optional<Bytes> icc_profile(const Layout& layout) {
  constexpr size_t kChunkStart = 14;  // "ICC_PROFILE\0", the chunk's number, the count
  std::vector<ByteView> chunks;
  for (const Segment& s : layout.segments) {
    if (s.marker == kSos) break;
    if (!is_icc(s)) continue;
    if (s.payload.size() < kChunkStart) return std::nullopt;
    const size_t number = s.payload[12], count = s.payload[13];
    if (chunks.empty()) chunks.resize(count);
    if (count != chunks.size() || number < 1 || number > count || !chunks[number - 1].empty())
      return std::nullopt;
    chunks[number - 1] = s.payload.subspan(kChunkStart);
  }
  if (chunks.empty()) return std::nullopt;
  Bytes profile;
  for (const ByteView& chunk : chunks) {
    if (chunk.empty()) return std::nullopt;
    profile.insert(profile.end(), chunk.begin(), chunk.end());
  }
  return profile;
}

std::string quoted_icc_space(const std::string& space) {
  std::string quoted = "'";
  for (char c : space) quoted += c >= 0x20 && c <= 0x7E ? c : '?';
  return quoted + "'";
}

std::optional<int> exif_orientation(ByteView payload) {
  if (!starts_with(payload, std::string_view("Exif\0\0", 6))) return std::nullopt;
  return tiff_orientation(payload.subspan(6));
}

Bytes minimal_exif_segment(int orientation, const std::optional<ExifColourSpace>& colour) {
  // APP1: "Exif\0\0", then the TIFF data.
  // Sized once and filled by position (GCC 12 warns falsely on vector::insert).
  const Bytes tiff =
      colour ? minimal_tiff(orientation, colour) : orientation_only_tiff(orientation);
  constexpr uint8_t kHeader[] = {0xFF, 0xE1, 0x00, 0x00, 'E', 'x', 'i', 'f', 0, 0};
  Bytes s(sizeof(kHeader) + tiff.size());
  std::copy(std::begin(kHeader), std::end(kHeader), s.begin());
  std::copy(tiff.begin(), tiff.end(), s.begin() + sizeof(kHeader));
  const size_t len = s.size() - 2;
  s[2] = static_cast<uint8_t>(len >> 8);
  s[3] = static_cast<uint8_t>(len);
  return s;
}

bool carries_content_credentials(const Layout& layout) {
  for (const Segment& s : layout.segments)
    if (s.marker == 0xEB && payload_starts(s, "JP") && contains(s.payload, "c2pa")) return true;
  return false;
}

std::optional<std::string> exif_pointing_past_itself(const Layout& layout, MetadataPolicy policy) {
  if (policy == MetadataPolicy::kStrip) return std::nullopt;  // only a minimal EXIF is written
  for (const Segment& s : layout.segments) {
    if (!is_exif(s)) continue;
    if (const std::optional<uint64_t> at = tiff_value_past_end(s.payload.subspan(6)))
      return "the EXIF names data past its own segment (at offset " + std::to_string(*at) +
             ", a maker note's preview image after the image data, say): the offset would no "
             "longer find it once the image data changes size (--metadata strip drops it)";
  }
  return std::nullopt;
}

MetadataPlan plan_metadata(ByteView input, const Layout& layout, MetadataPolicy policy) {
  MetadataPlan plan;
  bool exif_written = false;
  // A camera in Adobe RGB mode names the space in EXIF alone; without a profile, viewers follow
  // it for a colour image. Strip writes that colour space (and the orientation) into a minimal
  // EXIF of its own: the camera's holds GPS positions and serial numbers too.
  const std::optional<ExifColourSpace> colour = [&]() -> std::optional<ExifColourSpace> {
    if (policy != MetadataPolicy::kStrip || has_icc(layout) || layout.frame.components.size() != 3)
      return std::nullopt;
    for (const Segment& s : layout.segments)
      if (is_exif(s)) return tiff_other_colour_space(s.payload.subspan(6));
    return std::nullopt;
  }();
  // Readers take metadata only from the header, which ends at the first scan; the writer puts
  // every segment before the scans, where one that followed them would be read.
  bool after_scan = false;
  for (size_t i = 0; i < layout.segments.size(); ++i) {
    const Segment& s = layout.segments[i];
    after_scan = after_scan || s.marker == kSos;
    if (!s.is_metadata()) continue;
    auto& dest = i < layout.sof_index ? plan.before_sof : plan.after_sof;
    bool keep = policy == MetadataPolicy::kKeep ||
                (policy == MetadataPolicy::kSafe && keep_in_safe(s)) ||
                (policy == MetadataPolicy::kStrip && keep_in_strip(s));
    if (keep && after_scan)
      throw FormatError(Reason::kUnsupportedVariant, s.offset,
                        std::string(marker_name(s.marker)) +
                            " segment after the first scan: readers do not look there, and the "
                            "writer would put it before the scans, where they would read it");
    if (after_scan) {
      ++plan.dropped;  // never read; no minimal EXIF stands in for it
      continue;
    }
    // A JFIF segment's own thumbnail (up to 64 kB of RGB) changes nothing on display: strip
    // writes the segment's fixed fields alone, with no thumbnail.
    constexpr size_t kJfifFields = 14;
    if (keep && policy == MetadataPolicy::kStrip && is_jfif(s) && s.payload.size() > kJfifFields) {
      Bytes jfif(4 + kJfifFields);  // filled by position (GCC 12 warns falsely on insert)
      jfif[0] = 0xFF, jfif[1] = kApp0, jfif[2] = 0, jfif[3] = uint8_t(2 + kJfifFields);
      std::copy(s.payload.begin(), s.payload.begin() + kJfifFields, jfif.begin() + 4);
      jfif[4 + 12] = jfif[4 + 13] = 0;  // the thumbnail's width and height
      dest.push_back({std::move(jfif), s.offset});
      continue;
    }
    if (keep) {
      auto whole = input.subspan(s.offset, s.length);
      dest.push_back({Bytes(whole.begin(), whole.end()), s.offset});
      continue;
    }
    ++plan.dropped;
    if (is_exif(s) && !exif_written) {
      exif_written = true;
      const int orientation = exif_orientation(s.payload).value_or(1);
      if (orientation != 1 || colour)
        dest.push_back({minimal_exif_segment(orientation, colour), SIZE_MAX});
    }
    if (is_xmp(s) && contains(s.payload, "hdrgm"))
      plan.warnings.push_back("XMP with gain-map (hdrgm) metadata dropped: HDR display is lost");
    if (is_xmp(s) && contains(s.payload, "http://ns.apple.com/HDRGainMap/"))
      plan.warnings.push_back(
          "XMP with Apple's HDR gain-map metadata dropped: HDR display is lost");
    // By the namespace, whatever prefix the XMP binds it to.
    const bool google_camera =
        is_xmp(s) && contains(s.payload, "http://ns.google.com/photos/1.0/camera/");
    if (google_camera && (contains(s.payload, "MotionPhoto") || contains(s.payload, "MicroVideo")))
      plan.warnings.push_back("XMP motion-photo metadata dropped: the video is no longer found");
    if (is_xmp(s) && contains(s.payload, "http://ns.google.com/photos/1.0/depthmap/"))
      plan.warnings.push_back(
          "XMP with a depth map (GDepth) dropped: refocusing and portrait blur are lost");
    if (is_xmp(s) && contains(s.payload, "http://ns.google.com/photos/1.0/image/"))
      plan.warnings.push_back(
          "XMP with the unblurred original (GImage) dropped: it can no longer be restored");
  }
  // Main and extended XMP may both hold a namespace: each loss is told once.
  std::vector<std::string> told;
  for (std::string& w : plan.warnings)
    if (std::find(told.begin(), told.end(), w) == told.end()) told.push_back(std::move(w));
  plan.warnings = std::move(told);
  return plan;
}

bool xmp_has_container_directory(const Layout& layout) {
  // By the namespace, whatever prefix the XMP binds it to.
  for (const Segment& s : layout.segments)
    if (is_xmp(s) && contains(s.payload, "http://ns.google.com/photos/1.0/container/")) return true;
  return false;
}

namespace {
constexpr size_t kAdobeTransformInPayload = 11;

std::optional<uint8_t> transform_of(uint8_t marker, ByteView payload) {
  if (marker != 0xEE || payload.size() <= kAdobeTransformInPayload ||
      !starts_with(payload, "Adobe"))
    return std::nullopt;
  return payload[kAdobeTransformInPayload];
}
}  // namespace

bool libjpeg_reads_jfif(const Segment& s) { return is_jfif(s) && s.payload.size() >= 14; }

std::optional<uint8_t> adobe_transform(const Segment& s) {
  return transform_of(s.marker, s.payload);
}

int set_adobe_transform(MetadataPlan& plan, uint8_t transform) {
  int set = 0;
  for (auto* segments : {&plan.before_sof, &plan.after_sof}) {
    for (PlannedSegment& s : *segments) {
      if (s.bytes.size() < 4 || !transform_of(s.bytes[1], ByteView(s.bytes).subspan(4))) continue;
      s.bytes[4 + kAdobeTransformInPayload] = transform;
      ++set;
    }
  }
  return set;
}

}  // namespace lighten::jpeg
