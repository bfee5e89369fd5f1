// A key for bytes seen before within one file: their 128-bit hash and their size. The engine keys
// its notes on embedded items so, and containers that meet one item many times (an HWP storing a
// picture in several streams) find the earlier result so without holding a copy of the bytes.
#pragma once

#include <xxhash.h>

#include <array>
#include <cstdint>

#include "core/bytes.h"

namespace lighten {

using ContentKey = std::array<uint64_t, 3>;

inline ContentKey content_key(ByteView bytes) {
  const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  return {h.low64, h.high64, bytes.size()};
}

}  // namespace lighten
