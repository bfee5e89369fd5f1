// The CFB writer: every directory entry's bytes as read, with only start sectors and sizes
// rewritten; FAT, DIFAT, mini FAT and mini stream laid out afresh.
//
// Sector order in the output: FAT, DIFAT, directory, mini FAT, mini stream, then the regular
// streams in directory order (each contiguous, so readers stream them without seeking).
#include <algorithm>
#include <string>

#include "formats/cfb/cfb_layout.h"
#include "formats/cfb/compound_file.h"

namespace lighten::cfb {
namespace {

size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

struct Layout {
  size_t fat = 0, difat = 0, directory = 0, mini_fat = 0, mini_stream = 0, streams = 0;
  size_t total() const { return fat + difat + directory + mini_fat + mini_stream + streams; }
};

// Grows the FAT (and DIFAT) until the FAT has an entry for every sector, its own included.
void size_fat(Layout& layout, size_t sector_size) {
  const size_t per_fat = sector_size / 4;
  const size_t per_difat = per_fat - 1;
  for (;;) {
    const size_t needed = ceil_div(layout.total(), per_fat);
    const size_t difat =
        needed > kHeaderDifatEntries ? ceil_div(needed - kHeaderDifatEntries, per_difat) : 0;
    if (needed == layout.fat && difat == layout.difat) return;
    layout.fat = std::max(layout.fat, needed);
    layout.difat = std::max(layout.difat, difat);
  }
}

class Writer {
 public:
  explicit Writer(const CompoundState& impl) : impl_(impl), s_(impl.sector_size) {}

  Bytes write() {
    plan();
    out_.reserve(s_ * (1 + layout_.total()) + impl_.trailing.size());
    out_.assign(s_ * (1 + layout_.total()), 0);
    fat_.assign(layout_.fat * (s_ / 4), kFreeSector);
    uint32_t next = 0;
    const uint32_t fat_start = next;
    next = mark(next, layout_.fat, kFatSector);
    const uint32_t difat_start = next;
    next = mark(next, layout_.difat, kDifatSector);
    const uint32_t dir_start = link(next, layout_.directory);
    next += uint32_t(layout_.directory);
    const uint32_t mini_fat_start = link(next, layout_.mini_fat);
    next += uint32_t(layout_.mini_fat);
    const uint32_t mini_stream_start = link(next, layout_.mini_stream);
    next += uint32_t(layout_.mini_stream);

    std::vector<EntryRecord> records = impl_.records;
    write_ministreams(records, mini_fat_start, mini_stream_start);
    for (size_t i = 1; i < records.size(); ++i) {
      if (impl_.entries[i].type != EntryType::kStream) continue;
      const Bytes& data = impl_.contents[i];
      if (data.size() < kMiniStreamCutoff) continue;
      const size_t count = ceil_div(data.size(), s_);
      const uint32_t start = link(next, count);
      std::copy(data.begin(), data.end(), out_.begin() + offset(start));
      put_u32(records[i].data() + kEntStartSector, start);
      put_u64(records[i].data() + kEntSize, data.size());
      next += uint32_t(count);
    }
    for (size_t i = 0; i < records.size(); ++i)
      std::copy(records[i].begin(), records[i].end(),
                out_.begin() + offset(dir_start) + i * kEntrySize);
    write_fat(fat_start, difat_start);
    write_header(dir_start, mini_fat_start, fat_start, difat_start);
    out_.insert(out_.end(), impl_.trailing.begin(), impl_.trailing.end());
    return std::move(out_);
  }

 private:
  void plan() {
    for (size_t i = 1; i < impl_.entries.size(); ++i) {
      if (impl_.entries[i].type != EntryType::kStream) continue;
      const size_t size = impl_.contents[i].size();
      if (size == 0) continue;
      if (size < kMiniStreamCutoff)
        mini_sectors_ += ceil_div(size, kMiniSectorSize);
      else
        layout_.streams += ceil_div(size, s_);
    }
    layout_.directory = ceil_div(impl_.records.size() * kEntrySize, s_);
    layout_.mini_fat = ceil_div(mini_sectors_ * 4, s_);
    layout_.mini_stream = ceil_div(mini_sectors_ * kMiniSectorSize, s_);
    size_fat(layout_, s_);
    if (layout_.total() >= kMaxRegularSector)
      throw FormatError(Reason::kLimitExceeded, 0, "compound file would exceed the sector limit");
  }

  size_t offset(uint32_t sector) const { return (size_t(sector) + 1) * s_; }

  uint32_t mark(uint32_t first, size_t count, uint32_t value) {
    for (size_t k = 0; k < count; ++k) fat_[first + k] = value;
    return uint32_t(first + count);
  }

  // Chains `count` consecutive sectors from `first`; returns the chain's start.
  uint32_t link(uint32_t first, size_t count) {
    if (count == 0) return kEndOfChain;
    for (size_t k = 0; k + 1 < count; ++k) fat_[first + k] = uint32_t(first + k + 1);
    fat_[first + count - 1] = kEndOfChain;
    return first;
  }

  void write_ministreams(std::vector<EntryRecord>& records, uint32_t mini_fat_start,
                         uint32_t mini_stream_start) {
    std::vector<uint32_t> mini_fat(layout_.mini_fat * (s_ / 4), kFreeSector);
    Bytes mini(layout_.mini_stream * s_, 0);
    uint32_t next = 0;
    for (size_t i = 1; i < records.size(); ++i) {
      if (impl_.entries[i].type != EntryType::kStream) continue;
      const Bytes& data = impl_.contents[i];
      if (data.size() >= kMiniStreamCutoff) continue;
      uint32_t start = kEndOfChain;
      if (!data.empty()) {
        const size_t count = ceil_div(data.size(), kMiniSectorSize);
        start = next;
        for (size_t k = 0; k + 1 < count; ++k) mini_fat[next + k] = uint32_t(next + k + 1);
        mini_fat[next + count - 1] = kEndOfChain;
        std::copy(data.begin(), data.end(), mini.begin() + size_t(next) * kMiniSectorSize);
        next += uint32_t(count);
      }
      put_u32(records[i].data() + kEntStartSector, start);
      put_u64(records[i].data() + kEntSize, data.size());
    }
    put_u32(records[0].data() + kEntStartSector, mini_stream_start);
    put_u64(records[0].data() + kEntSize, uint64_t(next) * kMiniSectorSize);
    if (layout_.mini_stream)
      std::copy(mini.begin(), mini.end(), out_.begin() + offset(mini_stream_start));
    for (size_t k = 0; k < mini_fat.size(); ++k)
      put_u32(out_.data() + offset(mini_fat_start) + 4 * k, mini_fat[k]);
  }

  void write_fat(uint32_t fat_start, uint32_t difat_start) {
    for (size_t k = 0; k < fat_.size(); ++k)
      put_u32(out_.data() + offset(fat_start) + 4 * k, fat_[k]);
    // FAT sectors past the header's 109 are listed in DIFAT sectors, chained by their last slot.
    const size_t per_difat = s_ / 4 - 1;
    for (size_t d = 0; d < layout_.difat; ++d) {
      uint8_t* sector = out_.data() + offset(uint32_t(difat_start + d));
      for (size_t k = 0; k < per_difat; ++k) {
        const size_t fat_index = kHeaderDifatEntries + d * per_difat + k;
        put_u32(sector + 4 * k,
                fat_index < layout_.fat ? uint32_t(fat_start + fat_index) : kFreeSector);
      }
      put_u32(sector + 4 * per_difat,
              d + 1 < layout_.difat ? uint32_t(difat_start + d + 1) : kEndOfChain);
    }
  }

  void write_header(uint32_t dir_start, uint32_t mini_fat_start, uint32_t fat_start,
                    uint32_t difat_start) {
    uint8_t* h = out_.data();
    std::copy(impl_.header.begin(), impl_.header.end(), h);
    std::copy(impl_.header_tail.begin(), impl_.header_tail.end(), h + kHeaderSize);
    put_u32(h + kHdrDirSectorCount, s_ == 512 ? 0 : uint32_t(layout_.directory));
    put_u32(h + kHdrFatSectorCount, uint32_t(layout_.fat));
    put_u32(h + kHdrFirstDirSector, dir_start);
    put_u32(h + kHdrFirstMiniFatSector, mini_fat_start);
    put_u32(h + kHdrMiniFatSectorCount, uint32_t(layout_.mini_fat));
    put_u32(h + kHdrFirstDifatSector, layout_.difat ? difat_start : kEndOfChain);
    put_u32(h + kHdrDifatSectorCount, uint32_t(layout_.difat));
    for (size_t k = 0; k < kHeaderDifatEntries; ++k)
      put_u32(h + kHdrDifat + 4 * k, k < layout_.fat ? uint32_t(fat_start + k) : kFreeSector);
  }

  const CompoundState& impl_;
  const size_t s_;
  Layout layout_;
  size_t mini_sectors_ = 0;
  std::vector<uint32_t> fat_;
  Bytes out_;
};

}  // namespace

Bytes CompoundFile::serialize() const { return Writer(*impl_).write(); }

}  // namespace lighten::cfb
