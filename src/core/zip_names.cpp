#include "core/zip_names.h"

#include <algorithm>

namespace lighten {
namespace {

constexpr size_t kMaxNames = 4096;
constexpr size_t kEocdSize = 22;
constexpr size_t kMaxCommentSize = 0xFFFF;

// The first entry of ODF, EPUB and HWPX archives is a stored "mimetype" file.
std::string read_mimetype(ByteView bytes) {
  try {
    ByteReader r(bytes);
    if (r.u32le() != 0x04034b50) return {};
    r.skip(4);  // version, flags
    const uint16_t method = r.u16le();
    r.skip(8);  // time, date, crc
    const uint32_t compressed = r.u32le();
    r.skip(4);
    const uint16_t name_len = r.u16le();
    const uint16_t extra_len = r.u16le();
    ByteView name = r.take(name_len);
    r.skip(extra_len);
    if (method != 0 || !starts_with(name, "mimetype") || name.size() != 8) return {};
    ByteView content = r.take(std::min<size_t>(compressed, 256));
    return std::string(content.begin(), content.end());
  } catch (const FormatError&) {
    return {};
  }
}

// Without a central directory (a truncated archive), the local headers from the start, as far
// as their sizes lead: enough to tell a document from a plain archive and name what is wrong.
void read_local_names(ByteView bytes, std::vector<std::string>& names) {
  try {
    ByteReader r(bytes);
    while (names.size() < kMaxNames && r.remaining() >= 4 && r.u32le() == 0x04034b50) {
      r.skip(2);  // version
      const uint16_t flags = r.u16le();
      r.skip(10);  // method, time, date, crc
      const uint32_t compressed = r.u32le();
      r.skip(4);
      const uint16_t name_len = r.u16le();
      const uint16_t extra_len = r.u16le();
      ByteView name = r.take(name_len);
      names.emplace_back(name.begin(), name.end());
      // Sizes in a data descriptor after the data: where the next header starts is unknown.
      if (flags & 0x08) break;
      r.skip(size_t(extra_len) + compressed);
    }
  } catch (const FormatError&) {
    // Truncated: the names read so far stand.
  }
}

}  // namespace

ZipNames list_zip_names(ByteView bytes) {
  ZipNames result;
  result.mimetype = read_mimetype(bytes);
  if (bytes.size() < kEocdSize) return result;
  // The end-of-central-directory record sits within the last 64 KiB + 22 bytes.
  const size_t lowest =
      bytes.size() > kEocdSize + kMaxCommentSize ? bytes.size() - kEocdSize - kMaxCommentSize : 0;
  size_t eocd = std::string::npos;
  for (size_t i = bytes.size() - kEocdSize + 1; i-- > lowest;) {
    if (starts_with(bytes, "PK\x05\x06", i)) {
      eocd = i;
      break;
    }
  }
  if (eocd == std::string::npos) {
    read_local_names(bytes, result.names);
    return result;
  }
  try {
    ByteReader r(bytes, eocd + 10);
    const uint16_t entries = r.u16le();
    r.skip(4);
    const uint32_t cd_offset = r.u32le();
    ByteReader cd(bytes, cd_offset);
    for (size_t i = 0; i < entries && result.names.size() < kMaxNames; ++i) {
      if (cd.u32le() != 0x02014b50) break;
      cd.skip(24);
      const uint16_t name_len = cd.u16le();
      const uint16_t extra_len = cd.u16le();
      const uint16_t comment_len = cd.u16le();
      cd.skip(12);
      ByteView name = cd.take(name_len);
      result.names.emplace_back(name.begin(), name.end());
      cd.skip(size_t(extra_len) + comment_len);
    }
  } catch (const FormatError&) {
    // A damaged directory still tells what it could.
  }
  return result;
}

}  // namespace lighten
