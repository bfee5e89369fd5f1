#include "formats/hwp/hwp_document.h"

#include <algorithm>
#include <map>

#include "codecs/deflate.h"

namespace lighten::hwp {
namespace {

constexpr std::string_view kSignature = "HWP Document File";
constexpr size_t kTrailerSize = 8;

constexpr uint32_t kPassword = 1u << 1;
constexpr uint32_t kDistribution = 1u << 2;
constexpr uint32_t kDrm = 1u << 4;
constexpr uint32_t kSignature_ = 1u << 7;
constexpr uint32_t kCertEncrypted = 1u << 8;
constexpr uint32_t kSignatureDraft = 1u << 9;
constexpr uint32_t kCertDrm = 1u << 10;

uint32_t le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return out;
}

bool is_section(std::string_view path) {
  constexpr std::string_view prefix = "BodyText/Section";
  if (!path.starts_with(prefix) || path.size() == prefix.size()) return false;
  return std::all_of(path.begin() + prefix.size(), path.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::string FileHeader::version_text() const {
  return std::to_string(version >> 24) + "." + std::to_string(version >> 16 & 0xFF) + "." +
         std::to_string(version >> 8 & 0xFF) + "." + std::to_string(version & 0xFF);
}

FileHeader read_file_header(const cfb::CompoundFile& file) {
  const std::optional<Bytes> stream = file.read_stream("FileHeader");
  if (!stream)
    throw FormatError(Reason::kUnsupportedVariant, 0,
                      "compound file without a FileHeader stream: not an HWP 5.0 document");
  if (stream->size() < 40 || !starts_with(*stream, kSignature))
    throw FormatError(Reason::kCorrupt, 0, "the FileHeader lacks the HWP signature");
  FileHeader header;
  header.version = le32(stream->data() + 32);
  header.properties = le32(stream->data() + 36);
  if (header.version >> 24 != 5)
    throw FormatError(Reason::kUnsupportedVariant, 32,
                      "HWP version " + header.version_text() + " is not HWP 5.x");
  return header;
}

void refuse_protected(const FileHeader& header, const cfb::CompoundFile& file) {
  const uint32_t p = header.properties;
  if (p & kPassword) throw FormatError(Reason::kEncrypted, 36, "password-protected HWP document");
  if (p & (kDrm | kCertDrm))
    throw FormatError(Reason::kEncrypted, 36, "DRM-protected HWP document");
  if (p & kCertEncrypted)
    throw FormatError(Reason::kEncrypted, 36, "HWP document encrypted with a certificate");
  const bool view_text =
      std::any_of(file.entries().begin(), file.entries().end(), [](const cfb::DirectoryEntry& e) {
        return e.path == "ViewText" || e.path.starts_with("ViewText/");
      });
  if ((p & kDistribution) || view_text)
    throw FormatError(Reason::kEncrypted, 36,
                      "distribution document (배포용): its text is encrypted in ViewText");
  if (p & (kSignature_ | kSignatureDraft))
    throw FormatError(Reason::kSigned, 36,
                      "signed HWP document; changing any stream would break the signature");
  // The streams that carry a signature or DRM say so whatever the header's flags (a writer
  // that left them clear).
  for (std::string_view name : {"DocOptions/DigitalSignature", "DocOptions/PublicKeyInfo"})
    if (file.has_stream(name))
      throw FormatError(Reason::kSigned, 36,
                        "signed HWP document (" + std::string(name) +
                            "); changing any stream would break the signature");
  for (std::string_view name : {"DocOptions/DrmLicense", "DocOptions/DrmRootSect",
                                "DocOptions/CertDrmHeader", "DocOptions/CertDrmInfo"})
    if (file.has_stream(name))
      throw FormatError(Reason::kEncrypted, 36,
                        "DRM-protected HWP document (" + std::string(name) + ")");
}

std::string damaged_trailer_text(const std::string& stream) {
  return "the CRC-32 or length after " + stream +
         "'s deflate data does not match what it inflates to";
}

std::optional<Inflated> inflate_stream(ByteView stream, size_t limit) {
  Inflated out;
  size_t consumed = 0;
  try {
    out.content = inflate_bounded(stream, limit, DeflateWrapper::kRaw, &consumed);
  } catch (const FormatError& e) {
    if (e.reason() == Reason::kLimitExceeded) throw;
    return std::nullopt;
  }
  const ByteView tail = stream.subspan(consumed);
  if (tail.empty()) return out;
  if (tail.size() != kTrailerSize) {
    out.trailer = Trailer::kUnknown;
    return out;
  }
  const uint32_t crc = le32(tail.data());
  const bool crc_fits = crc == crc32_of(out.content);
  const bool size_fits = le32(tail.data() + 4) == uint32_t(out.content.size());
  if (crc_fits && size_fits)
    out.trailer = Trailer::kCrcAndSize;
  else if (crc == 0 && size_fits)
    out.trailer = Trailer::kZeroAndSize;
  else if (crc_fits || size_fits || crc == 0)  // one of the two fields fits its form
    out.trailer = Trailer::kDamaged;
  else
    out.trailer = Trailer::kUnknown;
  return out;
}

Bytes deflate_stream(ByteView content, Trailer trailer, int effort, const OutOfTime& out_of_time) {
  if (!writable(trailer))
    throw FormatError(Reason::kInternalError, 0, "cannot write a trailer of unknown meaning");
  Bytes out = deflate_bytes(content, effort, DeflateWrapper::kRaw, out_of_time);
  if (trailer != Trailer::kNone) {
    const uint32_t crc = trailer == Trailer::kCrcAndSize ? crc32_of(content) : 0;
    const uint32_t size = uint32_t(content.size());
    for (int i = 0; i < 4; ++i) out.push_back(uint8_t(crc >> (8 * i)));
    for (int i = 0; i < 4; ++i) out.push_back(uint8_t(size >> (8 * i)));
  }
  return out;
}

std::vector<StreamPlan> plan_streams(const cfb::CompoundFile& file, const FileHeader& header,
                                     const std::vector<BinDataItem>& items) {
  std::vector<StreamPlan> plans;
  const bool compressed = header.compressed();
  // Streams by lower-case name; the first declaration of a name wins.
  std::map<std::string, const BinDataItem*> declared;
  for (const BinDataItem& item : items)
    if (item.type != BinDataType::kLink) declared.emplace(lower(item.stream_name()), &item);
  for (const std::string& path : file.stream_paths()) {
    StreamPlan plan;
    plan.path = path;
    if (path == "FileHeader") {
      plan.role = StreamRole::kFileHeader;
    } else if (path == "DocInfo" || is_section(path)) {
      plan.role = StreamRole::kRecords;
      plan.deflated = plan.must_inflate = compressed;
    } else if (path.starts_with("Scripts/")) {
      plan.role = StreamRole::kScript;
      plan.deflated = compressed;
    } else if (path.starts_with("BinData/") && path.find('/', 8) == std::string::npos) {
      plan.role = StreamRole::kBinData;
      const std::string name = lower(path.substr(8));
      const auto found = declared.find(name);
      const BinDataItem* item = found == declared.end() ? nullptr : found->second;
      // Streams no record declares follow the document's flag, and are left alone if they
      // turn out not to be deflated.
      plan.deflated = item ? item->deflated(compressed) : compressed;
      plan.must_inflate = plan.deflated && item;
      // OLE objects hold a compound file of their own; only their deflate layer is redone.
      plan.may_hold_image =
          !name.ends_with(".ole") && (!item || item->type == BinDataType::kEmbedding);
    } else if (path == "PrvImage") {
      plan.role = StreamRole::kPreviewImage;
      plan.may_hold_image = true;
    }
    plans.push_back(std::move(plan));
  }
  return plans;
}

Bytes doc_info_records(const cfb::CompoundFile& file, const FileHeader& header, size_t limit) {
  std::optional<Bytes> raw = file.read_stream("DocInfo");
  if (!raw) throw FormatError(Reason::kCorrupt, 0, "HWP document without a DocInfo stream");
  if (!header.compressed()) return std::move(*raw);
  std::optional<Inflated> inflated = inflate_stream(*raw, limit);
  if (!inflated) throw FormatError(Reason::kCorrupt, 0, "the DocInfo stream does not inflate");
  if (inflated->trailer == Trailer::kDamaged)
    throw FormatError(Reason::kCorrupt, 0, damaged_trailer_text("DocInfo"));
  return std::move(inflated->content);
}

}  // namespace lighten::hwp
