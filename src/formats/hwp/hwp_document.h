// HWP 5.0 documents as the optimiser and the verifier both see them: the FileHeader's flags,
// which streams are deflated, and how Hangul deflates them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codecs/deflate.h"
#include "core/bytes.h"
#include "formats/cfb/compound_file.h"
#include "formats/hwp/hwp_records.h"

namespace lighten::hwp {

struct FileHeader {
  uint32_t version = 0;     // 0xMMnnPPrr: 5.0.3.4 is 0x05000304
  uint32_t properties = 0;  // bit 0 compressed, 1 password, 2 distribution, ...
  bool compressed() const { return properties & 1u; }
  std::string version_text() const;
};

// Reads the FileHeader stream of `file`; throws FormatError (kUnsupportedVariant for other
// HWP generations or a missing FileHeader, kCorrupt for a damaged one).
FileHeader read_file_header(const cfb::CompoundFile& file);

// Throws kEncrypted for password, DRM, certificate-encrypted and distribution (배포용)
// documents, kSigned for signed ones: their bytes are not ours to change.
void refuse_protected(const FileHeader& header, const cfb::CompoundFile& file);

// A stream as Hangul deflates it: raw deflate, then (from Hangul itself; other writers leave
// it out) 8 bytes like gzip's trailer: the CRC-32 and the length of the inflated content.
// Older Hangul versions (5.0.2.x) write 0 for the CRC. Other bytes after the deflate stream are
// of unknown meaning, and 8 bytes of which only one of the two fields fits are a damaged trailer:
// such streams can be read but not written back.
enum class Trailer : uint8_t { kNone, kCrcAndSize, kZeroAndSize, kUnknown, kDamaged };
inline bool writable(Trailer t) { return t != Trailer::kUnknown && t != Trailer::kDamaged; }

struct Inflated {
  Bytes content;
  Trailer trailer = Trailer::kNone;
};

// Why a stream whose trailer is Trailer::kDamaged is corrupt.
std::string damaged_trailer_text(const std::string& stream);

// Inflates `stream`; nullopt when it is not a complete raw deflate stream. Throws
// kLimitExceeded past `limit` bytes.
std::optional<Inflated> inflate_stream(ByteView stream, size_t limit);
// The inverse, with the deflate back-end `effort` chooses (only for a writable trailer).
Bytes deflate_stream(ByteView content, Trailer trailer, int effort,
                     const OutOfTime& out_of_time = {});

enum class StreamRole : uint8_t {
  kFileHeader,    // never changed
  kRecords,       // DocInfo, BodyText/Section*: record streams, deflated when the header says
  kScript,        // Scripts/*: deflated with the document, opaque inside
  kBinData,       // BinData/*: deflated as the item's own flag says; images inside
  kPreviewImage,  // PrvImage: a PNG, GIF or BMP, never deflated
  kOther,         // kept byte for byte (summary information, PrvText, DocOptions, ...)
};

struct StreamPlan {
  std::string path;
  StreamRole role = StreamRole::kOther;
  bool deflated = false;  // the stream is (expected to be) deflated
  // Deflated streams that must inflate (DocInfo, sections, declared BinData items); others
  // that do not are left alone.
  bool must_inflate = false;
  bool may_hold_image = false;  // its content may be handed to the image optimisers
};

// Decides every stream's role from the header and the DocInfo's BinData declarations.
std::vector<StreamPlan> plan_streams(const cfb::CompoundFile& file, const FileHeader& header,
                                     const std::vector<BinDataItem>& items);

// The inflated DocInfo stream (or its raw bytes when the document is not compressed).
Bytes doc_info_records(const cfb::CompoundFile& file, const FileHeader& header, size_t limit);

}  // namespace lighten::hwp
