#include "formats/png/png_chunks.h"

#include "codecs/deflate.h"

namespace lighten {

unsigned PngHeader::channels() const {
  switch (color_type) {
    case 0:
      return 1;  // gray
    case 2:
      return 3;  // RGB
    case 3:
      return 1;  // palette index
    case 4:
      return 2;  // gray + alpha
    case 6:
      return 4;  // RGBA
    default:
      return 0;
  }
}

namespace {

void check_header(const PngHeader& h) {
  auto bad = [](const std::string& why) { throw FormatError(Reason::kCorrupt, 8, "IHDR " + why); };
  if (h.width == 0 || h.height == 0 || h.width > 0x7FFFFFFF || h.height > 0x7FFFFFFF)
    bad("has an invalid size");
  const uint8_t d = h.bit_depth;
  bool ok = false;
  switch (h.color_type) {
    case 0:
      ok = d == 1 || d == 2 || d == 4 || d == 8 || d == 16;
      break;
    case 3:
      ok = d == 1 || d == 2 || d == 4 || d == 8;
      break;
    case 2:
    case 4:
    case 6:
      ok = d == 8 || d == 16;
      break;
    default:
      bad("has an unknown colour type");
  }
  if (!ok) bad("combines a bit depth and colour type PNG does not allow");
  if (h.interlace > 1) bad("has an unknown interlace method");
}

}  // namespace

PngFile read_png_chunks(ByteView bytes) {
  if (!starts_with(bytes, std::string_view(kPngSignature, 8)))
    throw FormatError(Reason::kCorrupt, 0, "not a PNG signature");
  PngFile png;
  ByteReader r(bytes, 8);
  bool seen_idat = false, idat_ended = false, seen_iend = false;
  int palettes = 0;
  while (!seen_iend) {
    const size_t start = r.offset();
    const uint32_t length = r.u32be();
    if (length > 0x7FFFFFFF) throw FormatError(Reason::kCorrupt, start, "chunk length over 2^31");
    ByteView type_and_data = r.take(4 + size_t(length));
    const uint32_t crc = r.u32be();
    PngChunk c;
    std::copy(type_and_data.begin(), type_and_data.begin() + 4, c.type.begin());
    for (char ch : c.type)
      if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z')))
        throw FormatError(Reason::kCorrupt, start + 4, "chunk type is not four letters");
    c.data = type_and_data.subspan(4);
    c.whole = bytes.subspan(start, r.offset() - start);
    if (crc32_of(type_and_data) != crc)
      throw FormatError(Reason::kCorrupt, start, c.type_name() + " chunk has a bad CRC");
    if (png.chunks.empty()) {
      if (c.is("CgBI"))
        throw FormatError(Reason::kUnsupportedVariant, start,
                          "Apple CgBI PNG (an iPhone app's, not a standard PNG) is left as it is");
      if (!c.is("IHDR") || length != 13)
        throw FormatError(Reason::kCorrupt, start, "the first chunk is not IHDR");
      ByteReader h(c.data);
      png.header.width = h.u32be();
      png.header.height = h.u32be();
      png.header.bit_depth = h.u8();
      png.header.color_type = h.u8();
      if (h.u8() != 0 || h.u8() != 0)
        throw FormatError(Reason::kUnsupportedVariant, 8, "unknown compression or filter method");
      png.header.interlace = h.u8();
      check_header(png.header);
    } else if (c.is("IHDR")) {
      throw FormatError(Reason::kCorrupt, start, "a second IHDR");
    }
    // A second PLTE libpng refuses in any colour type; a palette image needs its one palette of
    // 1 to 256 colours before its image data (other colour types' suggested palettes libpng
    // may pass over).
    if (c.is("PLTE") && ++palettes > 1) throw FormatError(Reason::kCorrupt, start, "a second PLTE");
    // An empty one libpng refuses in colour images too (grey ones' PLTE it ignores).
    if (c.is("PLTE") && c.data.empty() && (png.header.color_type & 2) != 0)
      throw FormatError(Reason::kCorrupt, start, "an empty PLTE (a palette of no colours)");
    if (c.is("PLTE") && png.header.color_type == 3) {
      if (seen_idat) throw FormatError(Reason::kCorrupt, start, "PLTE after the image data");
      if (c.data.empty() || c.data.size() % 3 != 0 || c.data.size() > 3 * 256)
        throw FormatError(
            Reason::kCorrupt, start,
            "PLTE of " + std::to_string(c.data.size()) + " bytes is no list of 1 to 256 colours");
    }
    if (c.is("IDAT") && png.header.color_type == 3 && palettes == 0)
      throw FormatError(Reason::kCorrupt, start, "a palette image without PLTE before its data");
    if (c.is("IDAT")) {
      if (idat_ended) throw FormatError(Reason::kCorrupt, start, "IDAT chunks are not consecutive");
      seen_idat = true;
    } else if (seen_idat) {
      idat_ended = true;
    }
    seen_iend = c.is("IEND");
    png.chunks.push_back(c);
  }
  if (!seen_idat) throw FormatError(Reason::kCorrupt, r.offset(), "no image data (IDAT)");
  png.trailing = bytes.subspan(r.offset());
  return png;
}

const PngChunk* find_png_chunk(const PngFile& png, const char* type) {
  for (const PngChunk& c : png.chunks)
    if (c.is(type)) return &c;
  return nullptr;
}

void append_png_chunk(Bytes& out, const char* type, ByteView data) {
  const uint32_t n = uint32_t(data.size());
  const uint8_t length[4] = {uint8_t(n >> 24), uint8_t(n >> 16), uint8_t(n >> 8), uint8_t(n)};
  out.insert(out.end(), length, length + 4);
  const size_t type_at = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  const uint32_t crc = crc32_of(ByteView(out).subspan(type_at));
  const uint8_t c[4] = {uint8_t(crc >> 24), uint8_t(crc >> 16), uint8_t(crc >> 8), uint8_t(crc)};
  out.insert(out.end(), c, c + 4);
}

}  // namespace lighten
