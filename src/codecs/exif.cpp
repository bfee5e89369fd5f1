#include "codecs/exif.h"

#include <algorithm>
#include <iterator>
#include <string_view>
#include <vector>

#include "core/errors.h"

namespace lighten {

std::optional<bool> tiff_little_endian(ByteView tiff) {
  if (starts_with(tiff, std::string_view("II*\0", 4))) return true;
  if (starts_with(tiff, std::string_view("MM\0*", 4))) return false;
  return std::nullopt;
}

namespace {

struct IfdEntry {
  uint16_t type = 0;
  uint32_t count = 0;
  std::array<uint8_t, 4> raw{};  // the value field as stored
  uint32_t number = 0;           // a SHORT's, a LONG's or an IFD pointer's value
};

// The entry of `tag` in the IFD at `at` of TIFF data in the byte order `le`, if there. Throws
// FormatError where the IFD runs past the data.
std::optional<IfdEntry> ifd_entry(ByteView tiff, bool le, uint32_t at, uint16_t tag) {
  ByteReader r(tiff, at);
  const uint16_t count = le ? r.u16le() : r.u16be();
  for (uint16_t i = 0; i < count; ++i) {
    const uint16_t t = le ? r.u16le() : r.u16be();
    IfdEntry e;
    e.type = le ? r.u16le() : r.u16be();
    e.count = le ? r.u32le() : r.u32be();
    const ByteView raw = r.take(4);
    std::copy(raw.begin(), raw.end(), e.raw.begin());
    ByteReader v(raw);
    if (e.type == 3) e.number = le ? v.u16le() : v.u16be();
    if (e.type == 4 || e.type == 13) e.number = le ? v.u32le() : v.u32be();
    if (t == tag) return e;
  }
  return std::nullopt;
}

uint32_t ifd0_offset(ByteView tiff, bool le) {
  ByteReader header(tiff, 4);
  return le ? header.u32le() : header.u32be();
}

}  // namespace

std::optional<int> tiff_orientation(ByteView tiff) {
  const std::optional<bool> le = tiff_little_endian(tiff);
  if (!le) return std::nullopt;
  try {
    const std::optional<IfdEntry> e = ifd_entry(tiff, *le, ifd0_offset(tiff, *le), 0x0112);
    if (e && e->type == 3 && e->count == 1 && e->number >= 1 && e->number <= 8)
      return int(e->number);
  } catch (const FormatError&) {
  }
  return std::nullopt;
}

std::optional<ExifColourSpace> tiff_other_colour_space(ByteView tiff) {
  const std::optional<bool> little_endian = tiff_little_endian(tiff);
  if (!little_endian) return std::nullopt;
  const bool le = *little_endian;
  try {
    const std::optional<IfdEntry> exif_ifd = ifd_entry(tiff, le, ifd0_offset(tiff, le), 0x8769);
    // IFD pointers are LONG, or the IFD type (13) TIFF added for them.
    const auto pointer = [](const IfdEntry& e) { return e.type == 4 || e.type == 13; };
    if (!exif_ifd || !pointer(*exif_ifd)) return std::nullopt;
    const std::optional<IfdEntry> space = ifd_entry(tiff, le, exif_ifd->number, 0xA001);
    if (!space || space->type != 3 || space->count != 1 || space->number == 1) return std::nullopt;
    ExifColourSpace out;
    out.colour_space = uint16_t(space->number);
    if (const auto interop = ifd_entry(tiff, le, exif_ifd->number, 0xA005);
        interop && pointer(*interop))
      if (const auto index = ifd_entry(tiff, le, interop->number, 0x0001);
          index && index->type == 2 && index->count == 4)
        out.interop_index = index->raw;
    return out;
  } catch (const FormatError&) {
    return std::nullopt;
  }
}

namespace {

// Bytes of one value of each TIFF field type (1 BYTE ... 13 IFD); 0 for types TIFF does not
// define.
uint64_t field_type_size(uint16_t type) {
  static constexpr uint8_t kSizes[] = {0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8, 4};
  return type < std::size(kSizes) ? kSizes[type] : 0;
}

struct PastEndWalk {
  ByteView tiff;
  bool le;
  std::vector<uint32_t> seen;  // IFDs walked: a loop ends the walk

  std::optional<uint64_t> ifd(uint32_t at, int depth, bool is_ifd0) {
    if (depth > 4 || std::find(seen.begin(), seen.end(), at) != seen.end()) return std::nullopt;
    seen.push_back(at);
    ByteReader r(tiff, at);
    const uint16_t count = le ? r.u16le() : r.u16be();
    // An IFD's picture (IFD1's thumbnail: JPEGInterchangeFormat and its length, or one strip and
    // its byte count) is named by an offset in one field and a length in another.
    std::optional<uint32_t> picture_at, picture_length, strip_at, strip_length;
    for (uint16_t i = 0; i < count; ++i) {
      const uint16_t tag = le ? r.u16le() : r.u16be();
      const uint16_t type = le ? r.u16le() : r.u16be();
      const uint32_t n = le ? r.u32le() : r.u32be();
      const ByteView raw = r.take(4);
      ByteReader v(raw);
      const uint32_t offset = le ? v.u32le() : v.u32be();
      const uint64_t size = field_type_size(type) * n;
      if (size > 4 && uint64_t(offset) + size > tiff.size()) return offset;
      // A SHORT value sits in the field's first two bytes.
      const uint32_t value =
          type == 3 ? uint32_t(le ? raw[0] | raw[1] << 8 : raw[0] << 8 | raw[1]) : offset;
      if (n == 1 && (type == 3 || type == 4)) {
        if (tag == 0x0201) picture_at = value;
        if (tag == 0x0202) picture_length = value;
        if (tag == 0x0111) strip_at = value;
        if (tag == 0x0117) strip_length = value;
      }
      const bool pointer = (type == 4 || type == 13) && n == 1;
      if (pointer && (tag == 0x8769 || tag == 0x8825 || tag == 0xA005))
        if (auto past = inside(offset, depth + 1)) return past;
      // Sony's maker note: its header, then an IFD whose offsets count from the TIFF header.
      if (tag == 0x927C && size > 12 + 2 && uint64_t(offset) + size <= tiff.size()) {
        const ByteView note = tiff.subspan(offset, 12);
        // Cameras, phones and Hasselblad's Sony-built models (the headers ExifTool reads).
        static constexpr std::string_view kSony[] = {"SONY DSC ", "SONY CAM ", "SONY MOBILE",
                                                     std::string_view("\0\0SONY PIC", 11),
                                                     "VHAB     "};
        if (std::any_of(std::begin(kSony), std::end(kSony),
                        [&](std::string_view h) { return starts_with(note, h); }))
          if (auto past = inside(offset + 12, depth + 1)) return past;
      }
    }
    for (const auto& [start, length] :
         {std::pair{picture_at, picture_length}, std::pair{strip_at, strip_length}})
      if (start && length && uint64_t(*start) + *length > tiff.size()) return *start;
    if (!is_ifd0) return std::nullopt;
    const uint32_t next = le ? r.u32le() : r.u32be();
    return next != 0 ? inside(next, depth + 1) : std::nullopt;
  }

  // An IFD that does not read is no value past the end: what it names cannot be followed.
  std::optional<uint64_t> inside(uint32_t at, int depth) {
    try {
      return ifd(at, depth, false);
    } catch (const FormatError&) {
      return std::nullopt;
    }
  }
};

}  // namespace

std::optional<uint64_t> tiff_value_past_end(ByteView tiff) {
  const std::optional<bool> le = tiff_little_endian(tiff);
  if (!le) return std::nullopt;
  PastEndWalk walk{tiff, *le, {}};
  try {
    return walk.ifd(ifd0_offset(tiff, *le), 0, true);
  } catch (const FormatError&) {
    return std::nullopt;
  }
}

Bytes minimal_tiff(int orientation, const std::optional<ExifColourSpace>& colour) {
  Bytes out = {'M', 'M', 0, 42, 0, 0, 0, 8};
  auto put16 = [&](uint32_t v) {
    out.push_back(uint8_t(v >> 8));
    out.push_back(uint8_t(v));
  };
  auto put32 = [&](uint32_t v) {
    put16(v >> 16);
    put16(v & 0xFFFF);
  };
  // Each IFD follows the one before it: its offset is where the last one ends.
  const bool interop = colour && colour->interop_index != std::array<uint8_t, 4>{};
  const uint16_t ifd0_entries = uint16_t((orientation != 1) + (colour ? 1 : 0));
  const uint32_t exif_at = 8 + 2 + 12 * ifd0_entries + 4;
  const uint32_t interop_at = exif_at + 2 + 12 * (interop ? 2 : 1) + 4;
  put16(ifd0_entries);
  if (orientation != 1) put16(0x0112), put16(3), put32(1), put16(uint32_t(orientation)), put16(0);
  if (colour) put16(0x8769), put16(4), put32(1), put32(exif_at);
  put32(0);  // no next IFD
  if (!colour) return out;
  put16(interop ? 2 : 1);
  put16(0xA001), put16(3), put32(1), put16(colour->colour_space), put16(0);
  if (interop) put16(0xA005), put16(4), put32(1), put32(interop_at);
  put32(0);
  if (!interop) return out;
  put16(1);
  put16(0x0001), put16(2), put32(4);
  out.insert(out.end(), colour->interop_index.begin(), colour->interop_index.end());
  put32(0);
  return out;
}

Bytes orientation_only_tiff(int orientation) {
  return {'M',  'M',
          0,    42,  // big-endian TIFF header
          0,    0,
          0,    8,     // IFD0 at 8
          0x00, 0x01,  // one entry
          0x01, 0x12,
          0x00, 0x03,
          0x00, 0x00,
          0x00, 0x01,  // Orientation, SHORT, 1
          0x00, static_cast<uint8_t>(orientation),
          0x00, 0x00,  // the value, padded
          0x00, 0x00,
          0x00, 0x00};  // no next IFD
}

}  // namespace lighten
