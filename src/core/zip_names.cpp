#include "core/zip_names.h"

#include <algorithm>
#include <string_view>

namespace lighten {
namespace {

constexpr size_t kMaxNames = 4096;
constexpr size_t kEocdSize = 22;
constexpr size_t kMaxCommentSize = 0xFFFF;

constexpr std::string_view kLocalHeader{"PK\x03\x04", 4};
constexpr std::string_view kDescriptor{"PK\x07\x08", 4};

// Where the next local header starts at or after `from` (the file's size when none does).
size_t next_local_header(ByteView bytes, size_t from) {
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const size_t at = text.find(kLocalHeader, std::min(from, text.size()));
  return at == std::string_view::npos ? bytes.size() : at;
}

// The first entry of ODF, EPUB and HWPX archives is a stored "mimetype" file.
std::string read_mimetype(ByteView bytes) {
  try {
    ByteReader r(bytes);
    if (r.u32le() != 0x04034b50) return {};
    r.skip(2);  // version
    const uint16_t flags = r.u16le();
    const uint16_t method = r.u16le();
    r.skip(8);  // time, date, crc
    const uint32_t compressed = r.u32le();
    r.skip(4);
    const uint16_t name_len = r.u16le();
    const uint16_t extra_len = r.u16le();
    ByteView name = r.take(name_len);
    r.skip(extra_len);
    if (method != 0 || !starts_with(name, "mimetype") || name.size() != 8) return {};
    if ((flags & 0x08) || compressed == 0xFFFFFFFF) {
      // Its size is in a data descriptor after it (a writer that streamed the archive) or in a
      // ZIP64 field (`zip -fz`): the content runs to the descriptor's signature or the next
      // entry, neither of which a media type contains.
      const std::string_view rest(reinterpret_cast<const char*>(bytes.data()) + r.offset(),
                                  std::min<size_t>(r.remaining(), 256));
      const size_t end = std::min(rest.find(kDescriptor), rest.find(kLocalHeader));
      return end == std::string_view::npos ? std::string() : std::string(rest.substr(0, end));
    }
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
      r.skip(extra_len);
      // Sizes in a data descriptor after the data (LibreOffice writes every deflated entry so):
      // the next header is found by its signature, which compressed data seldom holds (a false
      // one adds a name that only this guess reads).
      if (flags & 0x08)
        r.seek(next_local_header(bytes, r.offset()));
      else
        r.skip(compressed);
    }
  } catch (const FormatError&) {
    // Truncated: the names read so far stand.
  }
}

}  // namespace

size_t find_zip_end_record(ByteView bytes) {
  if (bytes.size() < kEocdSize) return std::string::npos;
  const auto u16 = [&](size_t at) { return uint32_t(bytes[at] | bytes[at + 1] << 8); };
  const auto u32 = [&](size_t at) { return u16(at) | u16(at + 2) << 16; };
  // The end-of-central-directory record sits within the last 64 KiB + 22 bytes.
  const size_t lowest =
      bytes.size() > kEocdSize + kMaxCommentSize ? bytes.size() - kEocdSize - kMaxCommentSize : 0;
  size_t fallback = std::string::npos;
  for (size_t i = bytes.size() - kEocdSize + 1; i-- > lowest;) {
    if (!starts_with(bytes, "PK\x05\x06", i) || i + kEocdSize + u16(i + 20) > bytes.size())
      continue;
    const uint64_t cd_size = u32(i + 12), cd_offset = u32(i + 16);
    if (cd_offset + cd_size == i || (i >= 20 && starts_with(bytes, "PK\x06\x07", i - 20))) return i;
    if (fallback == std::string::npos) fallback = i;
  }
  return fallback;
}

std::optional<Zip64EndRecord> read_zip64_end_record(ByteView bytes, size_t eocd) {
  constexpr size_t kLocatorSize = 20, kFixedSize = 56;
  if (eocd < kLocatorSize || !starts_with(bytes, "PK\x06\x07", eocd - kLocatorSize))
    return std::nullopt;
  Zip64EndRecord end;
  end.locator = eocd - kLocatorSize;
  ByteReader locator(bytes, end.locator + 8);
  const uint64_t offset = locator.u64le();
  if (offset > end.locator || end.locator - offset < kFixedSize)
    throw FormatError(Reason::kCorrupt, eocd, "ZIP64 locator points to the wrong place");
  end.offset = size_t(offset);
  ByteReader r(bytes, end.offset);
  if (r.u32le() != 0x06064b50)
    throw FormatError(Reason::kCorrupt, end.offset, "ZIP64 end record missing");
  end.size = r.u64le();
  r.skip(2 + 2 + 4 + 4);  // versions, disks
  end.entries_here = r.u64le();
  end.entries = r.u64le();
  end.cd_size = r.u64le();
  end.cd_offset = r.u64le();
  return end;
}

ZipNames list_zip_names(ByteView bytes) {
  ZipNames result;
  result.mimetype = read_mimetype(bytes);
  const size_t eocd = find_zip_end_record(bytes);
  if (eocd == std::string::npos) {
    read_local_names(bytes, result.names);
    return result;
  }
  try {
    ByteReader r(bytes, eocd + 10);
    uint64_t entries = r.u16le();
    r.skip(4);
    uint64_t cd_offset = r.u32le();
    if (entries == 0xFFFF || cd_offset == 0xFFFFFFFF) {
      try {
        if (const auto end64 = read_zip64_end_record(bytes, eocd)) {
          entries = end64->entries;
          cd_offset = end64->cd_offset;
        }
      } catch (const FormatError&) {
        // A damaged ZIP64 record: the end record's own figures are all there is.
      }
    }
    ByteReader cd(bytes, size_t(std::min<uint64_t>(cd_offset, bytes.size())));
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
