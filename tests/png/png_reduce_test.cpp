// --png-reduce: each lossless reduction on its own, the chunks that must follow it, the cases
// where it must be refused, and that the default leaves colour type and depth alone.
#include <gtest/gtest.h>
#include <zlib.h>

#include <functional>

#include "codecs/deflate.h"
#include "formats/png/png_chunks.h"
#include "formats/png/png_filters.h"
#include "formats/png/png_format.h"
#include "formats/png/png_reduce.h"
#include "lighten/lighten.h"
#include "png/png_image_maker.h"
#include "support/corpus.h"
#include "support/direct_context.h"

namespace lighten {
namespace {

using testing::PngPicture;

PngPicture picture(uint32_t width, uint32_t height, int color_type, int bit_depth = 8,
                   bool interlaced = false) {
  PngPicture p;
  p.width = width;
  p.height = height;
  p.color_type = color_type;
  p.bit_depth = bit_depth;
  p.interlaced = interlaced;
  return p;
}

Policy reducing() {
  Policy p;
  p.png_reduce = true;
  return p;
}

Bytes unfiltered_rows(const PngFile& f) {
  Bytes idat;
  for (const PngChunk& c : f.chunks)
    if (c.is("IDAT")) idat.insert(idat.end(), c.data.begin(), c.data.end());
  Bytes data = inflate_exact(idat, png_data_size(f.header, 1u << 30), DeflateWrapper::kZlib);
  png_unfilter(data, f.header);
  return data;
}

std::vector<PngLayout> layouts_of(const Bytes& png_bytes) {
  const PngFile f = read_png_chunks(png_bytes);
  return reduced_png_layouts(f, unfiltered_rows(f));
}

const PngLayout* layout_with_type(const std::vector<PngLayout>& layouts, int color_type) {
  for (const PngLayout& l : layouts)
    if (l.header.color_type == color_type) return &l;
  return nullptr;
}

// The data of the first chunk of `type` in a file, or nullopt.
std::optional<Bytes> chunk_data(const Bytes& png_bytes, const char* type) {
  for (const PngChunk& c : read_png_chunks(png_bytes).chunks)
    if (c.is(type)) return Bytes(c.data.begin(), c.data.end());
  return std::nullopt;
}

// A layout written out with its rows simply deflated: the file a reduction would make.
Bytes file_of(const PngLayout& layout) {
  return assemble_png(layout, deflate_at_level(layout.raw, 6, DeflateWrapper::kZlib));
}

// Checks one layout the way a reader sees it: same RGBA16 pixels, and a valid file.
void expect_same_pixels(const Bytes& input, const PngLayout& layout) {
  const Bytes output = file_of(layout);
  const std::vector<uint8_t> before = testing::decode_rgba16(input);
  ASSERT_FALSE(before.empty());
  EXPECT_EQ(testing::decode_rgba16(output), before) << layout.description;
}

// width x height pixels of `channels` samples from a function of (x, y, channel).
template <typename Sample>
std::vector<uint16_t> pixels(uint32_t w, uint32_t h, int channels, Sample sample) {
  std::vector<uint16_t> out;
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x)
      for (int c = 0; c < channels; ++c) out.push_back(uint16_t(sample(x, y, c)));
  return out;
}

// Many colours (no palette can hold them), all opaque.
uint16_t many_colours(uint32_t x, uint32_t y, int c) {
  return uint16_t((x * 7 + y * 3 + c * 50) % 256);
}

TEST(PngReduce, SixteenBitsWithEqualBytesBecomeEight) {
  PngPicture p = picture(40, 30, PNG_COLOR_TYPE_RGB, 16);
  p.samples =
      pixels(40, 30, 3, [](uint32_t x, uint32_t y, int c) { return many_colours(x, y, c) * 257; });
  p.background = {257 * 10, 257 * 20, 257 * 30};
  const Bytes input = testing::write_picture(p);
  const auto layouts = layouts_of(input);
  const PngLayout* rgb = layout_with_type(layouts, 2);
  ASSERT_NE(rgb, nullptr);
  EXPECT_EQ(rgb->header.bit_depth, 8);
  expect_same_pixels(input, *rgb);
  EXPECT_EQ(chunk_data(file_of(*rgb), "bKGD"), (Bytes{0, 10, 0, 20, 0, 30}));

  // One sample whose two bytes differ keeps all 16 bits.
  p.samples[5] = 0x1234;
  EXPECT_EQ(layout_with_type(layouts_of(testing::write_picture(p)), 2), nullptr);
}

TEST(PngReduce, OpaqueAlphaIsDropped) {
  PngPicture p = picture(40, 30, PNG_COLOR_TYPE_RGBA, 8);
  p.samples = pixels(40, 30, 4, [](uint32_t x, uint32_t y, int c) {
    return c == 3 ? 255 : many_colours(x, y, c);
  });
  p.significant = {5, 6, 5, 8};
  const Bytes input = testing::write_picture(p);
  const auto layouts = layouts_of(input);
  const PngLayout* rgb = layout_with_type(layouts, 2);
  ASSERT_NE(rgb, nullptr);
  expect_same_pixels(input, *rgb);
  EXPECT_EQ(chunk_data(file_of(*rgb), "sBIT"), (Bytes{5, 6, 5}));
  EXPECT_FALSE(chunk_data(file_of(*rgb), "tRNS"));
}

TEST(PngReduce, OneFullyTransparentColourBecomesAColourKey) {
  PngPicture p = picture(40, 30, PNG_COLOR_TYPE_RGBA, 8);
  p.samples = pixels(40, 30, 4, [](uint32_t x, uint32_t y, int c) -> uint16_t {
    const bool hole = x < 4 && y < 4;
    if (c == 3) return hole ? 0 : 255;
    return hole ? 7 : (many_colours(x, y, c) | 1) & 0xFE;  // even: never the key's 7
  });
  const Bytes input = testing::write_picture(p);
  const auto rgb_layouts = layouts_of(input);
  const PngLayout* rgb = layout_with_type(rgb_layouts, 2);
  ASSERT_NE(rgb, nullptr);
  expect_same_pixels(input, *rgb);
  EXPECT_EQ(chunk_data(file_of(*rgb), "tRNS"), (Bytes{0, 7, 0, 7, 0, 7}));

  // Two transparent colours cannot share one colour key.
  p.samples[0] = 9;
  EXPECT_EQ(layout_with_type(layouts_of(testing::write_picture(p)), 2), nullptr);
}

// A palette's alpha comes from tRNS, which sBIT has no entry for: when the palette becomes grey
// and alpha, all of the alpha's bits count (an sBIT of 1 would tell readers to shift 128 to 0).
TEST(PngReduce, AlphaFromAPaletteKeepsEveryBitInSbit) {
  PngPicture p = picture(256, 4, PNG_COLOR_TYPE_PALETTE, 8);
  for (int i = 0; i < 256; ++i) {
    p.palette.push_back({png_byte(i), png_byte(i), png_byte(i)});
    p.palette_alpha.push_back(uint8_t(i));
  }
  p.significant = {8, 8, 8};
  p.samples = pixels(256, 4, 1, [](uint32_t x, uint32_t, int) { return x; });
  const Bytes input = testing::write_picture(p);
  const auto layouts = layouts_of(input);
  const PngLayout* grey_alpha = layout_with_type(layouts, 4);
  ASSERT_NE(grey_alpha, nullptr);
  expect_same_pixels(input, *grey_alpha);
  EXPECT_EQ(chunk_data(file_of(*grey_alpha), "sBIT"), (Bytes{8, 8}));
}

// Layouts are ranked by their whole file: 256 colours in identical rows pack to almost nothing
// as RGB, and a palette's 768-byte PLTE would make the reduced file the larger one.
TEST(PngReduce, APaletteThatCostsMoreThanItSavesIsNotTaken) {
  PngPicture p = picture(256, 256, PNG_COLOR_TYPE_RGB, 8);
  p.samples = pixels(256, 256, 3, [](uint32_t x, uint32_t, int c) { return (x * (c + 3)) % 256; });
  const Bytes input = testing::write_picture(p);
  const Outcome plain = optimize(input, Policy{});
  const Outcome reduced = optimize(input, reducing());
  ASSERT_TRUE(plain.replaced()) << plain.message;
  ASSERT_TRUE(reduced.replaced()) << reduced.message;
  EXPECT_LE(reduced.bytes.size(), plain.bytes.size()) << reduced.detail;
}

// A palette that lists one colour twice cannot become another palette: rows are written by
// colour and could not say which of the two entries a pixel named. It keeps its form (it was
// renumbered by use, which changed the indices a loader reads).
TEST(PngReduce, APaletteWithARepeatedEntryKeepsItsNumbers) {
  PngPicture p = picture(160, 120, PNG_COLOR_TYPE_PALETTE, 8);
  p.palette = {{100, 0, 0}, {100, 0, 0}, {37, 0, 5}, {201, 9, 9}};
  p.samples = pixels(160, 120, 1, [](uint32_t x, uint32_t y, int) { return (x / 7 + y / 5) % 4; });
  const Bytes input = testing::write_picture(p);
  EXPECT_EQ(layout_with_type(layouts_of(input), 3), nullptr);
  const Outcome first = optimize(input, reducing());
  ASSERT_TRUE(first.replaced()) << first.message;
  EXPECT_EQ(unfiltered_rows(read_png_chunks(first.bytes)), unfiltered_rows(read_png_chunks(input)));
  EXPECT_FALSE(optimize(first.bytes, reducing()).replaced());
}

// A palette of greys became grey too, its levels read where the indices were: [white, black]
// became 1-bit grey with every pixel inverted, four greys read 0/85/170/255 for 0-3. Only a
// palette whose every grey is its own index may become grey.
TEST(PngReduce, AGreyPaletteBecomesGreyOnlyWhereItsGreysAreItsIndices) {
  PngPicture p = picture(40, 8, PNG_COLOR_TYPE_PALETTE, 8);
  p.samples = pixels(40, 8, 1, [](uint32_t x, uint32_t, int) { return x % 2; });
  p.palette = {{255, 255, 255}, {0, 0, 0}};
  EXPECT_EQ(layout_with_type(layouts_of(testing::write_picture(p)), 0), nullptr);
  p.palette = {{0, 0, 0}, {85, 85, 85}, {170, 170, 170}, {255, 255, 255}};
  EXPECT_EQ(layout_with_type(layouts_of(testing::write_picture(p)), 0), nullptr);
  p.palette = {{0, 0, 0}, {1, 1, 1}};
  const Bytes identity = testing::write_picture(p);
  const auto layouts = layouts_of(identity);
  const PngLayout* grey = layout_with_type(layouts, 0);
  ASSERT_NE(grey, nullptr);
  expect_same_pixels(identity, *grey);
  EXPECT_EQ(unfiltered_rows(read_png_chunks(identity)), grey->raw);  // the same numbers
}

TEST(PngReduce, GreyRgbBecomesGrey) {
  PngPicture p = picture(64, 20, PNG_COLOR_TYPE_RGB, 8);
  p.samples = pixels(64, 20, 3, [](uint32_t x, uint32_t y, int) { return (x * 3 + y) % 256; });
  p.background = {30, 30, 30};
  p.significant = {6, 7, 5};
  const Bytes input = testing::write_picture(p);
  const auto grey_layouts = layouts_of(input);
  const PngLayout* grey = layout_with_type(grey_layouts, 0);
  ASSERT_NE(grey, nullptr);
  EXPECT_EQ(grey->header.bit_depth, 8);
  expect_same_pixels(input, *grey);
  EXPECT_EQ(chunk_data(file_of(*grey), "bKGD"), (Bytes{0, 30}));
  EXPECT_EQ(chunk_data(file_of(*grey), "sBIT"), (Bytes{7}));
}

// Grey pixels under a background that is not grey: grey cannot hold the bKGD, RGB still drops
// the opaque alpha (the reduction was given up whole before).
TEST(PngReduce, GreyPixelsWithAColouredBackgroundStayRgbAndLoseTheAlpha) {
  PngPicture p = picture(64, 20, PNG_COLOR_TYPE_RGBA, 8);
  p.samples = pixels(
      64, 20, 4, [](uint32_t x, uint32_t y, int c) { return c == 3 ? 255u : (x * 3 + y) % 256; });
  p.background = {200, 10, 10};
  const Bytes input = testing::write_picture(p);
  const auto layouts = layouts_of(input);
  EXPECT_EQ(layout_with_type(layouts, 0), nullptr);
  const PngLayout* rgb = layout_with_type(layouts, 2);
  ASSERT_NE(rgb, nullptr);
  EXPECT_EQ(rgb->header.bit_depth, 8);
  expect_same_pixels(input, *rgb);
  EXPECT_EQ(chunk_data(file_of(*rgb), "bKGD"), (Bytes{0, 200, 0, 10, 0, 10}));
}

// 16-bit pixels that fit 8 bits under a background that does not: PLTE holds 8 bits a channel,
// so no palette layout is offered (its bKGD was rounded from 0x12ff to 0x1212, and a second run
// then reduced the output again); grey stays 16-bit with the background exact.
TEST(PngReduce, ABackgroundFinerThanAPaletteHoldsKeepsThePaletteAway) {
  PngPicture p = picture(64, 20, PNG_COLOR_TYPE_GRAY, 16);
  p.samples = pixels(64, 20, 1, [](uint32_t x, uint32_t, int) { return (x % 4) * 257 * 60; });
  p.background = {0x12ff};
  const Bytes input = testing::write_picture(p);
  const auto layouts = layouts_of(input);
  EXPECT_EQ(layout_with_type(layouts, 3), nullptr);
  for (const PngLayout& l : layouts) {
    expect_same_pixels(input, l);
    EXPECT_EQ(chunk_data(file_of(l), "bKGD"), (Bytes{0x12, 0xff})) << int(l.header.color_type);
  }
  const Outcome first = optimize(input, reducing());
  if (first.replaced()) {
    EXPECT_EQ(chunk_data(first.bytes, "bKGD"), (Bytes{0x12, 0xff}));
    EXPECT_FALSE(optimize(first.bytes, reducing()).replaced());
  }
  // The verifier compares the background's colour across a change of form, which the pixel
  // comparison cannot see: 8-bit grey with bKGD 0x12 is another background than 0x12ff.
  PngPicture rounded = picture(64, 20, PNG_COLOR_TYPE_GRAY, 8);
  rounded.samples = pixels(64, 20, 1, [](uint32_t x, uint32_t, int) { return (x % 4) * 60; });
  rounded.background = {0x12};
  testing::DirectContext context(reducing());
  const Verdict v = verify_png(input, testing::write_picture(rounded), context);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.problem.find("bKGD"), std::string::npos) << v.problem;
  p.background = {0x1212};
  EXPECT_TRUE(verify_png(testing::write_picture(p), testing::write_picture(rounded), context).ok);
}

// The bytes of `png` with chunk `type`'s data changed by `change` and its CRC made right.
Bytes with_chunk_changed(Bytes png, const char* type, const std::function<void(uint8_t*)>& change) {
  for (size_t at = 8; at + 12 <= png.size();) {
    const size_t length =
        size_t(png[at]) << 24 | size_t(png[at + 1]) << 16 | size_t(png[at + 2]) << 8 | png[at + 3];
    if (std::equal(type, type + 4, png.begin() + long(at + 4))) {
      change(png.data() + at + 8);
      const uint32_t crc = uint32_t(crc32(0, png.data() + at + 4, uInt(length + 4)));
      for (int i = 0; i < 4; ++i) png[at + 8 + length + size_t(i)] = uint8_t(crc >> (24 - 8 * i));
      break;
    }
    at += 12 + length;
  }
  return png;
}

// The file's chunks, IEND last, as (type, data), edited by `edit` and written again.
Bytes with_chunks_edited(
    const Bytes& png,
    const std::function<void(std::vector<std::pair<std::string, Bytes>>&)>& edit) {
  std::vector<std::pair<std::string, Bytes>> chunks;
  for (const PngChunk& c : read_png_chunks(png).chunks)
    chunks.emplace_back(std::string(c.type.data(), 4), Bytes(c.data.begin(), c.data.end()));
  edit(chunks);
  Bytes out(kPngSignature, kPngSignature + 8);
  for (const auto& [type, data] : chunks) append_png_chunk(out, type.c_str(), data);
  return out;
}

// A tRNS that readers read differently (a grey key past the bit depth, which libpng compares
// in its low bits only; a palette tRNS before PLTE or after IDAT, which libpng ignores; a
// palette longer than the depth indexes, which libpng cuts short before it reads tRNS) reduces
// nothing: the file is re-deflated in its own form, where it used to fail verification as a
// lighten bug.
TEST(PngReduce, ATransparencyReadersDisagreeOnReducesNothing) {
  PngPicture grey = picture(32, 32, PNG_COLOR_TYPE_GRAY, 8);
  grey.samples = pixels(32, 32, 1, [](uint32_t x, uint32_t y, int) { return (x * y) % 4 * 85; });
  grey.colour_key = {0x55};
  const Bytes past_depth = with_chunk_changed(testing::write_picture(grey), "tRNS",
                                              [](uint8_t* data) { data[0] = 0x01; });
  PngPicture indexed = picture(32, 32, PNG_COLOR_TYPE_PALETTE, 8);
  indexed.samples = pixels(32, 32, 1, [](uint32_t x, uint32_t, int) { return x % 4; });
  indexed.palette = {{0, 0, 0}, {80, 80, 80}, {160, 160, 160}, {240, 240, 240}};
  indexed.palette_alpha = {0, 255, 255, 255};
  Bytes before_palette = testing::write_picture(indexed);
  {  // tRNS moved before PLTE
    const PngFile f = read_png_chunks(before_palette);
    ByteView plte, trns;
    for (const PngChunk& c : f.chunks) {
      if (c.is("PLTE")) plte = c.whole;
      if (c.is("tRNS")) trns = c.whole;
    }
    ASSERT_EQ(plte.data() + plte.size(), trns.data());
    Bytes swapped(before_palette.begin(),
                  before_palette.begin() + (plte.data() - before_palette.data()));
    swapped.insert(swapped.end(), trns.begin(), trns.end());
    swapped.insert(swapped.end(), plte.begin(), plte.end());
    swapped.insert(swapped.end(), trns.end(), ByteView(before_palette).end());
    before_palette = swapped;
  }
  const Bytes after_data = with_chunks_edited(testing::write_picture(indexed), [](auto& chunks) {
    const auto trns =
        std::find_if(chunks.begin(), chunks.end(), [](const auto& c) { return c.first == "tRNS"; });
    const auto moved = *trns;
    chunks.erase(trns);
    chunks.insert(chunks.end() - 1, moved);  // before IEND
  });
  PngPicture bilevel = picture(32, 32, PNG_COLOR_TYPE_PALETTE, 1);
  bilevel.samples = pixels(32, 32, 1, [](uint32_t x, uint32_t y, int) { return (x + y) % 2; });
  bilevel.palette = {{0, 0, 0}, {255, 255, 255}};
  bilevel.palette_alpha = {0, 255};
  const Bytes long_palette = with_chunks_edited(testing::write_picture(bilevel), [](auto& chunks) {
    for (auto& [type, data] : chunks)
      if (type == "PLTE")
        data = {0, 0, 0, 255, 255, 255, 9, 9, 9, 7, 7, 7};  // four entries
      else if (type == "tRNS")
        data = {0, 255, 128};
  });
  // Two tRNS chunks: libpng takes the first valid one, Pillow the last.
  PngPicture keyed = picture(32, 32, PNG_COLOR_TYPE_RGB, 8);
  keyed.samples = pixels(32, 32, 3, [](uint32_t x, uint32_t y, int) { return (x + y) % 2 * 255; });
  keyed.colour_key = {0, 0, 0};
  const Bytes two_keys = with_chunks_edited(testing::write_picture(keyed), [](auto& chunks) {
    const auto trns =
        std::find_if(chunks.begin(), chunks.end(), [](const auto& c) { return c.first == "tRNS"; });
    chunks.insert(trns + 1, {"tRNS", Bytes{0, 255, 0, 255, 0, 255}});
  });
  const Bytes short_then_valid = with_chunks_edited(testing::write_picture(grey), [](auto& c) {
    const auto trns =
        std::find_if(c.begin(), c.end(), [](const auto& chunk) { return chunk.first == "tRNS"; });
    c.insert(trns, {"tRNS", Bytes{0x55}});
  });
  // A 16-bit colour key: Pillow matches it against the samples' high bytes, libpng against
  // whole values.
  PngPicture deep = picture(32, 32, PNG_COLOR_TYPE_RGB, 16);
  deep.samples = pixels(32, 32, 3, [](uint32_t x, uint32_t y, int c) { return x * 1000 + y + c; });
  deep.colour_key = {5, 6, 7};
  const Bytes key_16 = testing::write_picture(deep);
  for (const auto& [name, input] : std::vector<std::pair<const char*, Bytes>>{
           {"key past the depth", past_depth},
           {"tRNS before PLTE", before_palette},
           {"tRNS after IDAT", after_data},
           {"palette past the depth", long_palette},
           {"two tRNS", two_keys},
           {"a short tRNS, then a valid one", short_then_valid},
           {"a 16-bit key", key_16}}) {
    SCOPED_TRACE(name);
    const Outcome o = optimize(input, reducing());
    EXPECT_NE(o.reason, Reason::kVerifyFailed) << o.message;
    EXPECT_EQ(layouts_of(input).size(), 0u);
    if (o.replaced()) {
      EXPECT_EQ(read_png_chunks(o.bytes).header.color_type,
                read_png_chunks(input).header.color_type);
    }
  }
}

// An alpha channel with one fully transparent colour became a colour key whatever the depth:
// at 16 bits Pillow then found no pixel transparent.
TEST(PngReduce, SixteenBitSamplesKeepTheirAlphaRatherThanGainAKey) {
  PngPicture p = picture(40, 30, PNG_COLOR_TYPE_RGBA, 16);
  p.samples = pixels(40, 30, 4, [](uint32_t x, uint32_t y, int c) -> uint16_t {
    const bool hole = x < 4 && y < 4;
    if (c == 3) return hole ? 0 : 65535;
    return hole ? 5 + c : 1000 + x * 300 + y * 7 + c;  // not multiples of 257
  });
  const Bytes input = testing::write_picture(p);
  for (const PngLayout& l : layouts_of(input)) {
    EXPECT_FALSE(chunk_data(file_of(l), "tRNS").has_value()) << l.description;
    EXPECT_NE(l.header.color_type, 2) << l.description;
  }
}

TEST(PngReduce, GreyLevelsThatFitFewerBitsGetThem) {
  PngPicture p = picture(30, 9, PNG_COLOR_TYPE_GRAY, 8);
  p.samples = pixels(30, 9, 1, [](uint32_t x, uint32_t y, int) { return ((x + y) % 4) * 85; });
  const Bytes input = testing::write_picture(p);
  const auto grey_layouts = layouts_of(input);
  const PngLayout* grey = layout_with_type(grey_layouts, 0);
  ASSERT_NE(grey, nullptr);
  EXPECT_EQ(grey->header.bit_depth, 2);
  expect_same_pixels(input, *grey);
}

// Pillow gives 16-bit grey as 16-bit numbers (mode I, which convert('RGB') clips to white) and
// every other 16-bit layout as 8-bit: no reduction makes 16-bit grey, or takes it away.
TEST(PngReduce, SixteenBitGreyIsNeitherMadeNorReduced) {
  PngPicture rgb = picture(64, 16, PNG_COLOR_TYPE_RGB, 16);
  rgb.samples = pixels(64, 16, 3, [](uint32_t x, uint32_t y, int) { return x * 1000 + y * 7; });
  for (const PngLayout& l : layouts_of(testing::write_picture(rgb)))
    EXPECT_FALSE(l.header.color_type == 0 && l.header.bit_depth == 16) << l.description;
  PngPicture rgba = picture(64, 16, PNG_COLOR_TYPE_RGBA, 16);
  rgba.samples = pixels(
      64, 16, 4, [](uint32_t x, uint32_t y, int c) { return c == 3 ? 65535u : x * 1000 + y * 7; });
  for (const PngLayout& l : layouts_of(testing::write_picture(rgba))) {
    EXPECT_FALSE(l.header.color_type == 0 && l.header.bit_depth == 16) << l.description;
    expect_same_pixels(testing::write_picture(rgba), l);
  }
  // 16-bit grey whose levels fit 8 bits (or 2) stays 16-bit grey.
  PngPicture grey = picture(64, 16, PNG_COLOR_TYPE_GRAY, 16);
  grey.samples = pixels(64, 16, 1, [](uint32_t x, uint32_t, int) { return x % 4 * 0x5555; });
  EXPECT_TRUE(layouts_of(testing::write_picture(grey)).empty());
}

// Pillow compares a 1-, 2- or 4-bit grey image's key with samples scaled to 8 bits, so nothing
// would be transparent there: a key keeps grey at 8 bits.
TEST(PngReduce, AGreyColourKeyKeepsEightBits) {
  PngPicture p = picture(32, 32, PNG_COLOR_TYPE_GRAY, 8);
  p.samples = pixels(32, 32, 1, [](uint32_t x, uint32_t y, int) { return 17 * ((x + y) % 16); });
  p.colour_key = {51};
  const Bytes input = testing::write_picture(p);
  for (const PngLayout& l : layouts_of(input))
    EXPECT_FALSE(l.header.color_type == 0 && l.header.bit_depth < 8) << l.description;
  // Without the key, the same levels take 4 bits.
  p.colour_key.clear();
  const auto layouts = layouts_of(testing::write_picture(p));
  const PngLayout* grey = layout_with_type(layouts, 0);
  ASSERT_NE(grey, nullptr);
  EXPECT_EQ(grey->header.bit_depth, 4);
}

// A chunk's length stops at 2^31 - 1: image data beyond it is written in several IDATs.
TEST(PngReduce, ImageDataIsSplitIntoChunksReadersAccept) {
  PngPicture p = picture(40, 30, PNG_COLOR_TYPE_RGB, 8);
  p.samples = pixels(40, 30, 3, many_colours);
  const Bytes input = testing::write_picture(p);
  const PngFile f = read_png_chunks(input);
  const PngLayout layout = original_png_layout(f, unfiltered_rows(f));
  const Bytes idat = deflate_at_level(layout.raw, 6, DeflateWrapper::kZlib);
  const Bytes split = assemble_png(layout, idat, 100);
  size_t idats = 0;
  for (const PngChunk& c : read_png_chunks(split).chunks) idats += c.is("IDAT");
  EXPECT_EQ(idats, (idat.size() + 99) / 100);
  EXPECT_EQ(testing::decode_rgba16(split), testing::decode_rgba16(input));
}

TEST(PngReduce, RgbIccProfileForbidsGrey) {
  PngPicture p = picture(64, 20, PNG_COLOR_TYPE_RGB, 8);
  p.samples = pixels(64, 20, 3, [](uint32_t x, uint32_t y, int) { return (x * 3 + y) % 256; });
  const Bytes plain = testing::write_picture(p);
  ASSERT_NE(layout_with_type(layouts_of(plain), 0), nullptr);
  const Bytes with_icc =
      testing::with_chunk_after_header(plain, "iCCP", testing::icc_chunk_data("RGB "));
  EXPECT_EQ(layout_with_type(layouts_of(with_icc), 0), nullptr);
  const Outcome o = optimize(with_icc, reducing());
  if (o.replaced()) {
    EXPECT_NE(read_png_chunks(o.bytes).header.color_type, 0);
    EXPECT_EQ(chunk_data(o.bytes, "iCCP"), chunk_data(with_icc, "iCCP"));
  }
}

TEST(PngReduce, FewColoursBecomeAPaletteWithItsAlpha) {
  PngPicture p = picture(50, 40, PNG_COLOR_TYPE_RGBA, 8);
  static constexpr uint8_t kColours[5][4] = {
      {255, 0, 0, 255}, {0, 255, 0, 128}, {0, 0, 255, 255}, {9, 9, 9, 0}, {200, 100, 0, 255}};
  p.samples = pixels(
      50, 40, 4, [](uint32_t x, uint32_t y, int c) { return kColours[(x / 5 + y / 3) % 5][c]; });
  const Bytes input = testing::write_picture(p);
  const auto palette_layouts = layouts_of(input);
  const PngLayout* palette = layout_with_type(palette_layouts, 3);
  ASSERT_NE(palette, nullptr);
  EXPECT_EQ(palette->header.bit_depth, 4);
  expect_same_pixels(input, *palette);
  const auto plte = chunk_data(file_of(*palette), "PLTE");
  ASSERT_TRUE(plte);
  EXPECT_EQ(plte->size(), 15u);
  const auto trns = chunk_data(file_of(*palette), "tRNS");
  ASSERT_TRUE(trns);
  EXPECT_EQ(trns->size(), 2u) << "translucent entries first, opaque ones left out of tRNS";

  const Outcome o = optimize(input, reducing());
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(testing::decode_rgba16(o.bytes), testing::decode_rgba16(input));
}

// Loaders read a palette image's indices (segmentation masks are such images): entries keep
// their places, and only those after the last used (or the background's) go. Dropping unused
// entries in between renumbered the pixels.
TEST(PngReduce, PaletteEntriesKeepTheirNumbersAndOnlyTrailingUnusedOnesGo) {
  PngPicture p = picture(33, 17, PNG_COLOR_TYPE_PALETTE, 8);
  for (int i = 0; i < 200; ++i) p.palette.push_back({png_byte(i), png_byte(255 - i), 7});
  p.palette_alpha = {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 40};
  p.background = {150};
  p.samples = pixels(33, 17, 1, [](uint32_t x, uint32_t y, int) { return (x + y) % 2 ? 3 : 10; });
  const Bytes input = testing::write_picture(p);
  const auto palette_layouts = layouts_of(input);
  const PngLayout* palette = layout_with_type(palette_layouts, 3);
  ASSERT_NE(palette, nullptr);
  EXPECT_EQ(palette->header.bit_depth, 8);
  expect_same_pixels(input, *palette);
  const Bytes output = file_of(*palette);
  EXPECT_EQ(chunk_data(output, "PLTE")->size(), 151u * 3);
  EXPECT_EQ(chunk_data(output, "tRNS"), chunk_data(input, "tRNS"));
  EXPECT_EQ(chunk_data(output, "bKGD"), (Bytes{150}));
  EXPECT_EQ(unfiltered_rows(read_png_chunks(output)), unfiltered_rows(read_png_chunks(input)));

  // Indices 0 to 3 used: four entries, two bits, the same numbers.
  p.background.clear();
  p.samples = pixels(33, 17, 1, [](uint32_t x, uint32_t y, int) { return (x + 2 * y) % 4; });
  const Bytes small = testing::write_picture(p);
  const auto small_layouts = layouts_of(small);
  const PngLayout* two_bits = layout_with_type(small_layouts, 3);
  ASSERT_NE(two_bits, nullptr);
  EXPECT_EQ(two_bits->header.bit_depth, 2);
  expect_same_pixels(small, *two_bits);
  EXPECT_EQ(chunk_data(file_of(*two_bits), "PLTE"),
            (Bytes{0, 255, 7, 1, 254, 7, 2, 253, 7, 3, 252, 7}));
  const Bytes two_bit_file = file_of(*two_bits);
  const PngFile reduced = read_png_chunks(two_bit_file);  // views into two_bit_file
  const Bytes rows = unfiltered_rows(reduced);
  for (uint32_t y = 0; y < 17; ++y)
    for (uint32_t x = 0; x < 33; ++x) {
      const uint8_t byte = rows[y * (reduced.header.row_bytes(33) + 1) + 1 + x / 4];
      ASSERT_EQ((byte >> (6 - 2 * (x % 4))) & 3, (x + 2 * y) % 4) << x << "," << y;
    }
}

TEST(PngReduce, RefusedWhenAChunkCannotFollow) {
  PngPicture p = picture(40, 30, PNG_COLOR_TYPE_RGBA, 8);
  p.samples = pixels(40, 30, 4, [](uint32_t x, uint32_t y, int c) {
    return c == 3 ? 255 : many_colours(x, y, c);
  });
  const Bytes plain = testing::write_picture(p);
  ASSERT_FALSE(layouts_of(plain).empty());
  const uint8_t four[4] = {1, 2, 3, 4};
  // An unknown chunk that is not safe to copy depends on the image data.
  EXPECT_TRUE(layouts_of(testing::with_chunk_after_header(plain, "prVW", four)).empty());
  // pCAL maps raw sample values: a new depth would change its meaning.
  EXPECT_TRUE(layouts_of(testing::with_chunk_after_header(plain, "pCAL", four)).empty());
  // A safe-to-copy one is kept as it is.
  const Bytes safe = testing::with_chunk_after_header(plain, "vpAg", four);
  const auto layouts = layouts_of(safe);
  ASSERT_FALSE(layouts.empty());
  EXPECT_EQ(chunk_data(file_of(layouts[0]), "vpAg"), Bytes(four, four + 4));
}

// A palette's tRNS with more entries than the palette: libpng ignores the whole chunk (every
// entry opaque), other readers take its first entries. Readers disagree on the pixels, so nothing
// is reduced; the file is re-deflated as it is (before, the reduction failed verification).
TEST(PngReduce, APaletteAlphaLongerThanThePaletteIsNotReduced) {
  PngPicture p = picture(160, 120, PNG_COLOR_TYPE_PALETTE, 8);
  for (int i = 0; i < 4; ++i) p.palette.push_back({png_byte(3 * i + 1), png_byte(3 * i + 2), 9});
  p.samples = pixels(160, 120, 1, [](uint32_t x, uint32_t y, int) { return (x / 3 + y / 5) % 4; });
  const Bytes plain = testing::write_picture(p);
  const PngFile file = read_png_chunks(plain);
  const auto plte = std::find_if(file.chunks.begin(), file.chunks.end(),
                                 [](const PngChunk& c) { return c.is("PLTE"); });
  ASSERT_NE(plte, file.chunks.end());
  const size_t after_plte = size_t(plte->whole.data() + plte->whole.size() - plain.data());
  Bytes input(plain.begin(), plain.begin() + long(after_plte));
  const uint8_t alpha[6] = {0x10, 0x20, 0x30, 0x40, 0x50, 0x60};
  append_png_chunk(input, "tRNS", alpha);
  input.insert(input.end(), plain.begin() + long(after_plte), plain.end());
  EXPECT_TRUE(layouts_of(input).empty());
  const Outcome o = optimize(input, reducing());
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(read_png_chunks(o.bytes).header.color_type, 3);
  EXPECT_EQ(chunk_data(o.bytes, "tRNS"), Bytes(alpha, alpha + 6));
}

TEST(PngReduce, OffByDefaultLeavesColourTypeAndDepth) {
  PngPicture p = picture(40, 30, PNG_COLOR_TYPE_RGBA, 16);
  p.samples = pixels(40, 30, 4, [](uint32_t x, uint32_t y, int c) {
    return c == 3 ? 0xFFFF : ((x / 8 + y / 8) % 3) * 0x4242;
  });
  const Bytes input = testing::write_picture(p);
  const Outcome kept_form = optimize(input, Policy{});
  ASSERT_TRUE(kept_form.replaced()) << kept_form.message;
  EXPECT_EQ(read_png_chunks(kept_form.bytes).header.color_type, 6);
  EXPECT_EQ(read_png_chunks(kept_form.bytes).header.bit_depth, 16);
  const Outcome reduced = optimize(input, reducing());
  ASSERT_TRUE(reduced.replaced()) << reduced.message;
  EXPECT_LT(reduced.bytes.size(), kept_form.bytes.size());
  EXPECT_NE(read_png_chunks(reduced.bytes).header.color_type, 6);
}

TEST(PngReduce, VerifierWantsThePolicyForANewForm) {
  PngPicture p = picture(40, 30, PNG_COLOR_TYPE_RGBA, 8);
  p.samples = pixels(40, 30, 4, [](uint32_t x, uint32_t y, int c) {
    return c == 3 ? 255 : many_colours(x, y, c);
  });
  const Bytes input = testing::write_picture(p);
  const auto layouts = layouts_of(input);
  const Bytes output = file_of(*layout_with_type(layouts, 2));
  struct FixedContext final : Context {
    Policy p;
    const Policy& policy() const override { return p; }
    unsigned depth() const override { return 0; }
    bool out_of_time() const override { return false; }
    Outcome optimize_embedded_under(ByteView, std::string_view, const Policy&) override {
      return {};
    }
    Verdict verify_embedded_under(ByteView, ByteView, const Policy&) override { return {}; }
  } context;
  EXPECT_FALSE(verify_png(input, output, context).ok);
  context.p.png_reduce = true;
  EXPECT_TRUE(verify_png(input, output, context).ok);
  // A changed pixel is caught in RGBA16 form too.
  PngLayout damaged = *layout_with_type(layouts, 2);
  damaged.raw[10] ^= 1;
  EXPECT_FALSE(verify_png(input, file_of(damaged), context).ok);
}

// Every reduction end to end: smaller, same pixels, other chunks kept, nothing more on a re-run.
TEST(PngReduce, OutputsAreSmallerSamePixelsAndIdempotent) {
  std::vector<PngPicture> pictures;
  PngPicture rgba = picture(48, 40, PNG_COLOR_TYPE_RGBA, 8, true);
  rgba.samples = pixels(48, 40, 4, [](uint32_t x, uint32_t y, int c) {
    return c == 3 ? 255 : many_colours(x, y, c);
  });
  pictures.push_back(rgba);
  PngPicture grey16 = picture(48, 40, PNG_COLOR_TYPE_GRAY_ALPHA, 16);
  grey16.samples = pixels(
      48, 40, 2, [](uint32_t x, uint32_t y, int c) { return c ? 0xFFFF : ((x + y) % 3) * 0x5555; });
  pictures.push_back(grey16);
  PngPicture keyed = picture(48, 40, PNG_COLOR_TYPE_RGB, 8);
  keyed.samples = pixels(
      48, 40, 3, [](uint32_t x, uint32_t y, int c) { return ((x / 6 + y / 5) % 3) * 60 + c; });
  keyed.colour_key = {60, 61, 62};
  keyed.background = {0, 1, 2};
  pictures.push_back(keyed);
  for (const PngPicture& p : pictures) {
    SCOPED_TRACE(std::to_string(p.color_type) + "/" + std::to_string(p.bit_depth));
    const Bytes input = testing::write_picture(p);
    const Outcome o = optimize(input, reducing());
    ASSERT_TRUE(o.replaced()) << o.message;
    EXPECT_LT(o.bytes.size(), input.size());
    EXPECT_TRUE(o.quality.pixels_identical);
    EXPECT_EQ(testing::decode_rgba16(o.bytes), testing::decode_rgba16(input));
    EXPECT_EQ(chunk_data(o.bytes, "tEXt"), chunk_data(input, "tEXt"));
    EXPECT_FALSE(optimize(o.bytes, reducing()).replaced()) << "a second pass must find nothing";
  }
}

TEST(PngReduceCorpus, EveryPngKeepsItsPixelsInRgba16) {
  auto files = testing::corpus_files("png");
  LIGHTEN_REQUIRE_CORPUS(files, "png");
  for (const auto& b : testing::corpus_files("broken"))
    if (b.filename().string().starts_with("png_")) files.push_back(b);
  uint64_t before = 0, after = 0;
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    const Bytes input = testing::read_file(f);
    const Outcome o = optimize(input, reducing());
    before += input.size();
    after += o.replaced() ? o.bytes.size() : input.size();
    if (!o.replaced()) {
      EXPECT_FALSE(o.message.empty());
      continue;
    }
    EXPECT_LT(o.bytes.size(), input.size());
    EXPECT_TRUE(o.quality.pixels_identical);
    EXPECT_EQ(testing::decode_rgba16(o.bytes), testing::decode_rgba16(input));
    EXPECT_EQ(chunk_data(o.bytes, "iCCP"), chunk_data(input, "iCCP"));
    EXPECT_EQ(chunk_data(o.bytes, "eXIf"), chunk_data(input, "eXIf"));
    EXPECT_FALSE(optimize(o.bytes, reducing()).replaced()) << "a second pass must find nothing";
  }
  std::printf("png --png-reduce: %llu -> %llu bytes (%.2f%% saved)\n", (unsigned long long)before,
              (unsigned long long)after, 100.0 * double(before - after) / double(before));
}

}  // namespace
}  // namespace lighten
