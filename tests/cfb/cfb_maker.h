// Builds compound files for tests, independently of lighten's writer and with a different
// layout: streams first (optionally with each chain running backwards), then the mini stream,
// mini FAT, directory, FAT and DIFAT last. Children of each storage form a right-leaning chain
// in CFB name order, so readers that search the tree by name find them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace lighten::testing {

struct CfbItem {
  std::string path;  // "BinData/BIN0001.jpg"; storages are created for every parent
  std::vector<uint8_t> data;
  bool storage = false;
};

struct CfbOptions {
  uint16_t major = 3;
  bool reverse_chains = false;  // lay each chain's sectors out in reverse order
};

inline std::vector<uint8_t> make_cfb(std::vector<CfbItem> items, CfbOptions options = {}) {
  const size_t s = options.major == 4 ? 4096 : 512;
  const uint32_t kEnd = 0xFFFFFFFE, kFree = 0xFFFFFFFF, kNone = 0xFFFFFFFF;
  auto put32 = [](uint8_t* p, uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
  };
  // Add missing parent storages.
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string path = items[i].path;
    for (size_t slash = path.find('/'); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
      const std::string parent = path.substr(0, slash);
      if (std::none_of(items.begin(), items.end(),
                       [&](const CfbItem& c) { return c.path == parent; }))
        items.push_back({parent, {}, true});
    }
  }
  const size_t n = items.size() + 1;  // + root
  auto parent_of = [](const std::string& p) {
    const size_t slash = p.rfind('/');
    return slash == std::string::npos ? std::string() : p.substr(0, slash);
  };
  auto leaf_of = [](const std::string& p) {
    const size_t slash = p.rfind('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
  };
  auto cfb_less = [&](size_t a, size_t b) {
    std::string x = leaf_of(items[a].path), y = leaf_of(items[b].path);
    if (x.size() != y.size()) return x.size() < y.size();
    std::transform(x.begin(), x.end(), x.begin(), ::toupper);
    std::transform(y.begin(), y.end(), y.begin(), ::toupper);
    return x < y;
  };

  std::vector<uint32_t> fat;
  std::vector<uint8_t> body;  // sectors after the header
  auto add_chain = [&](const std::vector<uint8_t>& data) -> uint32_t {
    const size_t count = (data.size() + s - 1) / s;
    if (count == 0) return kEnd;
    const uint32_t first = uint32_t(fat.size());
    fat.resize(fat.size() + count, kFree);
    body.resize(body.size() + count * s, 0);
    std::vector<uint32_t> ids(count);
    for (size_t k = 0; k < count; ++k)
      ids[k] = options.reverse_chains ? uint32_t(first + count - 1 - k) : uint32_t(first + k);
    for (size_t k = 0; k < count; ++k) {
      fat[ids[k]] = k + 1 < count ? ids[k + 1] : kEnd;
      const size_t len = std::min(s, data.size() - k * s);
      std::copy_n(data.begin() + k * s, len, body.begin() + ids[k] * s);
    }
    return ids[0];
  };

  std::vector<uint32_t> start(n, kEnd);
  std::vector<uint8_t> mini;
  std::vector<uint32_t> mini_fat;
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& d = items[i].data;
    if (items[i].storage || d.empty()) continue;
    if (d.size() >= 4096) {
      start[i + 1] = add_chain(d);
      continue;
    }
    const size_t count = (d.size() + 63) / 64;
    start[i + 1] = uint32_t(mini_fat.size());
    for (size_t k = 0; k < count; ++k)
      mini_fat.push_back(k + 1 < count ? uint32_t(mini_fat.size() + 1) : kEnd);
    mini.insert(mini.end(), d.begin(), d.end());
    mini.resize(mini_fat.size() * 64, 0);
  }
  start[0] = add_chain(mini);
  std::vector<uint8_t> mini_fat_bytes(mini_fat.size() * 4);
  for (size_t k = 0; k < mini_fat.size(); ++k) put32(&mini_fat_bytes[4 * k], mini_fat[k]);
  const uint32_t mini_fat_start = add_chain(mini_fat_bytes);

  std::vector<uint8_t> dir(((n * 128 + s - 1) / s) * s, 0);
  for (size_t e = 0; e < dir.size() / 128; ++e) {
    uint8_t* r = &dir[e * 128];
    put32(r + 68, kNone), put32(r + 72, kNone), put32(r + 76, kNone);
  }
  for (size_t e = 0; e < n; ++e) {
    uint8_t* r = &dir[e * 128];
    const std::string name = e == 0 ? "Root Entry" : leaf_of(items[e - 1].path);
    for (size_t k = 0; k < name.size() && k < 31; ++k) r[2 * k] = uint8_t(name[k]);
    r[64] = uint8_t(2 * (std::min<size_t>(name.size(), 31) + 1));
    r[66] = e == 0 ? 5 : items[e - 1].storage ? 1 : 2;
    r[67] = 1;  // black
    // Children of this storage, chained through right siblings in name order.
    const std::string self = e == 0 ? std::string() : items[e - 1].path;
    if (e == 0 || items[e - 1].storage) {
      std::vector<size_t> kids;
      for (size_t i = 0; i < items.size(); ++i)
        if (parent_of(items[i].path) == self && items[i].path != self) kids.push_back(i);
      std::sort(kids.begin(), kids.end(), cfb_less);
      if (!kids.empty()) put32(r + 76, uint32_t(kids[0] + 1));
      for (size_t k = 0; k + 1 < kids.size(); ++k)
        put32(&dir[(kids[k] + 1) * 128 + 72], uint32_t(kids[k + 1] + 1));
      for (int b = 0; b < 16; ++b) r[80 + b] = uint8_t(0xC0 + b + e);  // CLSID
    }
    r[96] = uint8_t(e);                                               // state bits
    for (int b = 0; b < 16; ++b) r[100 + b] = uint8_t(0x10 + b + e);  // timestamps
    const size_t size = e == 0 ? mini.size() : items[e - 1].storage ? 0 : items[e - 1].data.size();
    put32(r + 116, e > 0 && items[e - 1].storage ? 0 : start[e]);
    put32(r + 120, uint32_t(size));
    put32(r + 124, uint32_t(uint64_t(size) >> 32));
  }
  const uint32_t dir_start = add_chain(dir);

  // FAT and DIFAT sectors last; grow until the FAT covers itself.
  const size_t per = s / 4;
  size_t fat_sectors = 0, difat_sectors = 0;
  for (;;) {
    const size_t total = fat.size() + fat_sectors + difat_sectors;
    const size_t need = (total + per - 1) / per;
    const size_t need_difat = need > 109 ? (need - 109 + per - 2) / (per - 1) : 0;
    if (need == fat_sectors && need_difat == difat_sectors) break;
    fat_sectors = std::max(fat_sectors, need);
    difat_sectors = std::max(difat_sectors, need_difat);
  }
  const uint32_t fat_first = uint32_t(fat.size());
  const uint32_t difat_first = uint32_t(fat_first + fat_sectors);
  fat.resize(fat_sectors * per, kFree);
  for (size_t k = 0; k < fat_sectors; ++k) fat[fat_first + k] = 0xFFFFFFFD;
  for (size_t k = 0; k < difat_sectors; ++k) fat[difat_first + k] = 0xFFFFFFFC;
  body.resize((difat_first + difat_sectors) * s, 0);
  for (size_t k = 0; k < fat.size(); ++k) put32(&body[fat_first * s + 4 * k], fat[k]);
  for (size_t d = 0; d < difat_sectors; ++d) {
    uint8_t* sec = &body[(difat_first + d) * s];
    for (size_t k = 0; k + 1 < per; ++k) {
      const size_t idx = 109 + d * (per - 1) + k;
      put32(sec + 4 * k, idx < fat_sectors ? uint32_t(fat_first + idx) : kFree);
    }
    put32(sec + 4 * (per - 1), d + 1 < difat_sectors ? uint32_t(difat_first + d + 1) : kEnd);
  }

  std::vector<uint8_t> out(s, 0);
  const uint8_t sig[] = {0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1};
  std::copy(sig, sig + 8, out.begin());
  out[24] = 0x3E, out[26] = uint8_t(options.major), out[28] = 0xFE, out[29] = 0xFF;
  out[30] = options.major == 4 ? 12 : 9, out[32] = 6;
  put32(&out[40], options.major == 4 ? uint32_t(dir.size() / s) : 0);
  put32(&out[44], uint32_t(fat_sectors));
  put32(&out[48], dir_start);
  put32(&out[56], 4096);
  put32(&out[60], mini_fat.empty() ? kEnd : mini_fat_start);
  put32(&out[64], uint32_t((mini_fat_bytes.size() + s - 1) / s));
  put32(&out[68], difat_sectors ? difat_first : kEnd);
  put32(&out[72], uint32_t(difat_sectors));
  for (size_t k = 0; k < 109; ++k)
    put32(&out[76 + 4 * k], k < fat_sectors ? uint32_t(fat_first + k) : kFree);
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

}  // namespace lighten::testing
