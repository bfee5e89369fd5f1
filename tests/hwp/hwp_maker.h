// Builds minimal HWP 5.0 documents for tests: FileHeader, DocInfo with BinData declarations,
// one BodyText section with text, BinData items, an optional preview image; deflated with zlib
// (level 1, leaving room for lighten) and Hangul's CRC/length trailer.
#pragma once

#include <zlib.h>

#include <string>
#include <vector>

#include "cfb/cfb_maker.h"

namespace lighten::testing {

struct HwpBinItem {
  uint16_t id = 1;
  std::string extension = "jpg";
  std::vector<uint8_t> content;
  uint16_t compression = 0;  // 0 as the document, 1 deflate, 2 store (HWPTAG_BIN_DATA bits 4-5)
  bool declared = true;      // false: a stream no DocInfo record names
};

// A picture shape in the section: its picture info (HWPTAG_SHAPE_COMPONENT_PICTURE).
struct HwpPictureShape {
  int8_t contrast = 0;
  uint8_t effect = 0;  // 2: black and white
  uint16_t bin_item = 1;
};

struct HwpRecipe {
  uint32_t version = 0x05000304;
  uint32_t properties = 1;  // bit 0 compressed
  std::u16string text = u"Hello, 한글 world";
  std::vector<HwpBinItem> items;
  std::vector<uint8_t> preview;  // PrvImage when not empty
  enum class Trailer { kNone, kCrc, kZeroCrc } trailer = Trailer::kCrc;
  bool view_text = false;                // a ViewText storage, as distribution documents have
  std::vector<std::string> doc_options;  // streams under DocOptions (64 bytes each)
  std::vector<HwpPictureShape> shapes;
  std::vector<HwpPictureShape> fills;        // image fills of DocInfo's HWPTAG_BORDER_FILL records
  std::vector<HwpPictureShape> shape_fills;  // image fills of rectangles in the section
  std::vector<HwpPictureShape> bullets;      // DocInfo's HWPTAG_BULLET records with a picture
};

inline void put_le16(std::vector<uint8_t>& v, uint32_t x) {
  v.push_back(uint8_t(x));
  v.push_back(uint8_t(x >> 8));
}
inline void put_le32(std::vector<uint8_t>& v, uint32_t x) {
  put_le16(v, x & 0xFFFF);
  put_le16(v, x >> 16);
}

inline void put_record(std::vector<uint8_t>& out, uint16_t tag, uint16_t level,
                       const std::vector<uint8_t>& data) {
  const uint32_t size = uint32_t(data.size());
  put_le32(out, tag | uint32_t(level) << 10 | std::min<uint32_t>(size, 0xFFF) << 20);
  if (size >= 0xFFF) put_le32(out, size);
  out.insert(out.end(), data.begin(), data.end());
}

inline std::vector<uint8_t> hwp_deflate(const std::vector<uint8_t>& content,
                                        HwpRecipe::Trailer trailer) {
  z_stream s{};
  deflateInit2(&s, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
  std::vector<uint8_t> out(deflateBound(&s, uLong(content.size())) + 16);
  s.next_in = const_cast<Bytef*>(content.data());
  s.avail_in = uInt(content.size());
  s.next_out = out.data();
  s.avail_out = uInt(out.size());
  deflate(&s, Z_FINISH);
  out.resize(s.total_out);
  deflateEnd(&s);
  if (trailer != HwpRecipe::Trailer::kNone) {
    const uint32_t crc = trailer == HwpRecipe::Trailer::kCrc
                             ? uint32_t(crc32(0, content.data(), uInt(content.size())))
                             : 0;
    put_le32(out, crc);
    put_le32(out, uint32_t(content.size()));
  }
  return out;
}

// Fill information of `type` (bit 0 solid colour, 1 image, 2 gradient); the image's picture info
// is `image`'s. A gradient's fields are not written.
inline void put_fill(std::vector<uint8_t>& rec, uint32_t type, const HwpPictureShape& image) {
  put_le32(rec, type);
  if (type & 0x1) rec.insert(rec.end(), {0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF});
  if (type & 0x2) {
    rec.insert(rec.end(), {1, 0, uint8_t(image.contrast), image.effect});  // tiled
    put_le16(rec, image.bin_item);
  }
  put_le32(rec, 0);  // no additional fill properties
}

// A HWPTAG_BORDER_FILL record: no border lines, then the fill.
inline std::vector<uint8_t> border_fill(uint32_t type, const HwpPictureShape& image) {
  std::vector<uint8_t> rec(32, 0);
  put_fill(rec, type, image);
  return rec;
}

// A HWPTAG_SHAPE_COMPONENT record of a drawing shape `id` ("$rec": bytes "cer$"), its control id
// written twice as for a shape that is a control of its own: placement and size, the rendering
// information with `scale_rotations` pairs of matrices, a line, then the fill.
inline std::vector<uint8_t> shape_component(const char (&id)[5], uint16_t scale_rotations,
                                            uint32_t fill_type, const HwpPictureShape& image) {
  std::vector<uint8_t> rec;
  for (int k = 0; k < 2; ++k)
    for (int i = 3; i >= 0; --i) rec.push_back(uint8_t(id[i]));
  rec.resize(rec.size() + 42, 0);
  put_le16(rec, scale_rotations);
  rec.resize(rec.size() + 48 * (1 + 2 * size_t(scale_rotations)), 0x3F);
  rec.insert(rec.end(), {0, 0, 0, 0, 33, 0, 0, 0, 0x41, 0, 0, 0xD1, 0});  // the line
  put_fill(rec, fill_type, image);
  return rec;
}

inline std::vector<uint8_t> hwp_doc_info(const HwpRecipe& r) {
  std::vector<uint8_t> out;
  put_record(out, 0x10, 0, std::vector<uint8_t>(26, 0));  // DOCUMENT_PROPERTIES
  std::vector<uint8_t> mappings;
  for (int i = 0; i < 18; ++i) put_le32(mappings, i == 0 ? uint32_t(r.items.size()) : 0);
  put_record(out, 0x11, 0, mappings);  // ID_MAPPINGS
  for (const HwpBinItem& item : r.items) {
    if (!item.declared) continue;
    std::vector<uint8_t> rec;
    put_le16(rec, 1u | uint32_t(item.compression) << 4);  // embedding
    put_le16(rec, item.id);
    put_le16(rec, uint32_t(item.extension.size()));
    for (char c : item.extension) put_le16(rec, uint8_t(c));
    put_record(out, 0x12, 1, rec);
  }
  for (const HwpPictureShape& fill : r.fills) put_record(out, 0x14, 1, border_fill(0x3, fill));
  for (const HwpPictureShape& bullet : r.bullets) {
    std::vector<uint8_t> rec(12, 0);  // the paragraph head
    put_le16(rec, 0xF0B7);            // the bullet character
    put_le32(rec, 1);                 // a picture bullet
    rec.insert(rec.end(), {0, uint8_t(bullet.contrast), bullet.effect});
    put_le16(rec, bullet.bin_item);
    put_record(out, 0x17, 1, rec);
  }
  return out;
}

inline std::vector<uint8_t> hwp_section(const std::u16string& text,
                                        const std::vector<HwpPictureShape>& shapes = {},
                                        const std::vector<HwpPictureShape>& shape_fills = {}) {
  std::vector<uint8_t> out, header(22, 0), chars;
  header[0] = uint8_t(text.size() + 1);
  put_record(out, 0x42, 0, header);  // PARA_HEADER
  for (char16_t c : text) put_le16(chars, c);
  put_le16(chars, 13);
  put_record(out, 0x43, 1, chars);  // PARA_TEXT
  for (const HwpPictureShape& shape : shapes) {
    // Border, image and crop rectangles, margins (68 bytes), then the picture info.
    std::vector<uint8_t> picture(78, 0);
    picture[69] = uint8_t(shape.contrast);
    picture[70] = shape.effect;
    picture[71] = uint8_t(shape.bin_item);
    picture[72] = uint8_t(shape.bin_item >> 8);
    put_record(out, 0x55, 3, picture);  // SHAPE_COMPONENT_PICTURE
  }
  for (const HwpPictureShape& fill : shape_fills)
    put_record(out, 0x4C, 2, shape_component("$rec", 1, 0x3, fill));  // SHAPE_COMPONENT
  return out;
}

inline std::string bin_name(const HwpBinItem& item) {
  char name[16];
  std::snprintf(name, sizeof name, "BIN%04X.", unsigned(item.id));
  return name + item.extension;
}

inline std::vector<uint8_t> make_hwp(const HwpRecipe& r) {
  const bool compressed = r.properties & 1;
  auto pack = [&](const std::vector<uint8_t>& content, bool deflated) {
    return deflated ? hwp_deflate(content, r.trailer) : content;
  };
  std::vector<uint8_t> header(256, 0);
  const std::string sig = "HWP Document File";
  std::copy(sig.begin(), sig.end(), header.begin());
  for (int i = 0; i < 4; ++i) header[32 + i] = uint8_t(r.version >> (8 * i));
  for (int i = 0; i < 4; ++i) header[36 + i] = uint8_t(r.properties >> (8 * i));
  std::vector<CfbItem> items = {
      {"FileHeader", header},
      {"DocInfo", pack(hwp_doc_info(r), compressed)},
      {"BodyText/Section0", pack(hwp_section(r.text, r.shapes, r.shape_fills), compressed)},
      {"\x05HwpSummaryInformation", std::vector<uint8_t>(300, 0x5A)},
      {"PrvText", {'H', 0, 'i', 0}},
      {"Scripts/JScriptVersion", pack({1, 0, 0, 0, 0, 0, 0, 0}, compressed)},
  };
  if (!r.preview.empty()) items.push_back({"PrvImage", r.preview});
  if (r.view_text) items.push_back({"ViewText/Section0", std::vector<uint8_t>(64, 0x33)});
  for (const std::string& name : r.doc_options)
    items.push_back({"DocOptions/" + name, std::vector<uint8_t>(64, 0x44)});
  for (const HwpBinItem& item : r.items) {
    const bool deflated = item.compression == 1 || (item.compression == 0 && compressed);
    items.push_back({"BinData/" + bin_name(item), pack(item.content, deflated)});
  }
  return make_cfb(items);
}

}  // namespace lighten::testing
