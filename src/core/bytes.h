// Bounds-checked reading of untrusted bytes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/errors.h"

namespace lighten {

using ByteView = std::span<const uint8_t>;
using Bytes = std::vector<uint8_t>;

// Reads integers and spans from a buffer; every read checks what remains and throws
// FormatError(kTruncated) instead of reading past the end.
class ByteReader {
 public:
  explicit ByteReader(ByteView bytes, size_t offset = 0) : bytes_(bytes), pos_(offset) {
    if (offset > bytes.size()) fail_truncated(0);
  }

  size_t offset() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }
  bool at_end() const { return pos_ == bytes_.size(); }

  uint8_t u8() {
    need(1);
    return bytes_[pos_++];
  }
  uint16_t u16be() {
    need(2);
    uint16_t v = uint16_t(bytes_[pos_] << 8 | bytes_[pos_ + 1]);
    pos_ += 2;
    return v;
  }
  uint16_t u16le() {
    need(2);
    uint16_t v = uint16_t(bytes_[pos_] | bytes_[pos_ + 1] << 8);
    pos_ += 2;
    return v;
  }
  uint32_t u32be() {
    need(4);
    uint32_t v = uint32_t(bytes_[pos_]) << 24 | uint32_t(bytes_[pos_ + 1]) << 16 |
                 uint32_t(bytes_[pos_ + 2]) << 8 | bytes_[pos_ + 3];
    pos_ += 4;
    return v;
  }
  uint32_t u32le() {
    need(4);
    uint32_t v = uint32_t(bytes_[pos_]) | uint32_t(bytes_[pos_ + 1]) << 8 |
                 uint32_t(bytes_[pos_ + 2]) << 16 | uint32_t(bytes_[pos_ + 3]) << 24;
    pos_ += 4;
    return v;
  }
  uint64_t u64le() {
    const uint64_t low = u32le();
    return low | uint64_t(u32le()) << 32;
  }
  ByteView take(size_t n) {
    need(n);
    ByteView v = bytes_.subspan(pos_, n);
    pos_ += n;
    return v;
  }
  void skip(size_t n) { take(n); }
  void seek(size_t offset) {
    if (offset > bytes_.size()) fail_truncated(offset - bytes_.size());
    pos_ = offset;
  }

 private:
  void need(size_t n) const {
    if (n > remaining()) fail_truncated(n - remaining());
  }
  [[noreturn]] void fail_truncated(size_t missing) const {
    throw FormatError(Reason::kTruncated, pos_,
                      "needs " + std::to_string(missing) + " more bytes than the input has");
  }

  ByteView bytes_;
  size_t pos_;
};

inline bool same_bytes(ByteView a, ByteView b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

inline bool starts_with(ByteView bytes, std::string_view prefix, size_t at = 0) {
  if (at > bytes.size() || bytes.size() - at < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (bytes[at + i] != static_cast<uint8_t>(prefix[i])) return false;
  return true;
}

}  // namespace lighten
