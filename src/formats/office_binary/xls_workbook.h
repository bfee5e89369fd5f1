// Excel 97-2003 workbooks ([MS-XLS], BIFF8): the pictures of a workbook are BLIPs inside the
// FBSE records of the OfficeArtDggContainer that the globals substream carries in an
// MsoDrawingGroup record and the MsoDrawingGroup / Continue records after it. Shrinking them
// means laying that chain out again (at most 8224 payload bytes a record) and moving every
// absolute stream position that points past it: BoundSheet8.lbPlyPos, Index.ibXF and
// Index.rgibRw, and ExtSST's ISSTInf.ib. DBCELL offsets are relative and stay valid.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "formats/office_binary/officeart_records.h"

namespace lighten::xls {

inline constexpr uint16_t kBof = 0x0809;
inline constexpr uint16_t kEof = 0x000A;
inline constexpr uint16_t kFilePass = 0x002F;
inline constexpr uint16_t kContinue = 0x003C;
inline constexpr uint16_t kBoundSheet = 0x0085;
inline constexpr uint16_t kDrawingGroup = 0x00EB;
inline constexpr uint16_t kDrawing = 0x00EC;  // MsoDrawing: a sheet's shapes
inline constexpr uint16_t kExtSst = 0x00FF;
inline constexpr uint16_t kIndex = 0x020B;
inline constexpr uint16_t kBiff8 = 0x0600;
inline constexpr size_t kMaxPayload = 8224;

struct Record {
  size_t offset = 0;  // of the 4-byte header in the stream
  uint16_t type = 0;
  uint16_t length = 0;
  size_t end() const { return offset + 4 + length; }
};

// The records of a Workbook stream. Zero bytes after the last record (some writers pad the
// stream) are not records. Throws FormatError on a record that runs past the stream, on a
// stream that is not BIFF8 (kUnsupportedVariant) and on FilePass (kEncrypted).
std::vector<Record> read_workbook(ByteView workbook);

// The record indices [first, last) of the globals substream's drawing-group chain, or
// nullopt when the workbook has none. Throws when there is more than one.
struct Chain {
  size_t first = 0;
  size_t last = 0;
};
std::optional<Chain> find_drawing_group(const std::vector<Record>& records);

// The OfficeArt records that say how pictures are shown, without the pictures: the payloads of
// the sheets' MsoDrawing records (each with the CONTINUE records that follow it) joined, then the
// drawing group's property tables (the defaults of every shape). Throws FormatError as
// read_workbook and find_drawing_group do, and where a record of the drawing group runs past its
// container.
Bytes drawings_without_pictures(ByteView workbook);

struct WorkbookRewrite {
  Bytes workbook;
  size_t changed = 0;
};

// Offers each JPEG and PNG picture of the drawing group to `rewriter`, re-splits the chain and
// fixes the stream positions after it. Returns nullopt when no picture changed. Throws
// FormatError when a stream position points into the chain or past the stream.
std::optional<WorkbookRewrite> rewrite_pictures(ByteView workbook,
                                                const officeart::PictureRewriter& rewriter);

// The verifier's check: outside the drawing-group chains both streams hold the same records
// with the same bytes, except stream positions, each of which must point at the record (and
// the byte in it) that the input's pointed at; the chains carry the same OfficeArt records,
// equal except for JPEG/PNG images (listed in `changed`). Returns the first problem or "".
std::string compare_workbooks(ByteView in, ByteView out,
                              std::vector<officeart::PicturePair>& changed);

}  // namespace lighten::xls
