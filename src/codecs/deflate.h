// Deflate back-ends behind one interface: zlib to inflate (the reference decoder, independent of
// the encoders), libdeflate and zopfli to compress.
#pragma once

#include <cstdint>
#include <functional>

#include "core/bytes.h"

namespace lighten {

enum class DeflateWrapper { kRaw, kZlib };

// Asked during long compressions; true stops them with FormatError (kLimitExceeded).
using OutOfTime = std::function<bool()>;

// Compresses with the back-end `effort` calls for: libdeflate level 6 (effort 1-2), 9 (3-4),
// 12 (5-7); at 8 and 9 the smaller of libdeflate 12 and zopfli (1 or 5 iterations).
Bytes deflate_bytes(ByteView input, int effort, DeflateWrapper wrapper,
                    const OutOfTime& out_of_time = {});

// Compresses with zopfli as its own ZopfliCompress does, byte for byte, one megabyte block at a
// time, asking `out_of_time` before each (zopfli takes about a second a megabyte).
Bytes zopfli_deflate(ByteView input, int iterations, DeflateWrapper wrapper,
                     const OutOfTime& out_of_time = {});

// Compresses with libdeflate at `level` (1-12): for quick trials that rank candidates.
Bytes deflate_at_level(ByteView input, int level, DeflateWrapper wrapper);

// The most a deflate stream of `size` bytes can decode to: 258 bytes for every 2 bits of the
// longest run of matches, about 1032 times its size (zlib's technical details).
inline uint64_t most_inflated(uint64_t size) {
  constexpr uint64_t kRatio = 1032;
  return size > UINT64_MAX / kRatio ? UINT64_MAX : size * kRatio;
}

// Inflates a stream that must decode to exactly `expected_size` bytes and end there; throws
// FormatError (kCorrupt) otherwise. Memory grows with what the stream produces, never past
// `expected_size`, so a size that lies costs nothing; `counted` (the size is inflated_size's,
// not a file's word) allocates it at once, as growing would hold the room twice over for a
// moment. `consumed`, when given, receives how many input bytes the stream used (the rest
// follow its end).
Bytes inflate_exact(ByteView input, size_t expected_size, DeflateWrapper wrapper,
                    size_t* consumed = nullptr, bool counted = false);

// Inflates a stream of unknown size, refusing to grow past `limit` bytes (kLimitExceeded).
// `consumed`, when given, receives how many input bytes the stream used.
Bytes inflate_bounded(ByteView input, size_t limit, DeflateWrapper wrapper,
                      size_t* consumed = nullptr);

// How many bytes a stream of unknown size inflates to, counted without holding them (so that
// its memory can be asked for before it is allocated, once); throws as inflate_bounded does:
// past `limit` (kLimitExceeded), damaged (kCorrupt), cut short (kTruncated).
uint64_t inflated_size(ByteView input, uint64_t limit, DeflateWrapper wrapper);

// Whether the stream `deflated` inflates to the bytes of `other` (`other_deflated`: the bytes
// `other` inflates to), compared as they inflate, neither held whole: two 3 GB streams need no
// 6 GB. Throws as inflate_bounded does where a stream runs past `limit` or is damaged.
bool inflates_alike(ByteView deflated, ByteView other, bool other_deflated, uint64_t limit,
                    DeflateWrapper wrapper);

uint32_t crc32_of(ByteView bytes);
uint32_t crc32_update(uint32_t crc, ByteView bytes);

}  // namespace lighten
