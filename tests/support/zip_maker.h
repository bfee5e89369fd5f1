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
};

inline std::vector<uint8_t> text_bytes(const std::string& s) { return {s.begin(), s.end()}; }

inline std::vector<uint8_t> make_zip(const std::vector<ZipItem>& items,
                                     const std::string& comment = "") {
  std::vector<uint8_t> out, cd;
  auto u16 = [](std::vector<uint8_t>& v, uint32_t x) {
    v.push_back(uint8_t(x));
    v.push_back(uint8_t(x >> 8));
  };
  auto u32 = [&](std::vector<uint8_t>& v, uint32_t x) {
    u16(v, x & 0xFFFF);
    u16(v, x >> 16);
  };
  for (const ZipItem& item : items) {
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
    const uint32_t crc = uint32_t(crc32(0, item.content.data(), uInt(item.content.size())));
    const uint16_t flags = uint16_t(item.flags | (item.data_descriptor ? 8 : 0));
    const uint32_t offset = uint32_t(out.size());
    u32(out, 0x04034b50);
    u16(out, 20), u16(out, flags), u16(out, item.deflate ? 8 : 0), u16(out, 0x6000),
        u16(out, 0x5821);
    u32(out, item.data_descriptor ? 0 : crc);
    u32(out, item.data_descriptor ? 0 : uint32_t(data.size()));
    u32(out, item.data_descriptor ? 0 : uint32_t(item.content.size()));
    u16(out, uint32_t(item.name.size())), u16(out, 0);
    out.insert(out.end(), item.name.begin(), item.name.end());
    out.insert(out.end(), data.begin(), data.end());
    if (item.data_descriptor) {
      u32(out, 0x08074b50), u32(out, crc), u32(out, uint32_t(data.size()));
      u32(out, uint32_t(item.content.size()));
    }
    u32(cd, 0x02014b50);
    u16(cd, 0x031E), u16(cd, 20), u16(cd, flags), u16(cd, item.deflate ? 8 : 0);
    u16(cd, 0x6000), u16(cd, 0x5821);
    u32(cd, crc), u32(cd, uint32_t(data.size())), u32(cd, uint32_t(item.content.size()));
    u16(cd, uint32_t(item.name.size())), u16(cd, 0), u16(cd, 0), u16(cd, 0), u16(cd, 0);
    u32(cd, 0x81A40000u), u32(cd, offset);
    cd.insert(cd.end(), item.name.begin(), item.name.end());
  }
  const uint32_t cd_offset = uint32_t(out.size());
  out.insert(out.end(), cd.begin(), cd.end());
  u32(out, 0x06054b50);
  u16(out, 0), u16(out, 0), u16(out, uint32_t(items.size())), u16(out, uint32_t(items.size()));
  u32(out, uint32_t(cd.size())), u32(out, cd_offset), u16(out, uint32_t(comment.size()));
  out.insert(out.end(), comment.begin(), comment.end());
  return out;
}

}  // namespace lighten::testing
