#include "formats/cfb/cfb_format.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/cfb_names.h"
#include "core/errors.h"

namespace lighten {
namespace {

constexpr size_t kHeaderSize = 512;
constexpr uint32_t kLastRegularSector = 0xFFFFFFF9;  // larger ids are markers, not sectors
constexpr size_t kHeaderFatEntries = 109;

uint32_t le32(ByteView b, size_t at) {
  return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8 | uint32_t(b[at + 2]) << 16 |
         uint32_t(b[at + 3]) << 24;
}

// What the header says that the file cannot hold: a directory or allocation-table sector past
// its end, as in a document cut short (writers put the directory near the end). Only the header
// is read: a file that passes is not parsed whole just to be refused.
void check_header(ByteView in) {
  if (in.size() < kHeaderSize)
    throw FormatError(Reason::kTruncated, 0, "shorter than a compound file's header");
  const uint16_t shift = uint16_t(in[30] | in[31] << 8);
  if (shift != 9 && shift != 12)
    throw FormatError(Reason::kCorrupt, 30, "a compound file's sector size is 512 or 4096 bytes");
  const size_t sector = size_t(1) << shift;
  auto past_the_end = [&](uint32_t id) {
    return id <= kLastRegularSector && (uint64_t(id) + 2) * sector > in.size();
  };
  if (past_the_end(le32(in, 48)))
    throw FormatError(Reason::kTruncated, 48,
                      "the compound file's directory lies past its end: the file is cut short");
  const size_t fat_sectors = std::min<size_t>(le32(in, 44), kHeaderFatEntries);
  for (size_t k = 0; k < fat_sectors; ++k)
    if (past_the_end(le32(in, 76 + 4 * k)))
      throw FormatError(Reason::kTruncated, 76 + 4 * k,
                        "the compound file's allocation table lies past its end: the file is "
                        "cut short");
}

bool has(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// "Contents, SummaryInformation, ..." (control characters some names start with left out).
std::string listed(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i == 6) return text + ", ...";
    if (i > 0) text += ", ";
    for (char c : names[i])
      if (static_cast<unsigned char>(c) >= 0x20) text += c;
  }
  return text;
}

}  // namespace

Outcome optimize_cfb(ByteView input, Context& context) {
  (void)context;
  check_header(input);
  const std::vector<std::string> names = cfb_root_names(input);
  if (names.empty())
    throw FormatError(Reason::kUnsupportedKind, 0,
                      "a compound file whose directory names nothing lighten can read");
  // Office's password protection wraps the OOXML package in a compound file.
  if (has(names, "EncryptedPackage") && has(names, "EncryptionInfo"))
    throw FormatError(Reason::kEncrypted, 0,
                      "a password-protected Office document (an encrypted OOXML package)");
  throw FormatError(Reason::kUnsupportedKind, 0,
                    "a compound file of no kind lighten optimises (not HWP, PPT, XLS or DOC; it "
                    "holds " +
                        listed(names) + ")");
}

Verdict verify_cfb(ByteView input, ByteView output, Context& context) {
  (void)context;
  if (std::equal(input.begin(), input.end(), output.begin(), output.end())) return {true, {}, {}};
  return {false, "compound files of other kinds are never changed", {}};
}

void describe_cfb(ByteView input, FileInfo& info) {
  check_header(input);
  const std::vector<std::string> names = cfb_root_names(input);
  info.properties.emplace_back("below the root", names.empty() ? "unreadable" : listed(names));
}

}  // namespace lighten
