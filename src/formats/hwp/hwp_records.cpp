#include "formats/hwp/hwp_records.h"

#include <cstdio>
#include <optional>

namespace lighten::hwp {
namespace {

constexpr uint16_t kTagParaText = kTagBegin + 51;
constexpr uint32_t kExtendedSize = 0xFFF;  // the size follows the header as a UINT32

[[noreturn]] void corrupt(size_t offset, const std::string& what) {
  throw FormatError(Reason::kCorrupt, offset, "HWP record stream: " + what);
}

// A WCHAR array as HWP stores it: a UINT16 count, then that many UTF-16LE units.
std::u16string read_wchars(ByteReader& r) {
  const uint16_t count = r.u16le();
  std::u16string s;
  s.reserve(std::min<size_t>(count, r.remaining() / 2));
  for (uint16_t i = 0; i < count; ++i) s += char16_t(r.u16le());
  return s;
}

// Calls visit(record) for each record in turn, without keeping them.
template <class Visit>
void visit_records(ByteView stream, Visit&& visit) {
  ByteReader r(stream);
  while (!r.at_end()) {
    const size_t at = r.offset();
    if (r.remaining() < 4) corrupt(at, "a record header is cut short");
    const uint32_t header = r.u32le();
    uint32_t size = header >> 20;
    if (size == kExtendedSize) size = r.u32le();
    if (size > r.remaining())
      corrupt(at, "a record of " + std::to_string(size) + " bytes runs past the stream's end");
    Record rec;
    rec.tag = uint16_t(header & 0x3FF);
    rec.level = uint16_t(header >> 10 & 0x3FF);
    rec.data = r.take(size);
    rec.offset = at;
    visit(rec);
  }
}

}  // namespace

std::vector<Record> parse_records(ByteView stream) {
  std::vector<Record> records;
  visit_records(stream, [&](const Record& rec) { records.push_back(rec); });
  return records;
}

size_t check_records(ByteView stream) {
  size_t count = 0;
  visit_records(stream, [&](const Record&) { ++count; });
  return count;
}

std::string BinDataItem::stream_name() const {
  char name[16];
  std::snprintf(name, sizeof name, "BIN%04X", unsigned(id));
  if (type == BinDataType::kStorage) return std::string(name) + ".OLE";
  return std::string(name) + "." + extension;
}

bool BinDataItem::deflated(bool document_compressed) const {
  switch (compression) {
    case BinDataCompression::kCompress:
      return true;
    case BinDataCompression::kStore:
      return false;
    default:
      return document_compressed;
  }
}

namespace {

BinDataItem read_bin_data_item(const Record& rec) {
  ByteReader r(rec.data);
  BinDataItem item;
  item.properties = r.u16le();
  const uint16_t type = item.properties & 0xF;
  const uint16_t compression = item.properties >> 4 & 0x3;
  if (type > 2) corrupt(rec.offset, "BinData item of unknown type " + std::to_string(type));
  if (compression == 3) corrupt(rec.offset, "BinData item with an unknown compression flag");
  item.type = BinDataType(type);
  item.compression = BinDataCompression(compression);
  if (item.type == BinDataType::kLink) {
    read_wchars(r);  // absolute path
    read_wchars(r);  // relative path
  } else {
    item.id = r.u16le();
    if (item.type == BinDataType::kEmbedding) {
      for (char16_t c : read_wchars(r)) {
        // Extensions are short printable ASCII; anything else cannot name a stream we could find.
        if (c < 0x20 || c > 0x7E || c == '/')
          corrupt(rec.offset, "BinData item whose extension is not printable ASCII");
        item.extension += char(c);
      }
    }
  }
  return item;
}

}  // namespace

std::vector<BinDataItem> bin_data_items(ByteView doc_info) {
  // Pictures name their item by a 16-bit number in record order: a DocInfo of millions of tiny
  // records (a deflate bomb's kind) is damaged, and would cost 40 bytes a record here.
  constexpr size_t kMostItems = 65535;
  std::vector<BinDataItem> items;
  visit_records(doc_info, [&](const Record& rec) {
    if (rec.tag != kTagBinData) return;
    if (items.size() == kMostItems)
      corrupt(rec.offset,
              "more BinData items than pictures can number (" + std::to_string(kMostItems) + ")");
    try {
      items.push_back(read_bin_data_item(rec));
    } catch (const FormatError& e) {
      // The record's own length is intact: its content is damaged, not the file cut short.
      if (e.reason() != Reason::kTruncated) throw;
      corrupt(rec.offset, "a BinData item is shorter than its fields");
    }
  });
  return items;
}

std::vector<PictureLook> picture_looks(ByteView section) {
  constexpr uint16_t kTagShapeComponentPicture = kTagBegin + 69;
  // Border colour, width and properties (12 bytes), the image rectangle's corners (32), the
  // crop rectangle (16), the inner margins (8).
  constexpr size_t kPictureInfo = 68;
  std::vector<PictureLook> looks;
  visit_records(section, [&](const Record& rec) {
    if (rec.tag != kTagShapeComponentPicture || rec.data.size() < kPictureInfo + 5) return;
    const ByteView info = rec.data.subspan(kPictureInfo);
    looks.push_back({int8_t(info[0]), int8_t(info[1]), info[2], uint16_t(info[3] | info[4] << 8)});
  });
  return looks;
}

namespace {

// The image's look in the fill information (채우기 정보) that `r` stands at; nothing for a fill
// without an image, or one cut short.
std::optional<FillLook> read_fill(ByteReader& r) {
  constexpr uint32_t kSolid = 0x1, kImage = 0x2, kGradient = 0x4;
  constexpr size_t kSolidSize = 12;  // background and pattern colours, pattern type
  if (r.remaining() < 4) return std::nullopt;
  const uint32_t type = r.u32le();
  if (type > (kSolid | kImage | kGradient)) return FillLook{{}, true};  // not a fill type
  if (!(type & kImage)) return std::nullopt;
  if (type & kGradient) return FillLook{{}, true};
  if (type & kSolid) r.skip(std::min(kSolidSize, r.remaining()));
  if (r.remaining() < 6) return std::nullopt;
  r.skip(1);  // how the image fills the area (tiled, centred, ...)
  const ByteView info = r.take(5);
  return FillLook{{int8_t(info[0]), int8_t(info[1]), info[2], uint16_t(info[3] | info[4] << 8)}};
}

constexpr uint32_t chid(const char (&id)[5]) {
  return uint32_t(uint8_t(id[0])) << 24 | uint32_t(uint8_t(id[1])) << 16 |
         uint32_t(uint8_t(id[2])) << 8 | uint8_t(id[3]);
}

}  // namespace

std::vector<FillLook> border_fill_looks(ByteView doc_info) {
  constexpr uint16_t kTagBorderFill = kTagBegin + 4;
  // Properties (2 bytes), four border lines of type, width and colour (24), the diagonal (6).
  constexpr size_t kFillInfo = 32;
  std::vector<FillLook> looks;
  visit_records(doc_info, [&](const Record& rec) {
    if (rec.tag != kTagBorderFill || rec.data.size() < kFillInfo) return;
    ByteReader r(rec.data, kFillInfo);
    if (std::optional<FillLook> look = read_fill(r)) looks.push_back(*look);
  });
  return looks;
}

std::vector<FillLook> bullet_looks(ByteView doc_info) {
  constexpr uint16_t kTagBullet = kTagBegin + 7;
  // The paragraph head (12 bytes) and the bullet character (2), then whether the bullet is a
  // picture (4) and that picture's brightness, contrast, effect and BinData item (5).
  constexpr size_t kImageFlag = 14, kLook = 18;
  std::vector<FillLook> looks;
  visit_records(doc_info, [&](const Record& rec) {
    if (rec.tag != kTagBullet || rec.data.size() < kImageFlag + 4) return;
    ByteReader r(rec.data, kImageFlag);
    if (r.u32le() == 0) return;
    if (rec.data.size() < kLook + 5) {
      looks.push_back({{}, true});
      return;
    }
    const ByteView info = rec.data.subspan(kLook);
    looks.push_back(
        {{int8_t(info[0]), int8_t(info[1]), info[2], uint16_t(info[3] | info[4] << 8)}, false});
  });
  return looks;
}

std::vector<FillLook> shape_fill_looks(ByteView section) {
  constexpr uint16_t kTagShapeComponent = kTagBegin + 60;
  // After the control id(s): the offset in the group (8 bytes), group level and version (4), the
  // original and current sizes (16), flags (4), rotation angle (2) and centre (8).
  constexpr size_t kBeforeRendering = 42;
  constexpr size_t kMatrix = 6 * 8;  // three rows of two doubles
  constexpr size_t kLineInfo = 13;   // colour, width, properties, outline style
  std::vector<FillLook> looks;
  visit_records(section, [&](const Record& rec) {
    if (rec.tag != kTagShapeComponent || rec.data.size() < 8) return;
    ByteReader r(rec.data);
    const uint32_t id = r.u32le();
    // The id stands twice in a component that is a control of its own.
    if (r.u32le() != id) r.seek(4);
    if (id == chid("$con")) return;  // a group: its members hold their own fills
    try {
      r.skip(kBeforeRendering);
      const uint16_t scale_rotations = r.u16le();
      r.skip(kMatrix + 2 * kMatrix * size_t(scale_rotations));  // translation, then the pairs
      if (r.remaining() < kLineInfo) return;  // pictures and OLE objects stop here
      r.skip(kLineInfo);
      if (std::optional<FillLook> look = read_fill(r)) looks.push_back(*look);
    } catch (const FormatError&) {
      // A component cut short holds no fill this could read.
    }
  });
  return looks;
}

std::u16string paragraph_text(ByteView section) {
  std::u16string text;
  visit_records(section, [&](const Record& rec) {
    if (rec.tag != kTagParaText) return;
    const size_t units = rec.data.size() / 2;
    for (size_t i = 0; i < units; ++i) {
      const char16_t c = char16_t(rec.data[2 * i] | rec.data[2 * i + 1] << 8);
      if (c >= 32) {
        text += c;
      } else if (c == 13 || c == 10) {
        text += u'\n';
      } else if (c == 9) {
        text += u'\t';
        i += 7;  // a tab is an inline control of 8 units
      } else if (c != 0 && !(c >= 24 && c <= 31)) {
        i += 7;  // inline and extended controls take 8 units
      }
    }
  });
  return text;
}

}  // namespace lighten::hwp
