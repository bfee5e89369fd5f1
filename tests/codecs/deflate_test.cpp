// Deflate back-ends: zopfli compresses a megabyte at a time, asking between megabytes whether
// the time budget is spent, and writes what zopfli's own one-call compressor writes.
#include <gtest/gtest.h>
#include <zopfli/zopfli.h>

#include <cstdlib>
#include <string>

#include "codecs/deflate.h"
#include "core/errors.h"

namespace lighten {
namespace {

// Words drawn from a small vocabulary: compressible, but not so regular that zopfli's
// matches become trivial.
Bytes text_like(size_t size) {
  static const char* const kWords[] = {"claim ", "photo ", "policy ", "vehicle ", "damage ",
                                       "front ", "rear ",  "left ",   "right ",   "2026 "};
  Bytes out;
  out.reserve(size);
  uint32_t state = 12345;
  while (out.size() < size) {
    state = state * 1103515245u + 12345u;
    const std::string word = kWords[(state >> 16) % 10];
    out.insert(out.end(), word.begin(), word.end());
    if ((state >> 8) % 7 == 0) out.push_back(uint8_t('0' + (state >> 20) % 10));
  }
  out.resize(size);
  return out;
}

Bytes zopfli_in_one_call(ByteView input, DeflateWrapper wrapper) {
  ZopfliOptions options;
  ZopfliInitOptions(&options);
  options.numiterations = 1;
  unsigned char* out = nullptr;
  size_t size = 0;
  ZopfliCompress(&options,
                 wrapper == DeflateWrapper::kZlib ? ZOPFLI_FORMAT_ZLIB : ZOPFLI_FORMAT_DEFLATE,
                 input.data(), input.size(), &out, &size);
  Bytes result(out, out + size);
  std::free(out);
  return result;
}

TEST(Deflate, ZopfliByMegabytesWritesWhatZopfliWritesInOneCall) {
  // A megabyte block and a short second one: the blocks must join as zopfli joins them.
  const Bytes input = text_like(1'000'100);
  for (const DeflateWrapper wrapper : {DeflateWrapper::kZlib, DeflateWrapper::kRaw}) {
    int asked = 0;
    const Bytes ours = zopfli_deflate(input, 1, wrapper, [&asked] {
      ++asked;
      return false;
    });
    EXPECT_EQ(asked, 2);
    EXPECT_EQ(ours, zopfli_in_one_call(input, wrapper));
    EXPECT_EQ(inflate_exact(ours, input.size(), wrapper), input);
  }
}

TEST(Deflate, ZopfliStopsWhenTheTimeIsSpent) {
  const Bytes input = text_like(2'100'000);
  int asked = 0;
  try {
    // Effort 8 goes through zopfli too, whatever libdeflate would give.
    deflate_bytes(input, 8, DeflateWrapper::kZlib, [&asked] { return ++asked == 2; });
    ADD_FAILURE() << "the compression went on after the time was spent";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.reason(), Reason::kLimitExceeded);
  }
  EXPECT_EQ(asked, 2);
}

// Two streams (or a stream and bytes) are compared as they inflate: the same bytes however
// deflated, and any difference, a byte or a length, told apart.
TEST(Deflate, StreamsAreComparedAsTheyInflate) {
  const Bytes text = text_like(300000);
  Bytes other = text;
  other[123456] ^= 1;
  Bytes shorter(text.begin(), text.end() - 1);
  const auto zlib = [](const Bytes& b, int level) {
    return deflate_at_level(b, level, DeflateWrapper::kZlib);
  };
  constexpr uint64_t kLimit = 1 << 30;
  EXPECT_TRUE(inflates_alike(zlib(text, 1), zlib(text, 9), true, kLimit, DeflateWrapper::kZlib));
  EXPECT_FALSE(inflates_alike(zlib(text, 1), zlib(other, 9), true, kLimit, DeflateWrapper::kZlib));
  EXPECT_FALSE(
      inflates_alike(zlib(text, 1), zlib(shorter, 9), true, kLimit, DeflateWrapper::kZlib));
  EXPECT_FALSE(
      inflates_alike(zlib(shorter, 1), zlib(text, 9), true, kLimit, DeflateWrapper::kZlib));
  EXPECT_TRUE(inflates_alike(zlib(text, 6), text, false, kLimit, DeflateWrapper::kZlib));
  EXPECT_FALSE(inflates_alike(zlib(text, 6), other, false, kLimit, DeflateWrapper::kZlib));
  EXPECT_FALSE(inflates_alike(zlib(text, 6), shorter, false, kLimit, DeflateWrapper::kZlib));
  EXPECT_FALSE(inflates_alike(zlib(shorter, 6), text, false, kLimit, DeflateWrapper::kZlib));
  EXPECT_TRUE(inflates_alike(zlib({}, 6), zlib({}, 1), true, kLimit, DeflateWrapper::kZlib));
  EXPECT_THROW(inflates_alike(zlib(text, 6), text, false, 1000, DeflateWrapper::kZlib),
               FormatError);
  const Bytes whole = zlib(text, 6);
  const Bytes cut(whole.begin(), whole.begin() + 1000);
  EXPECT_THROW(inflates_alike(cut, text, false, kLimit, DeflateWrapper::kZlib), FormatError);
}

TEST(Deflate, EmptyInputRoundTripsThroughEveryBackEnd) {
  for (const int effort : {1, 5, 8})
    for (const DeflateWrapper wrapper : {DeflateWrapper::kZlib, DeflateWrapper::kRaw})
      EXPECT_TRUE(inflate_exact(deflate_bytes({}, effort, wrapper), 0, wrapper).empty());
}

}  // namespace
}  // namespace lighten
