// Builds small ZIP archives for tests (stored or deflated with zlib), with a central directory.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

namespace lighten::testing {

struct ZipItem {
  std::string name;
  std::vector<uint8_t> content;
  bool deflate = true;
  int level = 1;  // zlib level: 1 leaves room for lighten to do better
  uint16_t flags = 0;
  bool data_descriptor = false;
  uint16_t method = 0;                  // 0: 8 when deflated, else stored; other values as given
  std::vector<uint8_t> after_stream{};  // bytes inside the entry after its data
  uint64_t declared_size = 0;           // 0: the content's; 2^32 - 1 and more: in a ZIP64 field
  std::vector<uint8_t> extra{};         // extra fields, in both headers
  uint16_t local_time = 0x6000;         // the local header's; the central directory's is 0x6000
};

inline std::vector<uint8_t> text_bytes(const std::string& s) { return {s.begin(), s.end()}; }

// `central_order`: the items' indices in central directory order (empty: the local order).
inline std::vector<uint8_t> make_zip(const std::vector<ZipItem>& items,
                                     const std::string& comment = "",
                                     const std::vector<size_t>& central_order = {}) {
  std::vector<uint8_t> out;
  std::vector<std::vector<uint8_t>> central(items.size());
  auto u16 = [](std::vector<uint8_t>& v, uint32_t x) {
    v.push_back(uint8_t(x));
    v.push_back(uint8_t(x >> 8));
  };
  auto u32 = [&](std::vector<uint8_t>& v, uint32_t x) {
    u16(v, x & 0xFFFF);
    u16(v, x >> 16);
  };
  for (size_t index = 0; index < items.size(); ++index) {
    const ZipItem& item = items[index];
    std::vector<uint8_t>& cd = central[index];
    std::vector<uint8_t> data = item.content;
    if (item.deflate) {
      z_stream s{};
      deflateInit2(&s, item.level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
      data.resize(deflateBound(&s, uLong(item.content.size())) + 16);
      s.next_in = const_cast<Bytef*>(item.content.data());
      s.avail_in = uInt(item.content.size());
      s.next_out = data.data();
      s.avail_out = uInt(data.size());
      deflate(&s, Z_FINISH);
      data.resize(s.total_out);
      deflateEnd(&s);
    }
    data.insert(data.end(), item.after_stream.begin(), item.after_stream.end());
    const uint32_t crc = uint32_t(crc32(0, item.content.data(), uInt(item.content.size())));
    const uint16_t flags = uint16_t(item.flags | (item.data_descriptor ? 8 : 0));
    const uint16_t method = item.method ? item.method : item.deflate ? 8 : 0;
    const uint32_t offset = uint32_t(out.size());
    // A declared size past 32 bits goes in a ZIP64 field (its value alone: the only one full).
    const uint64_t size = item.declared_size ? item.declared_size : item.content.size();
    std::vector<uint8_t> extra;
    if (size >= 0xFFFFFFFFu) {
      u16(extra, 1), u16(extra, 8), u32(extra, uint32_t(size)), u32(extra, uint32_t(size >> 32));
    }
    extra.insert(extra.end(), item.extra.begin(), item.extra.end());
    const uint32_t size32 = size >= 0xFFFFFFFFu ? 0xFFFFFFFFu : uint32_t(size);
    u32(out, 0x04034b50);
    u16(out, 20), u16(out, flags), u16(out, method), u16(out, item.local_time), u16(out, 0x5821);
    u32(out, item.data_descriptor ? 0 : crc);
    u32(out, item.data_descriptor ? 0 : uint32_t(data.size()));
    u32(out, item.data_descriptor ? 0 : size32);
    u16(out, uint32_t(item.name.size())), u16(out, uint32_t(extra.size()));
    out.insert(out.end(), item.name.begin(), item.name.end());
    out.insert(out.end(), extra.begin(), extra.end());
    out.insert(out.end(), data.begin(), data.end());
    if (item.data_descriptor) {
      u32(out, 0x08074b50), u32(out, crc), u32(out, uint32_t(data.size()));
      u32(out, uint32_t(item.content.size()));
    }
    u32(cd, 0x02014b50);
    u16(cd, 0x031E), u16(cd, 20), u16(cd, flags), u16(cd, method);
    u16(cd, 0x6000), u16(cd, 0x5821);
    u32(cd, crc), u32(cd, uint32_t(data.size())), u32(cd, size32);
    u16(cd, uint32_t(item.name.size())), u16(cd, uint32_t(extra.size()));
    u16(cd, 0), u16(cd, 0), u16(cd, 0);
    u32(cd, 0x81A40000u), u32(cd, offset);
    cd.insert(cd.end(), item.name.begin(), item.name.end());
    cd.insert(cd.end(), extra.begin(), extra.end());
  }
  std::vector<size_t> order = central_order;
  if (order.empty())
    for (size_t i = 0; i < items.size(); ++i) order.push_back(i);
  std::vector<uint8_t> cd;
  for (size_t i : order) cd.insert(cd.end(), central[i].begin(), central[i].end());
  const uint32_t cd_offset = uint32_t(out.size());
  out.insert(out.end(), cd.begin(), cd.end());
  u32(out, 0x06054b50);
  u16(out, 0), u16(out, 0), u16(out, uint32_t(items.size())), u16(out, uint32_t(items.size()));
  u32(out, uint32_t(cd.size())), u32(out, cd_offset), u16(out, uint32_t(comment.size()));
  out.insert(out.end(), comment.begin(), comment.end());
  return out;
}

}  // namespace lighten::testing
