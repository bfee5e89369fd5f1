// Internal to the CFB reader/writer: on-disk constants ([MS-CFB] 2.1-2.6) and the parsed state
// that CompoundFile::Impl (a CompoundState) carries from parse() to serialize().
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/bytes.h"
#include "formats/cfb/compound_file.h"

namespace lighten::cfb {

inline constexpr uint32_t kMaxRegularSector = 0xFFFFFFFA;
inline constexpr uint32_t kDifatSector = 0xFFFFFFFC;
inline constexpr uint32_t kFatSector = 0xFFFFFFFD;
inline constexpr uint32_t kEndOfChain = 0xFFFFFFFE;
inline constexpr uint32_t kFreeSector = 0xFFFFFFFF;
inline constexpr uint32_t kNoStream = 0xFFFFFFFF;

inline constexpr size_t kHeaderSize = 512;
inline constexpr size_t kHeaderDifatEntries = 109;
inline constexpr size_t kEntrySize = 128;
inline constexpr uint32_t kMiniSectorSize = 64;
inline constexpr uint32_t kMiniStreamCutoff = 4096;

// Header field offsets.
inline constexpr size_t kHdrMajorVersion = 26;
inline constexpr size_t kHdrSectorShift = 30;
inline constexpr size_t kHdrMiniSectorShift = 32;
inline constexpr size_t kHdrDirSectorCount = 40;
inline constexpr size_t kHdrFatSectorCount = 44;
inline constexpr size_t kHdrFirstDirSector = 48;
inline constexpr size_t kHdrMiniCutoff = 56;
inline constexpr size_t kHdrFirstMiniFatSector = 60;
inline constexpr size_t kHdrMiniFatSectorCount = 64;
inline constexpr size_t kHdrFirstDifatSector = 68;
inline constexpr size_t kHdrDifatSectorCount = 72;
inline constexpr size_t kHdrDifat = 76;

// Directory entry field offsets.
inline constexpr size_t kEntNameLength = 64;
inline constexpr size_t kEntType = 66;
inline constexpr size_t kEntLeft = 68;
inline constexpr size_t kEntRight = 72;
inline constexpr size_t kEntChild = 76;
inline constexpr size_t kEntStartSector = 116;
inline constexpr size_t kEntSize = 120;

using EntryRecord = std::array<uint8_t, kEntrySize>;

struct CompoundState {
  std::array<uint8_t, kHeaderSize> header{};  // as read; serialize() rewrites the layout fields
  uint32_t sector_size = 512;
  std::vector<EntryRecord> records;  // every directory entry as read, in directory order
  std::vector<DirectoryEntry> entries;
  std::vector<Bytes> contents;  // per entry: the stream's bytes (empty for non-streams)
  std::unordered_map<std::string, size_t> streams;  // folded_path -> entry index
  Bytes trailing;  // what follows the last sector in use, unless all zero
  // A 4096-byte header sector's bytes after the header, unless all zero: the specification
  // wants zeros, but what a writer put there is kept, as bytes after the last sector are.
  Bytes header_tail;
};

struct CompoundFile::Impl : CompoundState {};

inline uint16_t get_u16(const uint8_t* p) { return uint16_t(p[0] | p[1] << 8); }
inline uint32_t get_u32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
inline uint64_t get_u64(const uint8_t* p) { return get_u32(p) | uint64_t(get_u32(p + 4)) << 32; }
inline void put_u16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}
inline void put_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
inline void put_u64(uint8_t* p, uint64_t v) {
  put_u32(p, uint32_t(v));
  put_u32(p + 4, uint32_t(v >> 32));
}

}  // namespace lighten::cfb
