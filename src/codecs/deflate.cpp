#include "codecs/deflate.h"

#include <libdeflate.h>
#include <zlib.h>
#include <zopfli/deflate.h>
#include <zopfli/util.h>
#include <zopfli/zopfli.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/uninitialized_vector.h"

namespace lighten {
namespace {

struct CompressorDeleter {
  void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};

Bytes libdeflate_compress(ByteView input, int level, DeflateWrapper wrapper) {
  std::unique_ptr<libdeflate_compressor, CompressorDeleter> c(libdeflate_alloc_compressor(level));
  if (!c) throw std::bad_alloc();
  const size_t bound = wrapper == DeflateWrapper::kZlib
                           ? libdeflate_zlib_compress_bound(c.get(), input.size())
                           : libdeflate_deflate_compress_bound(c.get(), input.size());
  // The bound is about the input's size; left uninitialised, only the pages libdeflate writes
  // are touched, and the result is copied out at its own size so that a 144 MB image's few
  // hundred kilobytes of output do not keep 144 MB allocated while other candidates are made.
  UninitializedVector<uint8_t> room(bound);
  const size_t n =
      wrapper == DeflateWrapper::kZlib
          ? libdeflate_zlib_compress(c.get(), input.data(), input.size(), room.data(), room.size())
          : libdeflate_deflate_compress(c.get(), input.data(), input.size(), room.data(),
                                        room.size());
  if (n == 0) throw std::runtime_error("libdeflate: output did not fit its own bound");
  return Bytes(room.begin(), room.begin() + std::ptrdiff_t(n));
}

struct Inflater {
  explicit Inflater(DeflateWrapper wrapper) {
    if (inflateInit2(&stream, wrapper == DeflateWrapper::kZlib ? 15 : -15) != Z_OK)
      throw std::bad_alloc();
  }
  ~Inflater() { inflateEnd(&stream); }
  z_stream stream{};
};

[[noreturn]] void corrupt(const z_stream& s, const std::string& what) {
  throw FormatError(Reason::kCorrupt, s.total_in,
                    "deflate stream " + what + (s.msg ? std::string(": ") + s.msg : ""));
}

}  // namespace

Bytes deflate_bytes(ByteView input, int effort, DeflateWrapper wrapper,
                    const OutOfTime& out_of_time) {
  if (effort >= 8) {
    // zopfli's fixed block-splitting limit loses to libdeflate on large inputs: keep the smaller.
    Bytes z = zopfli_deflate(input, effort >= 9 ? 5 : 1, wrapper, out_of_time);
    Bytes l = libdeflate_compress(input, 12, wrapper);
    return z.size() <= l.size() ? z : l;
  }
  const int level = effort <= 2 ? 6 : effort <= 4 ? 9 : 12;
  return libdeflate_compress(input, level, wrapper);
}

// ZopfliCompress's own loop over master blocks, with the question asked between them.
Bytes zopfli_deflate(ByteView input, int iterations, DeflateWrapper wrapper,
                     const OutOfTime& out_of_time) {
  ZopfliOptions options;
  ZopfliInitOptions(&options);
  options.numiterations = iterations;
  unsigned char* raw = nullptr;  // grown by zopfli with realloc
  size_t size = 0;
  struct Freed {
    unsigned char*& p;
    ~Freed() { std::free(p); }
  } freed{raw};
  unsigned char bit_pointer = 0;
  size_t at = 0;
  do {
    if (out_of_time && out_of_time())
      throw FormatError(Reason::kLimitExceeded, at, "the time budget ran out");
    const bool last = input.size() - at <= ZOPFLI_MASTER_BLOCK_SIZE;
    const size_t end = last ? input.size() : at + ZOPFLI_MASTER_BLOCK_SIZE;
    ZopfliDeflatePart(&options, 2, last, input.data(), at, end, &bit_pointer, &raw, &size);
    at = end;
  } while (at < input.size());
  const bool zlib = wrapper == DeflateWrapper::kZlib;
  Bytes out(size + (zlib ? 2 : 0));
  if (zlib) out[0] = 0x78, out[1] = 0xDA;  // zopfli's header: 32K window, best compression
  if (size > 0) std::memcpy(out.data() + (zlib ? 2 : 0), raw, size);
  if (zlib) {
    uLong adler = adler32(0L, Z_NULL, 0);
    for (size_t done = 0; done < input.size();) {
      const size_t n = std::min<size_t>(input.size() - done, std::numeric_limits<uInt>::max());
      adler = adler32(adler, input.data() + done, uInt(n));
      done += n;
    }
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(uint8_t(adler >> shift));
  }
  return out;
}

Bytes deflate_at_level(ByteView input, int level, DeflateWrapper wrapper) {
  return libdeflate_compress(input, std::clamp(level, 1, 12), wrapper);
}

Bytes inflate_exact(ByteView input, size_t expected_size, DeflateWrapper wrapper, size_t* consumed,
                    bool counted) {
  Inflater inf(wrapper);
  // Room grows with the output (from what 64 times the input could give), so a recorded size
  // far beyond what the stream holds is found out before it is allocated.
  Bytes out(counted
                ? expected_size
                : std::min(expected_size, std::max<size_t>(size_t(1) << 20, input.size() * 64)));
  z_stream& s = inf.stream;
  // zlib counts in uInt; feed in chunks so inputs over 4 GiB are handled too.
  size_t in_pos = 0, out_pos = 0;
  constexpr size_t kChunk = std::numeric_limits<uInt>::max();
  int rc = Z_OK;
  uint8_t spare = 0;  // one byte of room to notice a stream longer than announced
  while (rc != Z_STREAM_END) {
    if (out_pos == out.size() && out.size() < expected_size)
      out.resize(std::min(expected_size, out.size() * 2));
    s.next_in = const_cast<Bytef*>(input.data() + in_pos);
    s.avail_in = uInt(std::min(kChunk, input.size() - in_pos));
    const bool full = out_pos == expected_size;
    s.next_out = full ? &spare : out.data() + out_pos;
    s.avail_out = full ? 1 : uInt(std::min(kChunk, out.size() - out_pos));
    const uInt before_in = s.avail_in, before_out = s.avail_out;
    rc = inflate(&s, Z_NO_FLUSH);
    in_pos += before_in - s.avail_in;
    const size_t produced = before_out - s.avail_out;
    if (full && produced > 0) corrupt(s, "is longer than its recorded size");
    out_pos += produced;
    if (rc == Z_STREAM_END) break;
    if (rc == Z_BUF_ERROR && in_pos == input.size())
      throw FormatError(Reason::kTruncated, in_pos, "deflate stream ends early");
    if (rc != Z_OK && rc != Z_BUF_ERROR) corrupt(s, "is damaged");
    if (produced == 0 && before_in == s.avail_in)
      throw FormatError(Reason::kTruncated, in_pos, "deflate stream ends early");
  }
  if (out_pos != expected_size) corrupt(s, "is shorter than its recorded size");
  if (consumed) *consumed = in_pos;
  return out;
}

Bytes inflate_bounded(ByteView input, size_t limit, DeflateWrapper wrapper, size_t* consumed) {
  Inflater inf(wrapper);
  z_stream& s = inf.stream;
  Bytes out;
  size_t in_pos = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (out.size() == limit)
      throw FormatError(Reason::kLimitExceeded, in_pos,
                        "deflate stream expands past " + std::to_string(limit) + " bytes");
    const size_t grow = std::min<size_t>(limit - out.size(), std::max<size_t>(out.size(), 1 << 16));
    const size_t old = out.size();
    out.resize(old + std::min<size_t>(grow, std::numeric_limits<uInt>::max()));
    s.next_in = const_cast<Bytef*>(input.data() + in_pos);
    s.avail_in = uInt(std::min<size_t>(std::numeric_limits<uInt>::max(), input.size() - in_pos));
    s.next_out = out.data() + old;
    s.avail_out = uInt(out.size() - old);
    const uInt before_in = s.avail_in, before_out = s.avail_out;
    rc = inflate(&s, Z_NO_FLUSH);
    in_pos += before_in - s.avail_in;
    out.resize(old + (before_out - s.avail_out));
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK && rc != Z_BUF_ERROR) corrupt(s, "is damaged");
    if (before_in == s.avail_in && before_out == s.avail_out)
      throw FormatError(Reason::kTruncated, in_pos, "deflate stream ends early");
  }
  if (consumed) *consumed = in_pos;
  return out;
}

uint64_t inflated_size(ByteView input, uint64_t limit, DeflateWrapper wrapper) {
  Inflater inf(wrapper);
  z_stream& s = inf.stream;
  std::vector<uint8_t> scratch(1 << 16);
  uint64_t total = 0;
  size_t in_pos = 0;
  for (int rc = Z_OK; rc != Z_STREAM_END;) {
    s.next_in = const_cast<Bytef*>(input.data() + in_pos);
    s.avail_in = uInt(std::min<size_t>(std::numeric_limits<uInt>::max(), input.size() - in_pos));
    s.next_out = scratch.data();
    s.avail_out = uInt(scratch.size());
    const uInt before_in = s.avail_in;
    rc = inflate(&s, Z_NO_FLUSH);
    in_pos += before_in - s.avail_in;
    const size_t produced = scratch.size() - s.avail_out;
    total += produced;
    if (total > limit)
      throw FormatError(Reason::kLimitExceeded, in_pos,
                        "deflate stream expands past " + std::to_string(limit) + " bytes");
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK && rc != Z_BUF_ERROR) corrupt(s, "is damaged");
    if (before_in == s.avail_in && produced == 0)
      throw FormatError(Reason::kTruncated, in_pos, "deflate stream ends early");
  }
  return total;
}

namespace {

// A stream inflated a piece at a time.
class InflateReader {
 public:
  InflateReader(ByteView input, DeflateWrapper wrapper) : input_(input), inflater_(wrapper) {}
  // Fills `out` as far as the stream goes; fewer bytes only at its end.
  size_t read(uint8_t* out, size_t n, uint64_t limit) {
    z_stream& s = inflater_.stream;
    size_t got = 0;
    while (got < n && !ended_) {
      s.next_in = const_cast<Bytef*>(input_.data() + in_pos_);
      s.avail_in =
          uInt(std::min<size_t>(std::numeric_limits<uInt>::max(), input_.size() - in_pos_));
      s.next_out = out + got;
      s.avail_out = uInt(std::min<size_t>(std::numeric_limits<uInt>::max(), n - got));
      const uInt before_in = s.avail_in, before_out = s.avail_out;
      const int rc = inflate(&s, Z_NO_FLUSH);
      in_pos_ += before_in - s.avail_in;
      got += before_out - s.avail_out;
      if (rc == Z_STREAM_END) ended_ = true;
      if (rc != Z_STREAM_END && rc != Z_OK && rc != Z_BUF_ERROR) corrupt(s, "is damaged");
      if (!ended_ && before_in == s.avail_in && before_out == s.avail_out)
        throw FormatError(Reason::kTruncated, in_pos_, "deflate stream ends early");
    }
    total_ += got;
    if (total_ > limit)
      throw FormatError(Reason::kLimitExceeded, in_pos_,
                        "deflate stream expands past " + std::to_string(limit) + " bytes");
    return got;
  }

 private:
  ByteView input_;
  Inflater inflater_;
  size_t in_pos_ = 0;
  uint64_t total_ = 0;
  bool ended_ = false;
};

}  // namespace

bool inflates_alike(ByteView deflated, ByteView other, bool other_deflated, uint64_t limit,
                    DeflateWrapper wrapper) {
  constexpr size_t kPiece = 1 << 16;
  InflateReader a(deflated, wrapper);
  std::optional<InflateReader> b;
  if (other_deflated) b.emplace(other, wrapper);
  std::vector<uint8_t> x(kPiece), y(kPiece);
  for (size_t at = 0;;) {
    const size_t n = a.read(x.data(), kPiece, limit);
    if (b) {
      if (b->read(y.data(), n, limit) != n ||
          !std::equal(x.begin(), x.begin() + long(n), y.begin()))
        return false;
      if (n < kPiece) return b->read(y.data(), 1, limit) == 0;
    } else {
      if (other.size() - at < n ||
          !std::equal(x.begin(), x.begin() + long(n), other.begin() + long(at)))
        return false;
      at += n;
      if (n < kPiece) return at == other.size();
    }
  }
}

uint32_t crc32_update(uint32_t crc, ByteView bytes) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    const uInt n = uInt(std::min<size_t>(bytes.size() - pos, 1u << 30));
    crc = uint32_t(::crc32(crc, bytes.data() + pos, n));
    pos += n;
  }
  return crc;
}

uint32_t crc32_of(ByteView bytes) { return crc32_update(uint32_t(::crc32(0, nullptr, 0)), bytes); }

}  // namespace lighten
