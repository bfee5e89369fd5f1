// The CFB reader. Written here rather than taken from libgsf (the design's OLE2 library), whose
// writer cannot keep what we promise to keep. Its gsf-outfile-msole.c (libgsf 1.14) writes
// every entry black, siblings as a list sorted by its own name key instead of the input's
// tree, zero creation times and state bits (only a modification time can be set), CLSIDs on
// storages only and the root always named "Root Entry". So we keep every directory entry's 128
// bytes as read and re-lay only the sectors; a reader and writer are a few hundred lines.
// (libgsf-1-dev is also not among the build machines' packages.)
#include <algorithm>
#include <string>
#include <utility>

#include "core/cfb_names.h"
#include "formats/cfb/cfb_layout.h"
#include "formats/cfb/compound_file.h"

namespace lighten::cfb {
namespace {

[[noreturn]] void corrupt(size_t offset, const std::string& what) {
  throw FormatError(Reason::kCorrupt, offset, "compound file: " + what);
}
[[noreturn]] void truncated(size_t offset, const std::string& what) {
  throw FormatError(Reason::kTruncated, offset, "compound file: " + what);
}

// UTF-16LE directory name to UTF-8 (unpaired surrogates become U+FFFD).
std::string utf8_name(const uint8_t* name, size_t units) {
  std::string out;
  for (size_t i = 0; i < units; ++i) {
    uint32_t c = get_u16(name + 2 * i);
    if (c >= 0xD800 && c < 0xDC00 && i + 1 < units) {
      const uint32_t low = get_u16(name + 2 * i + 2);
      if (low >= 0xDC00 && low < 0xE000) {
        c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
        ++i;
      } else {
        c = 0xFFFD;
      }
    } else if (c >= 0xD800 && c < 0xE000) {
      c = 0xFFFD;
    }
    if (c < 0x80) {
      out += char(c);
    } else if (c < 0x800) {
      out += char(0xC0 | c >> 6);
      out += char(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += char(0xE0 | c >> 12);
      out += char(0x80 | (c >> 6 & 0x3F));
      out += char(0x80 | (c & 0x3F));
    } else {
      out += char(0xF0 | c >> 18);
      out += char(0x80 | (c >> 12 & 0x3F));
      out += char(0x80 | (c >> 6 & 0x3F));
      out += char(0x80 | (c & 0x3F));
    }
  }
  return out;
}

class Reader {
 public:
  explicit Reader(ByteView bytes) : bytes_(bytes) {}

  void parse(CompoundState& impl) {
    read_header(impl);
    read_fat();
    read_directory(impl);
    read_mini_fat();
    build_paths(impl);
    read_contents(impl);
    read_trailing(impl);
    for (size_t i = 0; i < impl.entries.size(); ++i) {
      const DirectoryEntry& e = impl.entries[i];
      if (e.type != EntryType::kStream || e.path.empty()) continue;
      const auto [first, added] = impl.streams.emplace(cfb_folded_name(e.path), i);
      // Readers find a stream by its name regardless of case ([MS-CFB] 2.6.4), each its own
      // way: which of two such streams a reader takes, and so which one lighten must rewrite,
      // cannot be told.
      if (!added)
        corrupt(0, "the streams '" + impl.entries[first->second].path + "' and '" + e.path +
                       "' have one name to readers, which compare names regardless of case");
    }
  }

 private:
  void read_header(CompoundState& impl) {
    if (bytes_.size() < kHeaderSize) truncated(0, "shorter than its 512-byte header");
    if (!starts_with(bytes_, "\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1")) corrupt(0, "bad signature");
    std::copy_n(bytes_.begin(), kHeaderSize, impl.header.begin());
    const uint8_t* h = bytes_.data();
    const uint16_t major = get_u16(h + kHdrMajorVersion);
    const uint16_t shift = get_u16(h + kHdrSectorShift);
    if (get_u16(h + 28) != 0xFFFE) corrupt(28, "bad byte-order mark");
    if (!((major == 3 && shift == 9) || (major == 4 && shift == 12)))
      corrupt(kHdrMajorVersion, "unsupported version " + std::to_string(major) +
                                    " with sector shift " + std::to_string(shift));
    if (get_u16(h + kHdrMiniSectorShift) != 6) corrupt(kHdrMiniSectorShift, "mini sector size");
    if (get_u32(h + kHdrMiniCutoff) != kMiniStreamCutoff)
      corrupt(kHdrMiniCutoff, "mini stream cutoff is not 4096");
    sector_size_ = 1u << shift;
    impl.sector_size = sector_size_;
    if (bytes_.size() < sector_size_) truncated(0, "shorter than its first sector");
    const ByteView tail = bytes_.subspan(kHeaderSize, sector_size_ - kHeaderSize);
    if (std::any_of(tail.begin(), tail.end(), [](uint8_t b) { return b != 0; }))
      impl.header_tail.assign(tail.begin(), tail.end());
    // A final partial sector is counted: stream data may end inside it.
    sector_count_ = (bytes_.size() - sector_size_ + sector_size_ - 1) / sector_size_;
  }

  size_t sector_offset(uint32_t id) const { return (size_t(id) + 1) * sector_size_; }

  // A whole sector; throws when it lies outside the file.
  ByteView sector(uint32_t id, const char* what) const {
    if (id >= sector_count_) corrupt(0, std::string(what) + " points outside the file");
    const size_t at = sector_offset(id);
    if (bytes_.size() - at < sector_size_) truncated(at, std::string(what) + " sector cut short");
    return bytes_.subspan(at, sector_size_);
  }

  // Follows a chain in `table`, checking bounds and cycles; `limit` bounds the chain's length.
  std::vector<uint32_t> chain(const std::vector<uint32_t>& table, uint32_t start, size_t limit,
                              std::vector<uint8_t>& seen, const char* what) const {
    std::vector<uint32_t> ids;
    uint32_t id = start;
    while (id != kEndOfChain) {
      if (id >= table.size() || id >= limit)
        corrupt(0,
                std::string(what) + " chain leaves the file (sector " + std::to_string(id) + ")");
      if (seen[id])
        corrupt(0, std::string(what) + " chain loops or shares sector " + std::to_string(id));
      seen[id] = 1;
      ids.push_back(id);
      id = table[id];
    }
    return ids;
  }

  std::vector<uint32_t> regular_chain(uint32_t start, const char* what) {
    return chain(fat_, start, sector_count_, used_, what);
  }

  void read_fat() {
    const uint8_t* h = bytes_.data();
    const uint32_t fat_sectors = get_u32(h + kHdrFatSectorCount);
    if (fat_sectors > sector_count_) corrupt(kHdrFatSectorCount, "more FAT sectors than the file");
    std::vector<uint32_t> fat_ids;
    for (size_t i = 0; i < kHeaderDifatEntries && fat_ids.size() < fat_sectors; ++i)
      fat_ids.push_back(get_u32(h + kHdrDifat + 4 * i));
    uint32_t difat = get_u32(h + kHdrFirstDifatSector);
    std::vector<uint8_t> seen_difat(sector_count_, 0);
    const size_t per_sector = sector_size_ / 4;
    while (fat_ids.size() < fat_sectors) {
      if (difat >= sector_count_) corrupt(kHdrFirstDifatSector, "DIFAT chain leaves the file");
      if (seen_difat[difat]) corrupt(kHdrFirstDifatSector, "DIFAT chain loops");
      seen_difat[difat] = 1;
      last_structure_ = std::max<size_t>(last_structure_, difat);
      const ByteView s = sector(difat, "DIFAT");
      for (size_t i = 0; i + 1 < per_sector && fat_ids.size() < fat_sectors; ++i)
        fat_ids.push_back(get_u32(s.data() + 4 * i));
      difat = get_u32(s.data() + 4 * (per_sector - 1));
    }
    fat_.reserve(fat_ids.size() * per_sector);
    for (uint32_t id : fat_ids) {
      last_structure_ = std::max<size_t>(last_structure_, id);
      const ByteView s = sector(id, "FAT");
      for (size_t i = 0; i < per_sector; ++i) fat_.push_back(get_u32(s.data() + 4 * i));
    }
    used_.assign(std::min<size_t>(fat_.size(), sector_count_), 0);
  }

  void read_directory(CompoundState& impl) {
    const uint32_t first = get_u32(bytes_.data() + kHdrFirstDirSector);
    for (uint32_t id : regular_chain(first, "directory")) {
      const ByteView s = sector(id, "directory");
      for (size_t at = 0; at + kEntrySize <= s.size(); at += kEntrySize) {
        EntryRecord r;
        std::copy_n(s.begin() + at, kEntrySize, r.begin());
        impl.records.push_back(r);
      }
    }
    if (impl.records.empty()) corrupt(kHdrFirstDirSector, "no directory");
    if (impl.records[0][kEntType] != uint8_t(EntryType::kRoot))
      corrupt(sector_offset(first), "first directory entry is not the root");
    impl.entries.resize(impl.records.size());
    impl.contents.resize(impl.records.size());
    for (size_t i = 0; i < impl.records.size(); ++i) {
      const uint8_t type = impl.records[i][kEntType];
      if (type != 0 && type != 1 && type != 2 && type != 5)
        corrupt(0, "directory entry " + std::to_string(i) + " has unknown type");
      if (type == 5 && i != 0) corrupt(0, "a second root entry");
      impl.entries[i].type = EntryType(type);
      if (type == 2 || type == 5) {
        const uint8_t* r = impl.records[i].data();
        // Version 3 readers ignore the size's high half; some writers leave junk there.
        impl.entries[i].size = sector_size_ == 512 ? get_u32(r + kEntSize) : get_u64(r + kEntSize);
      }
    }
  }

  // Bytes after the last sector the FAT holds in use: data another tool appended, or free
  // sectors a writer left at the end. Only all-zero padding is let go.
  void read_trailing(CompoundState& impl) const {
    // The FAT's and DIFAT's own sectors count as in use, whether the FAT marks them or not.
    size_t end = sector_offset(uint32_t(last_structure_)) + sector_size_;
    for (size_t id = std::min(fat_.size(), sector_count_); id-- > 0;)
      if (fat_[id] != kFreeSector) {
        end = std::max(end, sector_offset(uint32_t(id)) + sector_size_);
        break;
      }
    // Zeros after it are padding; anything else is kept whole, zeros before it included (they
    // may be the start of what was appended).
    if (end >= bytes_.size() ||
        std::all_of(bytes_.begin() + long(end), bytes_.end(), [](uint8_t b) { return b == 0; }))
      return;
    impl.trailing.assign(bytes_.begin() + long(end), bytes_.end());
  }

  void read_mini_fat() {
    const uint8_t* h = bytes_.data();
    const uint32_t first = get_u32(h + kHdrFirstMiniFatSector);
    if (first == kEndOfChain || get_u32(h + kHdrMiniFatSectorCount) == 0) return;
    for (uint32_t id : regular_chain(first, "mini FAT")) {
      const ByteView s = sector(id, "mini FAT");
      for (size_t i = 0; i < sector_size_ / 4; ++i) mini_fat_.push_back(get_u32(s.data() + 4 * i));
    }
  }

  // Walks the red-black tree of each storage, naming every reachable entry.
  void build_paths(CompoundState& impl) {
    const size_t n = impl.records.size();
    std::vector<uint8_t> visited(n, 0);
    visited[0] = 1;
    struct Pending {
      uint32_t id;
      uint32_t parent;  // the storage's entry, whose path is set by then; kNoStream: the root
      unsigned depth;
    };
    // Paths grow with nesting: deep storage chains could make them quadratic in the input. Each
    // is held twice (the entry's, the stream index's key), so their total is bounded well inside
    // the 16 bytes per input byte the batch reserves for a file.
    constexpr unsigned kMaxDepth = 128;
    const size_t max_path_bytes = (1u << 20) + 4 * bytes_.size();
    size_t path_bytes = 0;
    std::vector<Pending> stack;
    const uint32_t root_child = get_u32(impl.records[0].data() + kEntChild);
    if (root_child != kNoStream) stack.push_back({root_child, kNoStream, 1});
    while (!stack.empty()) {
      const Pending p = stack.back();
      stack.pop_back();
      if (p.id >= n) corrupt(0, "directory link " + std::to_string(p.id) + " out of range");
      if (visited[p.id]) corrupt(0, "directory tree loops at entry " + std::to_string(p.id));
      visited[p.id] = 1;
      const uint8_t* r = impl.records[p.id].data();
      const EntryType type = impl.entries[p.id].type;
      if (type != EntryType::kStorage && type != EntryType::kStream)
        corrupt(0, "directory tree reaches an empty entry");
      const uint16_t name_bytes = get_u16(r + kEntNameLength);
      if (name_bytes < 2 || name_bytes > 64 || name_bytes % 2)
        corrupt(0, "directory entry " + std::to_string(p.id) + " has a bad name length");
      const std::string name = utf8_name(r, name_bytes / 2 - 1);
      const std::string* parent = p.parent == kNoStream ? nullptr : &impl.entries[p.parent].path;
      std::string path = parent == nullptr || parent->empty() ? name : *parent + "/" + name;
      path_bytes += path.size();
      if (p.depth > kMaxDepth || path_bytes > max_path_bytes)
        corrupt(0, "storages nested too deep");
      impl.entries[p.id].path = std::move(path);
      for (size_t link : {kEntLeft, kEntRight}) {
        const uint32_t sibling = get_u32(r + link);
        if (sibling != kNoStream) stack.push_back({sibling, p.parent, p.depth});
      }
      const uint32_t child = get_u32(r + kEntChild);
      if (type == EntryType::kStorage && child != kNoStream)
        stack.push_back({child, p.id, p.depth + 1});
    }
  }

  // Reads every stream (reachable or not: unreachable streams are carried too).
  void read_contents(CompoundState& impl) {
    // The root entry's stream is the mini stream.
    Bytes mini_stream = read_regular(impl, 0);
    const size_t mini_sectors = (mini_stream.size() + kMiniSectorSize - 1) / kMiniSectorSize;
    mini_stream.resize(mini_sectors * kMiniSectorSize);  // a last partial mini sector reads as 0
    std::vector<uint8_t> mini_used(std::min(mini_fat_.size(), mini_sectors), 0);
    for (size_t i = 1; i < impl.records.size(); ++i) {
      if (impl.entries[i].type != EntryType::kStream) continue;
      const uint64_t size = impl.entries[i].size;
      if (size >= kMiniStreamCutoff) {
        impl.contents[i] = read_regular(impl, i);
        continue;
      }
      const uint32_t start = get_u32(impl.records[i].data() + kEntStartSector);
      if (size == 0) continue;
      const auto ids = chain(mini_fat_, start, mini_sectors, mini_used, "mini stream");
      if (ids.size() * uint64_t(kMiniSectorSize) < size)
        corrupt(0, "stream " + impl.entries[i].path + " is longer than its mini sectors");
      Bytes& out = impl.contents[i];
      out.reserve(size);
      for (uint32_t id : ids) {
        const size_t take = std::min<size_t>(kMiniSectorSize, size - out.size());
        const auto from = mini_stream.begin() + size_t(id) * kMiniSectorSize;
        out.insert(out.end(), from, from + take);
        if (out.size() == size) break;
      }
    }
  }

  Bytes read_regular(const CompoundState& impl, size_t index) {
    const uint64_t size = impl.entries[index].size;
    const uint32_t start = get_u32(impl.records[index].data() + kEntStartSector);
    if (size == 0) return {};
    const std::string& name = index == 0 ? std::string("mini stream") : impl.entries[index].path;
    if (size > bytes_.size()) truncated(0, "stream " + name + " is larger than the file");
    const auto ids = regular_chain(start, "stream");
    if (ids.size() * uint64_t(sector_size_) < size)
      corrupt(0, "stream " + name + " is longer than its sector chain");
    Bytes out;
    out.reserve(size);
    for (uint32_t id : ids) {
      const size_t take = std::min<size_t>(sector_size_, size - out.size());
      const size_t at = sector_offset(id);
      if (at >= bytes_.size() || bytes_.size() - at < take)
        truncated(at, "stream " + name + " runs past the end of the file");
      out.insert(out.end(), bytes_.begin() + at, bytes_.begin() + at + take);
      if (out.size() == size) break;
    }
    return out;
  }

  ByteView bytes_;
  uint32_t sector_size_ = 512;
  size_t sector_count_ = 0;
  std::vector<uint32_t> fat_;
  std::vector<uint32_t> mini_fat_;
  std::vector<uint8_t> used_;  // regular sectors already claimed by a chain
  size_t last_structure_ = 0;  // the last FAT or DIFAT sector
};

}  // namespace

CompoundFile CompoundFile::parse(ByteView bytes) {
  CompoundFile file;
  file.impl_ = std::make_shared<Impl>();
  Reader(bytes).parse(*file.impl_);
  return file;
}

const std::vector<DirectoryEntry>& CompoundFile::entries() const { return impl_->entries; }

std::optional<Bytes> CompoundFile::read_stream(std::string_view path) const {
  const auto found = impl_->streams.find(cfb_folded_name(path));
  if (found == impl_->streams.end()) return std::nullopt;
  return impl_->contents[found->second];
}

bool CompoundFile::has_stream(std::string_view path) const {
  return impl_->streams.contains(cfb_folded_name(path));
}

void CompoundFile::replace_stream(std::string_view path, Bytes contents) {
  const auto found = impl_->streams.find(cfb_folded_name(path));
  if (found == impl_->streams.end())
    throw FormatError(Reason::kCorrupt, 0, "compound file has no stream " + std::string(path));
  const size_t i = found->second;
  if (impl_.use_count() > 1) impl_ = std::make_shared<Impl>(*impl_);  // copies stay as they were
  impl_->entries[i].size = contents.size();
  impl_->contents[i] = std::move(contents);
}

std::vector<std::string> CompoundFile::stream_paths() const {
  std::vector<std::string> paths;
  for (const DirectoryEntry& e : impl_->entries)
    if (e.type == EntryType::kStream && !e.path.empty()) paths.push_back(e.path);
  return paths;
}

Bytes CompoundFile::entry_record(size_t index) const {
  const EntryRecord& r = impl_->records.at(index);
  Bytes out(r.begin(), r.end());
  std::fill_n(out.begin() + kEntStartSector, 4 + 8, uint8_t(0));
  return out;
}

uint16_t CompoundFile::major_version() const {
  return get_u16(impl_->header.data() + kHdrMajorVersion);
}

uint32_t CompoundFile::sector_size() const { return impl_->sector_size; }

const Bytes& CompoundFile::trailing() const { return impl_->trailing; }

}  // namespace lighten::cfb
