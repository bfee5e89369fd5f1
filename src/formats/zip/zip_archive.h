// ZIP archives read by their central directory and written back entry for entry.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/bytes.h"

namespace lighten {

inline constexpr uint16_t kZipMethodStored = 0;
inline constexpr uint16_t kZipMethodDeflate = 8;
inline constexpr uint16_t kZipFlagEncrypted = 1u << 0;
inline constexpr uint16_t kZipFlagDataDescriptor = 1u << 3;
inline constexpr uint16_t kZipFlagStrongEncryption = 1u << 6;

struct ZipEntry {
  // From the central directory.
  uint16_t version_made_by = 20;
  uint16_t version_needed = 20;
  uint16_t flags = 0;
  uint16_t method = kZipMethodStored;
  uint16_t mod_time = 0;
  uint16_t mod_date = 0;
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  std::string name;     // raw bytes as stored (CP437 or UTF-8 by flag 11)
  Bytes central_extra;  // without any ZIP64 field: the writer adds one where needed
  Bytes comment;
  uint16_t internal_attrs = 0;
  uint32_t external_attrs = 0;
  // From the local header.
  uint16_t local_version_needed = 20;
  uint16_t local_flags = 0;
  // Streaming readers (Java's ZipInputStream) show the local header's time, which a writer may
  // have set apart from the central directory's.
  uint16_t local_mod_time = 0;
  uint16_t local_mod_date = 0;
  Bytes local_extra;  // without any ZIP64 field
  // Where the entry lies in the input.
  uint64_t local_offset = 0;
  uint64_t span_end = 0;  // end of the data (and of its data descriptor, if any)
  ByteView data;          // the compressed bytes

  bool encrypted() const { return (flags & (kZipFlagEncrypted | kZipFlagStrongEncryption)) != 0; }
};

struct ZipArchive {
  std::vector<ZipEntry> entries;  // in central directory order
  Bytes comment;
  Bytes trailing;  // bytes after the end record that readers ignore; kept as they are
};

struct ZipLimits {
  uint64_t max_entries = 1'000'000;
};

// Calls `field(id, data)` for each whole extra field of `extra` in order (`data` lies within
// `extra`, after the field's 4-byte header); returns where the whole fields end.
size_t for_each_extra_field(ByteView extra, const std::function<void(uint16_t, ByteView)>& field);
bool has_extra_field(ByteView extra, uint16_t id);

// Parses the central directory and every local header; checks that entries lie inside the
// archive, do not overlap, leave no unexplained bytes, and agree with their local headers.
// Throws FormatError.
ZipArchive read_zip(ByteView bytes, const ZipLimits& limits = {});

// The entries' indices in the order of their local headers (by local_offset; ties keep the
// central directory's order).
std::vector<size_t> local_order(const ZipArchive& archive);

// Writes the local headers in the order of the entries' local_offset (the input's order, which
// may differ from the central directory's: a leading `mimetype` must stay first) and the central
// directory in the entries' order; entry.data holds each entry's compressed bytes, and crc32 and
// both sizes must describe them. Data descriptors are not written; ZIP64 records only where a
// size, an offset or the entry count needs them.
Bytes write_zip(const ZipArchive& archive);

}  // namespace lighten
