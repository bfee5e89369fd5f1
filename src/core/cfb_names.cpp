#include "core/cfb_names.h"

#include <algorithm>

#include "core/errors.h"

namespace lighten {
namespace {

uint32_t le32_at(ByteView bytes, size_t at) {
  return uint32_t(bytes[at]) | uint32_t(bytes[at + 1]) << 8 | uint32_t(bytes[at + 2]) << 16 |
         uint32_t(bytes[at + 3]) << 24;
}

constexpr size_t kHeaderSize = 512;
constexpr uint32_t kLastRegularSector = 0xFFFFFFF9;  // larger ids are markers, not sectors
constexpr size_t kHeaderFatEntries = 109;

}  // namespace

std::string cfb_folded_name(std::string_view name) {
  std::string out(name);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = char(c - 'a' + 'A');
  return out;
}

std::vector<std::string> cfb_root_names(ByteView bytes) {
  if (bytes.size() < kHeaderSize) return {};
  const uint16_t shift = uint16_t(bytes[30] | bytes[31] << 8);
  if (shift != 9 && shift != 12) return {};
  const size_t sector = size_t(1) << shift;
  auto sector_at = [&](uint32_t id) -> size_t {  // offset, or 0 when outside the file
    const size_t at = (size_t(id) + 1) * sector;
    return id <= kLastRegularSector && at <= bytes.size() && bytes.size() - at >= sector ? at : 0;
  };
  // The FAT sector holding entry `index`: the header lists the first 109, DIFAT sectors the rest.
  auto fat_sector = [&](size_t index) -> size_t {
    if (index < 109) return sector_at(le32_at(bytes, 76 + 4 * index));
    const size_t per_difat = sector / 4 - 1;
    size_t hops = (index - 109) / per_difat;
    if (hops > 4096) return 0;
    size_t difat = sector_at(le32_at(bytes, 68));
    for (; difat && hops > 0; --hops) difat = sector_at(le32_at(bytes, difat + 4 * per_difat));
    return difat ? sector_at(le32_at(bytes, difat + 4 * ((index - 109) % per_difat))) : 0;
  };
  std::vector<size_t> entries;  // offsets of directory entries
  uint32_t id = le32_at(bytes, 48);
  // The root's children come first in every writer we know; 256 sectors are plenty.
  for (int n = 0; id != 0xFFFFFFFE && n < 256; ++n) {
    const size_t at = sector_at(id);
    if (!at) return {};  // the scan in sniff_cfb decides instead
    for (size_t e = 0; e < sector; e += 128) entries.push_back(at + e);
    const size_t fat = fat_sector(id / (sector / 4));
    if (!fat) return {};
    id = le32_at(bytes, fat + 4 * (id % (sector / 4)));
  }
  if (entries.empty()) return {};
  std::vector<std::string> names;
  std::vector<uint32_t> stack{le32_at(bytes, entries[0] + 76)};
  std::vector<uint8_t> seen(entries.size(), 0);
  while (!stack.empty() && names.size() < 4096) {
    const uint32_t e = stack.back();
    stack.pop_back();
    if (e >= entries.size() || seen[e]) continue;
    seen[e] = 1;
    const size_t at = entries[e];
    const size_t units = std::min<size_t>(32, bytes[at + 64] / 2);
    std::string name;
    for (size_t k = 0; k + 1 < units; ++k) {
      const uint16_t c = uint16_t(bytes[at + 2 * k] | bytes[at + 2 * k + 1] << 8);
      name += c < 0x80 ? char(c) : '?';
    }
    names.push_back(std::move(name));
    stack.push_back(le32_at(bytes, at + 68));
    stack.push_back(le32_at(bytes, at + 72));
  }
  return names;
}

void check_cfb_header(ByteView in) {
  if (in.size() < kHeaderSize)
    throw FormatError(Reason::kTruncated, 0, "shorter than a compound file's header");
  const uint16_t shift = uint16_t(in[30] | in[31] << 8);
  if (shift != 9 && shift != 12)
    throw FormatError(Reason::kCorrupt, 30, "a compound file's sector size is 512 or 4096 bytes");
  const size_t sector = size_t(1) << shift;
  auto past_the_end = [&](uint32_t id) {
    return id <= kLastRegularSector && (uint64_t(id) + 2) * sector > in.size();
  };
  if (past_the_end(le32_at(in, 48)))
    throw FormatError(Reason::kTruncated, 48,
                      "the compound file's directory lies past its end: the file is cut short");
  const size_t fat_sectors = std::min<size_t>(le32_at(in, 44), kHeaderFatEntries);
  for (size_t k = 0; k < fat_sectors; ++k)
    if (past_the_end(le32_at(in, 76 + 4 * k)))
      throw FormatError(Reason::kTruncated, 76 + 4 * k,
                        "the compound file's allocation table lies past its end: the file is "
                        "cut short");
}

}  // namespace lighten
