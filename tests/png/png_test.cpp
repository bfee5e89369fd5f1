// PNG: re-filtered and re-deflated, every other chunk identical, pixels identical by libpng.
#include <gtest/gtest.h>
#include <zlib.h>

#include <ostream>

#include "codecs/deflate.h"
#include "formats/png/png_chunks.h"
#include "formats/png/png_filters.h"
#include "lighten/lighten.h"
#include "support/corpus.h"
#include "support/png_maker.h"

namespace lighten {
namespace {

std::vector<std::string> chunk_types(const Bytes& png) {
  std::vector<std::string> types;
  for (const PngChunk& c : read_png_chunks(png).chunks)
    if (!c.is("IDAT")) types.push_back(c.type_name());
  return types;
}

Bytes unfiltered(const Bytes& png) {
  const PngFile f = read_png_chunks(png);
  Bytes idat;
  for (const PngChunk& c : f.chunks)
    if (c.is("IDAT")) idat.insert(idat.end(), c.data.begin(), c.data.end());
  Bytes data = inflate_exact(idat, png_data_size(f.header, 1u << 30), DeflateWrapper::kZlib);
  png_unfilter(data, f.header);
  return data;
}

struct Variant {
  const char* name;
  testing::PngRecipe recipe;
};
// Names the variant in test listings (gtest would print the struct's bytes, pointers included).
void PrintTo(const Variant& v, std::ostream* os) { *os << v.name; }

class PngVariants : public ::testing::TestWithParam<Variant> {};

TEST_P(PngVariants, ShrinkKeepsChunksAndPixels) {
  const Bytes input = testing::make_png(GetParam().recipe);
  const Outcome o = optimize(input, Policy{});
  ASSERT_TRUE(o.replaced()) << reason_name(o.reason) << ": " << o.message;
  EXPECT_LT(o.bytes.size(), input.size());
  EXPECT_TRUE(o.quality.pixels_identical);
  EXPECT_EQ(chunk_types(o.bytes), chunk_types(input));
  EXPECT_EQ(unfiltered(o.bytes), unfiltered(input));
  const PngFile a = read_png_chunks(input), b = read_png_chunks(o.bytes);
  EXPECT_EQ(a.header.color_type, b.header.color_type);
  EXPECT_EQ(a.header.bit_depth, b.header.bit_depth);
  EXPECT_EQ(a.header.interlace, b.header.interlace);
  EXPECT_FALSE(optimize(o.bytes, Policy{}).replaced()) << "a second pass must find nothing";
}

INSTANTIATE_TEST_SUITE_P(
    Png, PngVariants,
    ::testing::Values(Variant{"rgb8", {.text = ""}},
                      Variant{"rgba16_interlaced",
                              {.color_type = PNG_COLOR_TYPE_RGB_ALPHA,
                               .bit_depth = 16,
                               .interlaced = true,
                               .text = ""}},
                      Variant{"gray8_text", {.color_type = PNG_COLOR_TYPE_GRAY, .text = "kept"}},
                      Variant{"palette4",
                              {.width = 37,
                               .height = 29,
                               .color_type = PNG_COLOR_TYPE_PALETTE,
                               .bit_depth = 4,
                               .text = ""}},
                      Variant{"palette8_odd_interlaced",
                              {.width = 61,
                               .height = 45,
                               .color_type = PNG_COLOR_TYPE_PALETTE,
                               .interlaced = true,
                               .text = ""}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(PngFilters, EveryStrategyRoundTrips) {
  const Bytes input =
      testing::make_png({.width = 33, .height = 17, .interlaced = true, .text = ""});
  const PngFile f = read_png_chunks(input);
  const Bytes raw = unfiltered(input);
  for (PngFilterStrategy s : kAllPngStrategies) {
    Bytes filtered = png_filter(raw, f.header, s);
    png_unfilter(filtered, f.header);
    EXPECT_EQ(filtered, raw) << int(s);
  }
}

TEST(PngFilters, AdamPassSizes) {
  PngHeader h{.width = 1, .height = 1, .bit_depth = 8, .color_type = 2, .interlace = 1};
  const auto passes = png_passes(h);
  ASSERT_EQ(passes.size(), 7u);
  EXPECT_EQ(passes[0].width, 1u);
  for (size_t i = 1; i < 7; ++i) EXPECT_EQ(uint64_t(passes[i].width) * passes[i].height, 0u);
  EXPECT_EQ(png_data_size(h, 100), 4u);
  PngHeader big{.width = 0x7FFFFFFF, .height = 0x7FFFFFFF, .bit_depth = 16, .color_type = 6};
  EXPECT_THROW(png_data_size(big, 1u << 30), FormatError);
}

TEST(PngMalformed, BadCrcApngAndTruncation) {
  Bytes input = testing::make_png({});
  Bytes bad_crc = input;
  bad_crc[8 + 8 + 13] ^= 1;  // IHDR's CRC
  EXPECT_EQ(optimize(bad_crc, Policy{}).reason, Reason::kCorrupt);

  Bytes truncated(input.begin(), input.begin() + long(input.size() / 2));
  const Outcome t = optimize(truncated, Policy{});
  EXPECT_EQ(t.action, Action::kKept);
  EXPECT_TRUE(t.reason == Reason::kTruncated || t.reason == Reason::kCorrupt);

  // An acTL chunk after IHDR makes it an APNG.
  Bytes apng(input.begin(), input.begin() + 33);
  const uint8_t actl[8] = {0, 0, 0, 1, 0, 0, 0, 0};
  append_png_chunk(apng, "acTL", actl);
  apng.insert(apng.end(), input.begin() + 33, input.end());
  EXPECT_EQ(optimize(apng, Policy{}).reason, Reason::kUnsupportedVariant);

  // C2PA Content Credentials (a caBX chunk) sign the file's bytes.
  Bytes signed_png(input.begin(), input.begin() + 33);
  const uint8_t jumbf[8] = {0, 0, 0, 8, 'j', 'u', 'm', 'b'};
  append_png_chunk(signed_png, "caBX", jumbf);
  signed_png.insert(signed_png.end(), input.begin() + 33, input.end());
  EXPECT_EQ(optimize(signed_png, Policy{}).reason, Reason::kSigned);

  // A header declaring more rows than the image data holds: the reason says it is the image
  // data that falls short of the header (it spoke of a "recorded size" of the stream).
  Bytes taller = input;
  taller[8 + 8 + 4 + 2] += 1;  // height + 256 rows
  const uLong crc = crc32(0, taller.data() + 12, 17);
  for (int i = 0; i < 4; ++i) taller[29 + size_t(i)] = uint8_t(crc >> (24 - 8 * i));
  const Outcome short_data = optimize(taller, Policy{});
  EXPECT_EQ(short_data.reason, Reason::kCorrupt) << short_data.message;
  EXPECT_NE(short_data.message.find("image data for"), std::string::npos) << short_data.message;
  EXPECT_NE(short_data.message.find("what the rows need"), std::string::npos) << short_data.message;
}

// The verifier compares text chunks as bytes and has libpng skip them: a comment that inflates
// to 24 MB, and a 9 MB uncompressed one (beyond libpng's default 8 MB chunk limit, which would
// refuse the file), are kept byte for byte and the output verifies.
TEST(PngMalformed, HugeCommentsAreKeptAndVerified) {
  const Bytes input = testing::make_png({});
  Bytes ztxt = {'C', 'o', 'm', 'm', 'e', 'n', 't', 0, 0};
  const Bytes comment = deflate_at_level(Bytes(24u << 20, 'a'), 9, DeflateWrapper::kZlib);
  ztxt.insert(ztxt.end(), comment.begin(), comment.end());
  Bytes text = {'C', 'o', 'm', 'm', 'e', 'n', 't', 0};
  text.resize(text.size() + (9u << 20), 'b');
  Policy any_gain;  // the image data saves bytes, not a share of 9 MB
  any_gain.min_gain_ratio = 0;
  for (const auto& [type, data] : {std::pair{"zTXt", &ztxt}, std::pair{"tEXt", &text}}) {
    Bytes with_comment(input.begin(), input.begin() + 33);  // signature and IHDR
    append_png_chunk(with_comment, type, *data);
    with_comment.insert(with_comment.end(), input.begin() + 33, input.end());
    const Outcome o = optimize(with_comment, any_gain);
    ASSERT_TRUE(o.replaced()) << type << ": " << o.message;
    bool kept = false;
    for (const PngChunk& c : read_png_chunks(o.bytes).chunks)
      kept |= c.is(type) && std::equal(c.data.begin(), c.data.end(), data->begin(), data->end());
    EXPECT_TRUE(kept) << type;
  }
}

TEST(PngCorpus, EveryPngShrinksLosslesslyOrSaysWhy) {
  auto files = testing::corpus_files("png");
  LIGHTEN_REQUIRE_CORPUS(files, "png");
  for (const auto& b : testing::corpus_files("broken"))
    if (b.filename().string().starts_with("png_")) files.push_back(b);
  uint64_t before = 0, after = 0;
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    const Bytes input = testing::read_file(f);
    const Outcome o = optimize(input, Policy{});
    before += input.size();
    after += o.replaced() ? o.bytes.size() : input.size();
    if (!o.replaced()) {
      EXPECT_FALSE(o.message.empty());
      continue;
    }
    EXPECT_TRUE(o.quality.pixels_identical);
    EXPECT_EQ(chunk_types(o.bytes), chunk_types(input));
    EXPECT_EQ(unfiltered(o.bytes), unfiltered(input));
  }
  std::printf("png: %llu -> %llu bytes (%.2f%% saved)\n", (unsigned long long)before,
              (unsigned long long)after, 100.0 * double(before - after) / double(before));
}

}  // namespace
}  // namespace lighten
