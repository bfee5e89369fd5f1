// HWP 5.0 records, the unit of the DocInfo and BodyText/Section streams (once inflated), and
// the BinData items DocInfo declares.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/bytes.h"

namespace lighten::hwp {

inline constexpr uint16_t kTagBegin = 0x10;
inline constexpr uint16_t kTagIdMappings = kTagBegin + 1;
inline constexpr uint16_t kTagBinData = kTagBegin + 2;

struct Record {
  uint16_t tag = 0;    // 10 bits
  uint16_t level = 0;  // 10 bits
  ByteView data;
  size_t offset = 0;  // of the record header in the stream
};

// Splits a record stream; every header and body must fit in `stream` (FormatError otherwise).
std::vector<Record> parse_records(ByteView stream);
// The same check without keeping the records: how many there are.
size_t check_records(ByteView stream);

// A HWPTAG_BIN_DATA record.
enum class BinDataType : uint8_t { kLink = 0, kEmbedding = 1, kStorage = 2 };
enum class BinDataCompression : uint8_t { kDefault = 0, kCompress = 1, kStore = 2 };

struct BinDataItem {
  uint16_t properties = 0;
  BinDataType type = BinDataType::kLink;
  BinDataCompression compression = BinDataCompression::kDefault;
  uint16_t id = 0;        // embedding and storage items: the number in the stream's name
  std::string extension;  // embedding items: "jpg", "png", "bmp", "ole", ...
  // The stream under BinData that holds the item: "BIN0001.jpg" (storage items: "BIN0001.OLE").
  std::string stream_name() const;
  // Whether the stream is deflated, given the FileHeader's compression bit.
  bool deflated(bool document_compressed) const;
};

// Every BinData item declared in an (inflated) DocInfo stream, in record order.
std::vector<BinDataItem> bin_data_items(ByteView doc_info);

// How a picture shape shows its picture: the picture info of a HWPTAG_SHAPE_COMPONENT_PICTURE
// record (after the border, the image and crop rectangles and the inner margins).
struct PictureLook {
  static constexpr uint8_t kBlackAndWhite = 2;  // effect: 0 as it is, 1 grey
  static constexpr uint8_t kPattern = 3;        // an 8x8 dither of the picture
  int8_t brightness = 0;                        // -100 .. 100
  int8_t contrast = 0;                          // -100 .. 100
  uint8_t effect = 0;
  uint16_t bin_item = 0;  // the BinData item's place among DocInfo's declarations, from 1
};

// The look of every picture shape in an (inflated) section stream, in record order; a record
// too short to hold it is skipped.
std::vector<PictureLook> picture_looks(ByteView section);

// How the image fills of an (inflated) DocInfo stream's HWPTAG_BORDER_FILL records show their
// pictures (page, table cell and paragraph backgrounds), in record order. Where a fill also holds
// a gradient, the specification and readers (hwplib) lay its fields out differently, so where
// its image's look would be is not read: it is listed as `unread`, for callers to assume the
// worst; so is a fill whose type has bits the format does not define.
struct FillLook {
  PictureLook look;
  bool unread = false;
};
std::vector<FillLook> border_fill_looks(ByteView doc_info);
// The same for the picture bullets of DocInfo's HWPTAG_BULLET records; a picture bullet too
// short to hold its look is `unread`.
std::vector<FillLook> bullet_looks(ByteView doc_info);
// The same for the drawing shapes (rectangles, ellipses, polygons, ...) of an (inflated) section
// stream: the fill that follows the rendering information and the line of each
// HWPTAG_SHAPE_COMPONENT record. Pictures, OLE objects and groups have none there.
std::vector<FillLook> shape_fill_looks(ByteView section);

// Record streams with text: the UTF-16 characters of every HWPTAG_PARA_TEXT record, controls
// left out, paragraphs ended by '\n'. Used by describe and the tests.
std::u16string paragraph_text(ByteView section);

}  // namespace lighten::hwp
