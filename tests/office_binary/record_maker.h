// Builds OfficeArt, PowerPoint and BIFF8 record streams for tests, byte by byte.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

namespace lighten::testing {

using RecordBytes = std::vector<uint8_t>;

inline void put16(RecordBytes& v, uint32_t x) {
  v.push_back(uint8_t(x));
  v.push_back(uint8_t(x >> 8));
}
inline void put32(RecordBytes& v, uint32_t x) {
  for (int i = 0; i < 4; ++i) v.push_back(uint8_t(x >> (8 * i)));
}
inline uint32_t get32(const RecordBytes& v, size_t at) {
  return uint32_t(v.at(at)) | uint32_t(v.at(at + 1)) << 8 | uint32_t(v.at(at + 2)) << 16 |
         uint32_t(v.at(at + 3)) << 24;
}
inline void append(RecordBytes& v, const RecordBytes& w) { v.insert(v.end(), w.begin(), w.end()); }

// An OfficeArt record: recVer/recInstance, recType, recLen, body.
inline RecordBytes officeart(unsigned version, unsigned instance, uint16_t type,
                             const RecordBytes& body) {
  RecordBytes r;
  put16(r, version | instance << 4);
  put16(r, type);
  put32(r, uint32_t(body.size()));
  append(r, body);
  return r;
}
inline RecordBytes container(uint16_t type, const std::vector<RecordBytes>& children,
                             unsigned instance = 0) {
  RecordBytes body;
  for (const auto& c : children) append(body, c);
  return officeart(0xF, instance, type, body);
}

// An OfficeArtFOPT (or, with `type` 0xF122, a tertiary one) of simple properties: id, value.
inline RecordBytes property_table(const std::vector<std::pair<uint16_t, uint32_t>>& properties,
                                  uint16_t type = 0xF00B) {
  RecordBytes body;
  for (const auto& [id, value] : properties) {
    put16(body, id);
    put32(body, value);
  }
  return officeart(3, unsigned(properties.size()), type, body);
}

// A JPEG BLIP (one UID) or PNG BLIP around `image`; `uid_byte` fills the UID.
inline RecordBytes jpeg_blip(const RecordBytes& image, uint8_t uid_byte = 0x11) {
  RecordBytes body(16, uid_byte);
  body.push_back(0xFF);  // tag
  append(body, image);
  return officeart(0, 0x46A, 0xF01D, body);
}
inline RecordBytes png_blip(const RecordBytes& image, uint8_t uid_byte = 0x22) {
  RecordBytes body(16, uid_byte);
  body.push_back(0xFF);
  append(body, image);
  return officeart(0, 0x6E0, 0xF01E, body);
}
// A WMF BLIP: a metafile header the optimisers must never touch.
inline RecordBytes wmf_blip(size_t size) {
  RecordBytes body(16 + 34 + size, 0x44);
  std::fill(body.begin(), body.begin() + 16 + 34, uint8_t(0x33));
  return officeart(0, 0x216, 0xF01B, body);
}

// An FBSE: size/foDelay given; `embedded` is appended inside the record (XLS style).
inline RecordBytes fbse(uint32_t size, uint32_t delay, const RecordBytes& embedded = {},
                        uint8_t bt = 5) {
  RecordBytes body(2 + 16, 0xAB);  // btWin32, btMacOS, rgbUid
  body[0] = body[1] = bt;
  put16(body, 0xFF);  // tag
  put32(body, size);
  put32(body, 1);  // cRef
  put32(body, delay);
  body.insert(body.end(), {0, 0, 0, 0});  // unused1, cbName, unused2, unused3
  append(body, embedded);
  return officeart(2, bt, 0xF007, body);
}

// Image bytes that sniff as JPEG / PNG (only the signature matters to the record code).
inline RecordBytes fake_jpeg(size_t size, uint8_t fill = 0x10) {
  RecordBytes v(std::max<size_t>(size, 4), fill);
  const uint8_t soi[] = {0xFF, 0xD8, 0xFF, 0xE0};
  std::copy(std::begin(soi), std::end(soi), v.begin());
  return v;
}
inline RecordBytes fake_png(size_t size) {
  RecordBytes v(std::max<size_t>(size, 8), 0x20);
  const uint8_t signature[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  std::copy(std::begin(signature), std::end(signature), v.begin());
  return v;
}

// A BIFF8 record.
inline RecordBytes biff(uint16_t type, const RecordBytes& payload) {
  RecordBytes r;
  put16(r, type);
  put16(r, uint32_t(payload.size()));
  append(r, payload);
  return r;
}
inline RecordBytes biff_bof(uint16_t dt) {
  RecordBytes p;
  put16(p, 0x0600);
  put16(p, dt);
  p.resize(16, 0);
  return biff(0x0809, p);
}

}  // namespace lighten::testing
