#include "formats/jpeg/mpf.h"

#include <algorithm>
#include <string>

namespace lighten::jpeg {
namespace {

constexpr uint16_t kTagMpEntry = 0xB002;
constexpr size_t kEntrySize = 16;
constexpr size_t kMaxEntries = 4096;  // far beyond any camera; bounds the work

uint32_t get32(ByteReader& r, bool le) { return le ? r.u32le() : r.u32be(); }
uint16_t get16(ByteReader& r, bool le) { return le ? r.u16le() : r.u16be(); }

void put32(Bytes& out, size_t at, uint32_t v, bool le) {
  for (int i = 0; i < 4; ++i) {
    int shift = le ? 8 * i : 8 * (3 - i);
    out.at(at + i) = static_cast<uint8_t>(v >> shift);
  }
}

}  // namespace

bool is_mpf_segment(const Segment& s) {
  return s.marker == 0xE2 && starts_with(s.payload, {"MPF\0", 4});
}

std::optional<MpfIndex> parse_mpf(ByteView input, const Layout& layout) {
  for (const Segment& s : layout.segments) {
    if (!is_mpf_segment(s)) continue;
    MpfIndex mpf;
    mpf.segment_offset = s.offset;
    ByteView tiff = s.payload.subspan(4);
    auto fail = [&](const std::string& why) {
      return FormatError(Reason::kCorrupt, s.offset, "MPF index: " + why);
    };
    if (starts_with(tiff, {"II*\0", 4})) {
      mpf.little_endian = true;
    } else if (!starts_with(tiff, {"MM\0*", 4})) {
      throw fail("no TIFF header");
    }
    bool le = mpf.little_endian;
    try {
      ByteReader r(tiff, 4);
      uint32_t ifd = get32(r, le);
      r.seek(ifd);
      uint16_t count = get16(r, le);
      for (uint16_t i = 0; i < count; ++i) {
        uint16_t tag = get16(r, le);
        uint16_t type = get16(r, le);
        uint32_t n = get32(r, le);
        uint32_t value = get32(r, le);
        if (tag != kTagMpEntry) continue;
        // One MP Entry tag: repeated ones, each listing one table again, would multiply it.
        if (!mpf.entries.empty()) throw fail("more than one MP Entry tag");
        if (type != 7 || n % kEntrySize != 0 || n / kEntrySize > kMaxEntries)
          throw fail("malformed MP Entry tag");
        ByteReader e(tiff, n > 4 ? value : r.offset() - 4);
        for (uint32_t k = 0; k < n / kEntrySize; ++k) {
          MpfIndex::Entry entry;
          entry.field_offset = MpfIndex::kTiffInSegment + e.offset();
          entry.attribute = get32(e, le);
          entry.size = get32(e, le);
          entry.offset = get32(e, le);
          e.skip(4);
          mpf.entries.push_back(entry);
        }
      }
    } catch (const FormatError& e) {
      if (e.reason() == Reason::kTruncated) throw fail("IFD runs past the segment");
      throw;
    }
    (void)input;
    return mpf;
  }
  return std::nullopt;
}

std::optional<std::string> compare_mpf_entries(const MpfIndex& a, const MpfIndex& b) {
  if (a.entries.size() != b.entries.size()) return "MPF index differs";
  for (size_t i = 0; i < a.entries.size(); ++i) {
    const MpfIndex::Entry& x = a.entries[i];
    const MpfIndex::Entry& y = b.entries[i];
    if (x.attribute != y.attribute || (x.offset == 0) != (y.offset == 0))
      return "MPF entry " + std::to_string(i) + " differs";
  }
  return std::nullopt;
}

std::optional<std::vector<SecondaryImage>> locate_secondary_images(ByteView file,
                                                                   const Layout& layout,
                                                                   const MpfIndex& mpf) {
  const size_t tiff = mpf.segment_offset + MpfIndex::kTiffInSegment;
  std::vector<SecondaryImage> images;
  for (size_t i = 0; i < mpf.entries.size(); ++i) {
    const MpfIndex::Entry& e = mpf.entries[i];
    if (e.offset == 0) continue;  // the primary image
    const size_t begin = tiff + e.offset;
    if (begin < layout.image_end || begin >= file.size() || e.size < 4 ||
        e.size > file.size() - begin || file[begin] != 0xFF || file[begin + 1] != kSoi)
      return std::nullopt;
    images.push_back({i, begin, begin + e.size});
  }
  if (images.empty()) return std::nullopt;
  std::sort(images.begin(), images.end(),
            [](const SecondaryImage& a, const SecondaryImage& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < images.size(); ++i)
    if (images[i].begin < images[i - 1].end) return std::nullopt;
  return images;
}

void rewrite_mpf(Bytes& output, const MpfIndex& mpf, size_t new_segment_offset,
                 size_t old_image_end, size_t new_image_end,
                 const std::vector<SecondaryImage>* moved) {
  const size_t old_tiff = mpf.segment_offset + MpfIndex::kTiffInSegment;
  const size_t new_tiff = new_segment_offset + MpfIndex::kTiffInSegment;
  for (const MpfIndex::Entry& e : mpf.entries) {
    const size_t field = new_segment_offset + e.field_offset;
    if (e.offset == 0) {  // the primary image itself
      if (e.size == old_image_end && new_image_end <= UINT32_MAX)
        put32(output, field + 4, static_cast<uint32_t>(new_image_end), mpf.little_endian);
      continue;
    }
    if (moved) {
      const size_t index = size_t(&e - mpf.entries.data());
      auto it = std::find_if(moved->begin(), moved->end(),
                             [&](const SecondaryImage& m) { return m.entry == index; });
      if (it == moved->end() || it->begin < new_tiff || it->begin - new_tiff > UINT32_MAX ||
          it->end - it->begin > UINT32_MAX)
        throw FormatError(Reason::kInternalError, mpf.segment_offset,
                          "a secondary image was not placed in the output");
      put32(output, field + 4, static_cast<uint32_t>(it->end - it->begin), mpf.little_endian);
      put32(output, field + 8, static_cast<uint32_t>(it->begin - new_tiff), mpf.little_endian);
      continue;
    }
    const size_t old_abs = old_tiff + e.offset;
    if (old_abs < old_image_end)
      throw FormatError(Reason::kUnsupportedVariant, mpf.segment_offset,
                        "MPF index points outside the data after the primary image");
    const size_t new_abs = old_abs - old_image_end + new_image_end;
    if (new_abs < new_tiff || new_abs - new_tiff > UINT32_MAX || new_abs + 2 > output.size() ||
        output[new_abs] != 0xFF || output[new_abs + 1] != kSoi)
      throw FormatError(Reason::kUnsupportedVariant, mpf.segment_offset,
                        "MPF index points outside the secondary images (no SOI at offset " +
                            std::to_string(e.offset) + ")");
    put32(output, field + 8, static_cast<uint32_t>(new_abs - new_tiff), mpf.little_endian);
  }
}

}  // namespace lighten::jpeg
