#include "codecs/exif.h"

#include <string_view>

#include "core/errors.h"

namespace lighten {

std::optional<bool> tiff_little_endian(ByteView tiff) {
  if (starts_with(tiff, std::string_view("II*\0", 4))) return true;
  if (starts_with(tiff, std::string_view("MM\0*", 4))) return false;
  return std::nullopt;
}

std::optional<int> tiff_orientation(ByteView tiff) {
  const std::optional<bool> little_endian = tiff_little_endian(tiff);
  if (!little_endian) return std::nullopt;
  const bool le = *little_endian;
  try {
    ByteReader r(tiff, 4);
    auto u16 = [&] { return le ? r.u16le() : r.u16be(); };
    auto u32 = [&] { return le ? r.u32le() : r.u32be(); };
    r.seek(u32());
    uint16_t count = u16();
    for (uint16_t i = 0; i < count; ++i) {
      uint16_t tag = u16();
      uint16_t type = u16();
      uint32_t n = u32();
      uint16_t value = u16();
      r.skip(2);
      if (tag == 0x0112 && type == 3 && n == 1) {
        if (value >= 1 && value <= 8) return value;
        return std::nullopt;
      }
    }
  } catch (const FormatError&) {
  }
  return std::nullopt;
}

bool tiff_names_other_colour_space(ByteView tiff) {
  const std::optional<bool> little_endian = tiff_little_endian(tiff);
  if (!little_endian) return false;
  const bool le = *little_endian;
  // The value of `tag` (SHORT or LONG, one of it) in the IFD at `at`, if there.
  auto find = [&](uint32_t at, uint16_t tag) -> std::optional<uint32_t> {
    ByteReader r(tiff, at);
    const uint16_t count = le ? r.u16le() : r.u16be();
    for (uint16_t i = 0; i < count; ++i) {
      const uint16_t t = le ? r.u16le() : r.u16be();
      const uint16_t type = le ? r.u16le() : r.u16be();
      const uint32_t n = le ? r.u32le() : r.u32be();
      uint32_t value;  // a SHORT fills the first two bytes of the four
      if (type == 3) {
        value = le ? r.u16le() : r.u16be();
        r.skip(2);
      } else {
        value = le ? r.u32le() : r.u32be();
      }
      if (t == tag && n == 1 && (type == 3 || type == 4)) return value;
    }
    return std::nullopt;
  };
  try {
    ByteReader header(tiff, 4);
    const uint32_t ifd0 = le ? header.u32le() : header.u32be();
    const std::optional<uint32_t> exif_ifd = find(ifd0, 0x8769);
    if (!exif_ifd) return false;
    const std::optional<uint32_t> colour_space = find(*exif_ifd, 0xA001);
    return colour_space && *colour_space != 1;
  } catch (const FormatError&) {
    return false;
  }
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
