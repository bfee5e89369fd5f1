#include "formats/jpeg/exif_thumbnail.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string_view>
#include <vector>

#include "codecs/exif.h"
#include "core/errors.h"

namespace lighten::jpeg {
namespace {

constexpr size_t kTiffInSegment = 10;  // FF E1, the length, "Exif\0\0"
constexpr uint16_t kExifIfd = 0x8769, kGpsIfd = 0x8825, kInteropIfd = 0xA005;
constexpr uint16_t kThumbnailOffset = 0x0201, kThumbnailLength = 0x0202;
constexpr uint16_t kShort = 3, kLong = 4, kIfdType = 13;

// Bytes per value of each TIFF field type (1..13); 0 for a type this reader does not know.
size_t type_size(uint16_t type) {
  static constexpr uint8_t kSizes[] = {0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8, 4};
  return type < std::size(kSizes) ? kSizes[type] : 0;
}

struct IfdEntry {
  uint16_t tag = 0, type = 0;
  uint32_t count = 0;
  uint32_t field = 0;   // the 4-byte value field read as a LONG: an offset where the data is longer
  size_t field_at = 0;  // where that field is, in the TIFF data
};

// Bytes the TIFF structure points at, in the TIFF data.
struct Region {
  uint64_t begin = 0, end = 0;
};

class TiffReader {
 public:
  TiffReader(ByteView tiff, bool little_endian) : tiff_(tiff), le_(little_endian) {}

  // The IFD at `offset`: its entries, and its next IFD's offset. Its own bytes and its entries'
  // out-of-line values go into `regions`.
  std::vector<IfdEntry> read_ifd(uint32_t offset, uint32_t* next = nullptr) {
    ByteReader r(tiff_, offset);
    const uint16_t count = u16(r);
    regions.push_back({offset, uint64_t(offset) + 2 + 12 * uint64_t(count) + 4});
    std::vector<IfdEntry> entries;
    for (uint16_t i = 0; i < count; ++i) {
      IfdEntry e;
      e.tag = u16(r);
      e.type = u16(r);
      e.count = u32(r);
      e.field_at = r.offset();
      e.field = u32(r);
      const size_t size = type_size(e.type);
      // An unknown type hides how long its data is, and so what it covers.
      if (size == 0) throw FormatError(Reason::kCorrupt, e.field_at, "unknown TIFF field type");
      if (size * uint64_t(e.count) > 4)
        regions.push_back({e.field, uint64_t(e.field) + size * uint64_t(e.count)});
      entries.push_back(e);
    }
    const uint32_t following = u32(r);
    if (next) *next = following;
    return entries;
  }

  // The one SHORT or LONG of an entry, if it holds exactly that.
  std::optional<uint32_t> single_value(const IfdEntry& e) const {
    if (e.count != 1) return std::nullopt;
    if (e.type == kLong || e.type == kIfdType) return e.field;
    if (e.type == kShort) return le_ ? e.field & 0xFFFF : e.field >> 16;
    return std::nullopt;
  }

  std::vector<Region> regions;

 private:
  uint16_t u16(ByteReader& r) const { return le_ ? r.u16le() : r.u16be(); }
  uint32_t u32(ByteReader& r) const { return le_ ? r.u32le() : r.u32be(); }

  ByteView tiff_;
  bool le_;
};

const IfdEntry* find_tag(const std::vector<IfdEntry>& entries, uint16_t tag) {
  for (const IfdEntry& e : entries)
    if (e.tag == tag) return &e;
  return nullptr;
}

void put_value(uint8_t* at, uint32_t value, size_t bytes, bool le) {
  for (size_t i = 0; i < bytes; ++i) at[i] = uint8_t(value >> (8 * (le ? i : bytes - 1 - i)));
}

}  // namespace

std::optional<ExifThumbnail> locate_exif_thumbnail(ByteView segment) {
  if (segment.size() < kTiffInSegment + 8 || segment[0] != 0xFF || segment[1] != 0xE1 ||
      !starts_with(segment, std::string_view("Exif\0\0", 6), 4))
    return std::nullopt;
  const ByteView tiff = segment.subspan(kTiffInSegment);
  const std::optional<bool> little_endian = tiff_little_endian(tiff);
  if (!little_endian) return std::nullopt;
  const bool le = *little_endian;
  try {
    TiffReader reader(tiff, le);
    ByteReader header(tiff, 4);
    uint32_t ifd1_at = 0;
    const std::vector<IfdEntry> ifd0 =
        reader.read_ifd(le ? header.u32le() : header.u32be(), &ifd1_at);
    if (ifd1_at == 0) return std::nullopt;
    const std::vector<IfdEntry> ifd1 = reader.read_ifd(ifd1_at);
    for (uint16_t tag : {kExifIfd, kGpsIfd}) {
      const IfdEntry* e = find_tag(ifd0, tag);
      const std::optional<uint32_t> at = e ? reader.single_value(*e) : std::nullopt;
      if (!at) continue;
      const std::vector<IfdEntry> sub = reader.read_ifd(*at);
      const IfdEntry* interop = tag == kExifIfd ? find_tag(sub, kInteropIfd) : nullptr;
      if (const auto interop_at = interop ? reader.single_value(*interop) : std::nullopt)
        reader.read_ifd(*interop_at);
    }
    const IfdEntry* offset = find_tag(ifd1, kThumbnailOffset);
    const IfdEntry* length = find_tag(ifd1, kThumbnailLength);
    if (!offset || !length || !reader.single_value(*offset) || !reader.single_value(*length))
      return std::nullopt;
    const size_t begin = *reader.single_value(*offset), size = *reader.single_value(*length);
    if (size < 4 || begin + size > tiff.size()) return std::nullopt;
    const size_t end = begin + size;
    if (tiff[begin] != 0xFF || tiff[begin + 1] != 0xD8) return std::nullopt;
    // Only padding after it, and everything the structure points at before it: shortening it
    // then moves nothing a reader looks for.
    if (!std::all_of(tiff.begin() + ptrdiff_t(end), tiff.end(), [](uint8_t b) { return b == 0; }))
      return std::nullopt;
    for (const Region& r : reader.regions)
      if (r.end > begin) return std::nullopt;
    ExifThumbnail t;
    t.begin = kTiffInSegment + begin;
    t.end = kTiffInSegment + end;
    t.length_at = kTiffInSegment + length->field_at;
    t.little_endian = le;
    t.short_length = length->type == kShort;
    return t;
  } catch (const FormatError&) {
    return std::nullopt;
  }
}

Bytes with_exif_thumbnail(ByteView segment, const ExifThumbnail& at, ByteView thumbnail) {
  if (thumbnail.size() > at.end - at.begin)
    throw FormatError(Reason::kInternalError, at.begin,
                      "an EXIF thumbnail longer than the one it replaces");
  Bytes out(segment.size() - (at.end - at.begin) + thumbnail.size());
  std::memcpy(out.data(), segment.data(), at.begin);
  std::memcpy(out.data() + at.begin, thumbnail.data(), thumbnail.size());
  std::memcpy(out.data() + at.begin + thumbnail.size(), segment.data() + at.end,
              segment.size() - at.end);
  put_value(out.data() + 2, uint32_t(out.size() - 2), 2, false);
  put_value(out.data() + at.length_at, uint32_t(thumbnail.size()), at.short_length ? 2 : 4,
            at.little_endian);
  return out;
}

Policy exif_thumbnail_policy(const Policy& policy) {
  Policy thumbnail = policy;
  thumbnail.jpeg_scans = ScanMode::kKeep;
  thumbnail.jpeg_shown_through.reset();  // a container's colour space is its main image's
  // Exif records no APPn marker in a compressed thumbnail (Exif 2.2, 4.5.5): a re-run knows a
  // requantised one by its tables instead, and one whose tables would not tell stays lossless.
  thumbnail.quality_marker = QualityMarker::kOmit;
  return thumbnail;
}

ThumbnailSavings optimise_exif_thumbnails(MetadataPlan& plan, Context& context) {
  const Policy policy = exif_thumbnail_policy(context.policy());
  ThumbnailSavings savings;
  for (auto* segments : {&plan.before_sof, &plan.after_sof}) {
    for (PlannedSegment& s : *segments) {
      if (s.source_offset == SIZE_MAX) continue;  // generated here: no thumbnail
      const std::optional<ExifThumbnail> at = locate_exif_thumbnail(s.bytes);
      if (!at) continue;
      const ByteView original = ByteView(s.bytes).subspan(at->begin, at->end - at->begin);
      const Outcome item = context.optimize_embedded_under(original, "EXIF thumbnail", policy);
      if (!item.replaced() || item.output().size() >= original.size()) continue;
      ++savings.optimised;
      savings.saved += original.size() - item.output().size();
      s.bytes = with_exif_thumbnail(s.bytes, *at, item.output());
    }
  }
  return savings;
}

std::optional<std::string> compare_exif_thumbnail(ByteView want, ByteView got, const Policy& policy,
                                                  Context* context, bool& pixels_identical) {
  const std::optional<ExifThumbnail> a = locate_exif_thumbnail(want);
  const std::optional<ExifThumbnail> b = locate_exif_thumbnail(got);
  if (!a || !b) return "the EXIF segment differs";
  const std::string outside = "the EXIF segment differs outside its thumbnail";
  if (a->begin != b->begin || a->length_at != b->length_at || a->short_length != b->short_length)
    return outside;
  // Before the thumbnail, the segment's length and the thumbnail's may differ, nothing else.
  const size_t length_end = a->length_at + (a->short_length ? 2 : 4);
  for (size_t i = 0; i < a->begin; ++i) {
    if ((i == 2 || i == 3 || (i >= a->length_at && i < length_end))) continue;
    if (want[i] != got[i]) return outside;
  }
  if (!same_bytes(want.subspan(a->end), got.subspan(b->end))) return outside;
  const ByteView u = want.subspan(a->begin, a->end - a->begin);
  const ByteView v = got.subspan(b->begin, b->end - b->begin);
  if (same_bytes(u, v)) return std::nullopt;
  if (!context) return "the EXIF thumbnail changed";
  const Verdict verdict = context->verify_embedded_under(u, v, exif_thumbnail_policy(policy));
  if (!verdict.ok) return "the EXIF thumbnail: " + verdict.problem;
  pixels_identical = pixels_identical && verdict.quality.pixels_identical;
  return std::nullopt;
}

}  // namespace lighten::jpeg
