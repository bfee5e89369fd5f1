// PowerPoint 97-2003 pictures ([MS-PPT]): JPEG and PNG BLIPs in the `Pictures` stream, found
// through the BLIP store (FBSE records) of the `PowerPoint Document` stream, whose `size` and
// `foDelay` fields say where each BLIP is. Re-writing pictures changes the Pictures stream and
// only those two fields of each FBSE: the document stream keeps its length, so the persist
// directory, UserEdit atoms and the Current User stream stay valid as they are.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "formats/office_binary/officeart_records.h"

namespace lighten::ppt {

inline constexpr uint16_t kDocumentContainer = 0x03E8;
inline constexpr uint16_t kDrawingGroupContainer = 0x040B;  // PPDrawingGroup
inline constexpr uint16_t kCryptSession = 0x2F14;           // CryptSession10Container

// True when the Current User stream's headerToken marks an encrypted document.
bool current_user_says_encrypted(ByteView current_user);

// The FBSE records of every DocumentContainer of the document stream (a fast-saved file keeps
// older ones, and each points into the same Pictures stream). Throws FormatError when the
// stream's top-level records do not tile it (kUnsupportedVariant) or it is encrypted.
std::vector<officeart::FbseEntry> find_blip_store(ByteView document);

// The top-level records of the Pictures stream: (offset, total size). Throws FormatError when
// they do not tile the stream.
struct PictureRecord {
  size_t offset = 0;
  size_t size = 0;
};
std::vector<PictureRecord> list_picture_records(ByteView pictures);

struct PicturesRewrite {
  Bytes document;  // same length as the input document stream
  Bytes pictures;
  size_t changed = 0;
};

// Offers each JPEG and PNG BLIP of `pictures` to `rewriter` and lays the stream out again;
// every FBSE that references a BLIP gets the BLIP's new `size` and `foDelay`. Returns nullopt
// when no picture changed. Refuses (FormatError kUnsupportedVariant) a file in which an FBSE
// points where no BLIP of its size starts, since moving BLIPs would then break it.
std::optional<PicturesRewrite> rewrite_pictures(ByteView document, ByteView pictures,
                                                const officeart::PictureRewriter& rewriter);

// The verifier's check of an output against its input: the document streams differ only in
// FBSE `size`/`foDelay` fields, each of which points at the BLIP that the input's pointed at;
// the Pictures streams hold the same records in the same order, equal except for JPEG/PNG
// images (listed in `changed`). Returns the first problem in words, or an empty string.
std::string compare_pictures(ByteView document_in, ByteView pictures_in, ByteView document_out,
                             ByteView pictures_out, std::vector<officeart::PicturePair>& changed);

}  // namespace lighten::ppt
