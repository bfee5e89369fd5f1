// OfficeArt records ([MS-ODRAW]) as PowerPoint and Excel 97-2003 store them: walking record
// trees, finding the BLIP store's entries (FBSE) and re-writing JPEG and PNG pictures (BLIPs)
// with new image bytes while keeping every other byte of the record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/bytes.h"

namespace lighten::officeart {

inline constexpr uint16_t kDggContainer = 0xF000;
inline constexpr uint16_t kBStoreContainer = 0xF001;
inline constexpr uint16_t kFbse = 0xF007;
// BLIP records' types ([MS-ODRAW] 2.2.23: msofbtBlip).
inline constexpr uint16_t kBlipFirst = 0xF018, kBlipLast = 0xF117;
inline constexpr uint16_t kBlipJpeg = 0xF01D;
inline constexpr uint16_t kBlipPng = 0xF01E;
inline constexpr uint16_t kBlipJpegCmyk = 0xF02A;
inline constexpr size_t kHeaderSize = 8;
inline constexpr size_t kFbseFixedSize = 36;  // btWin32 .. unused3, before the name
// Nesting far beyond any real file (the BLIP store sits four levels deep) is refused, so a
// crafted file cannot recurse without bound.
inline constexpr unsigned kMaxDepth = 32;

// recVer (4 bits) and recInstance (12 bits), recType, recLen: little-endian, 8 bytes.
struct RecordHeader {
  uint16_t version_instance = 0;
  uint16_t type = 0;
  uint32_t length = 0;

  unsigned version() const { return version_instance & 0xF; }
  unsigned instance() const { return version_instance >> 4; }
  bool is_container() const { return version() == 0xF; }
  size_t total_size() const { return kHeaderSize + length; }
};

// Reads the header at `offset`; throws FormatError (kTruncated / kCorrupt) unless the whole
// record ends at or before `end`.
RecordHeader read_header(ByteView bytes, size_t offset, size_t end);
void append_header(Bytes& out, const RecordHeader& header);

uint32_t get_u32le(ByteView bytes, size_t offset);
void put_u32le(Bytes& bytes, size_t offset, uint32_t value);
void append_u32le(Bytes& out, uint32_t value);
void append_u16le(Bytes& out, uint16_t value);

// Bytes before the image in a JPEG or PNG BLIP record (header, one or two 16-byte UIDs and
// the tag byte); 0 when the record is another kind of BLIP (metafiles, DIB, TIFF) or no BLIP.
size_t raster_blip_prefix(const RecordHeader& header);
// The image bytes of a JPEG or PNG BLIP record that fills `record`; empty when it is none.
ByteView raster_blip_image(ByteView record);

// Asked for each JPEG or PNG picture; returns the replacement image, or nullopt to keep it.
using PictureRewriter =
    std::function<std::optional<Bytes>(ByteView image, const std::string& name)>;

// The BLIP record that fills `record` with its image replaced, or nullopt when it is no raster
// BLIP or the rewriter keeps the picture. recVer, recInstance, recType, the UIDs and the tag
// stay as they were; only recLen follows the new image.
//
// The UIDs are kept on purpose: writers fill rgbUid with an MD4 of the picture, but readers use
// it only to recognise the same picture twice when pasting or saving. Keeping the old UID keeps
// that identity (two copies of one picture still match, and their outputs are equal because
// the optimisers are deterministic), and no reader checks it against the bytes.
std::optional<Bytes> rewrite_raster_blip(ByteView record, const PictureRewriter& rewriter,
                                         const std::string& name);

// The fields of an OfficeArtFBSE record that describe where its BLIP is.
struct FbseEntry {
  size_t record_offset = 0;  // of the FBSE's header in the walked bytes
  RecordHeader header;
  uint32_t blip_size = 0;      // `size`: the BLIP record's bytes, header included
  uint32_t delay_offset = 0;   // `foDelay`: where the BLIP is in the delay (Pictures) stream
  size_t embedded_offset = 0;  // where a BLIP stored inside the FBSE starts (0: none)
  size_t embedded_size = 0;

  static constexpr size_t kSizeField = kHeaderSize + 20;  // offsets within the record
  static constexpr size_t kDelayField = kHeaderSize + 28;
};

// Parses the FBSE whose header is at `offset` (and which must end by `end`).
FbseEntry read_fbse(ByteView bytes, size_t offset, size_t end);

// Every FBSE inside BLIP-store containers in the records of [begin, end), descending only into
// containers whose type is in `path_types` (and into BStore containers). Throws FormatError
// when a record on the way overruns its parent.
std::vector<FbseEntry> find_fbse_records(ByteView bytes, size_t begin, size_t end,
                                         const std::vector<uint16_t>& path_types);

// Re-writes the records of `records` (a sequence that must tile it exactly, e.g. one
// OfficeArtDggContainer), replacing JPEG and PNG BLIPs stored inside FBSE records and fixing
// the lengths of every container around them and the FBSE's `size`. Returns nullopt when no
// picture changed. `changed` counts the pictures replaced.
std::optional<Bytes> rewrite_embedded_blips(ByteView records, const PictureRewriter& rewriter,
                                            size_t& changed);

// A picture that differs between an input and an output, for the verifier.
struct PicturePair {
  Bytes before;
  Bytes after;
  std::string name;
};

// Compares two record sequences by an independent walk: the same records in the same order
// with the same headers (apart from lengths) and bytes, except BLIPs inside FBSEs whose images
// may differ (listed in `changed`) and the FBSE `size` that follows them. Returns the first
// difference in words, or an empty string.
std::string compare_embedded_blips(ByteView before, ByteView after,
                                   std::vector<PicturePair>& changed);

}  // namespace lighten::officeart
