// OLE compound files (CFB, [MS-CFB]): read the storage tree, replace stream contents, write back.
// Everything but the streams' contents and their sector placement is carried as read: the
// directory entries (names, colours, tree links, CLSIDs, state bits, timestamps) keep their
// bytes, so the storage tree, stream order and property sets of the output are the input's.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/bytes.h"

namespace lighten::cfb {

enum class EntryType : uint8_t { kEmpty = 0, kStorage = 1, kStream = 2, kRoot = 5 };

struct DirectoryEntry {
  std::string path;  // "/"-joined UTF-8 names below the root: "BinData/BIN0001.jpg"
  EntryType type = EntryType::kEmpty;
  uint64_t size = 0;  // stream size in bytes (0 for storages)
};

class CompoundFile {
 public:
  // Parses the header, FAT (with DIFAT), mini FAT and directory; checks every chain against
  // the file's length and for cycles. Throws FormatError (kCorrupt / kTruncated).
  static CompoundFile parse(ByteView bytes);

  // Every storage and stream, in directory order (index = directory entry id).
  const std::vector<DirectoryEntry>& entries() const;
  // The stream at `path` (its names matched regardless of ASCII case, as readers match them), or
  // nullopt when there is none.
  std::optional<Bytes> read_stream(std::string_view path) const;
  bool has_stream(std::string_view path) const;  // matched as read_stream matches
  // Replaces the contents of an existing stream. Throws FormatError when there is none.
  void replace_stream(std::string_view path, Bytes contents);
  // A valid compound file with the same header fields (version, sector size), directory and
  // streams; regular and mini streams re-laid out, DIFAT written when the FAT needs it.
  Bytes serialize() const;

  // Helpers beyond the core API.
  // Paths of every stream reachable from the root, in directory order.
  std::vector<std::string> stream_paths() const;
  // The 128 bytes of directory entry `index` with its start sector and size zeroed: what
  // serialize() promises to keep. Throws std::out_of_range for a bad index.
  Bytes entry_record(size_t index) const;
  uint16_t major_version() const;  // 3 (512-byte sectors) or 4 (4096-byte sectors)
  uint32_t sector_size() const;
  // What follows the last sector in use (data another tool appended, free sectors left at the
  // end), unless it is all zero; serialize() writes it after the output's last sector.
  const Bytes& trailing() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace lighten::cfb
