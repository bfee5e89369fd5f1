// --metadata on PNG: keep carries every chunk, safe drops comments and editor records, strip
// keeps only what changes how the image shows (and an EXIF orientation); pixels never change.
#include <gtest/gtest.h>

#include <zlib.h>

#include <algorithm>
#include <string>
#include <vector>

#include "codecs/exif.h"
#include "formats/png/png_chunks.h"
#include "lighten/lighten.h"
#include "png_image_maker.h"
#include "support/png_maker.h"

namespace lighten {
namespace {

Bytes text_data(const std::string& keyword, const std::string& text) {
  Bytes data(keyword.begin(), keyword.end());
  data.push_back(0);
  data.insert(data.end(), text.begin(), text.end());
  return data;
}

// Little-endian TIFF: IFD0 with Orientation 6 and a Make tag, no next IFD.
Bytes camera_exif() {
  return {'I',  'I',  42, 0, 8, 0, 0, 0,                    // header, IFD0 at 8
          2,    0,                                          // two entries
          0x12, 0x01, 3,  0, 1, 0, 0, 0, 6,   0,   0,   0,  // Orientation, SHORT, 1: 6
          0x0F, 0x01, 2,  0, 4, 0, 0, 0, 'C', 'a', 'm', 0,  // Make, ASCII, 4: "Cam"
          0,    0,    0,  0};
}

// The chunks after IHDR, first to last: with_chunk_after_header puts each before the previous.
Bytes annotated_png() {
  Bytes png = testing::make_png({.text = ""});
  const Bytes phys = {0, 0, 0x0B, 0x13, 0, 0, 0x0B, 0x13, 1};
  const Bytes gama = {0, 0, 0xB1, 0x8F};
  const Bytes time = {0x07, 0xEA, 12, 2, 10, 30, 0};
  const Bytes private_data = {'d', 'a', 't', 'a'};
  png = testing::with_chunk_after_header(png, "prIv", private_data);
  png = testing::with_chunk_after_header(png, "tIME", time);
  png = testing::with_chunk_after_header(png, "tEXt", text_data("Author", "someone"));
  png = testing::with_chunk_after_header(png, "tEXt", text_data("Comment", "made by hand"));
  png = testing::with_chunk_after_header(png, "eXIf", camera_exif());
  png = testing::with_chunk_after_header(png, "pHYs", phys);
  png = testing::with_chunk_after_header(png, "gAMA", gama);
  return png;
}

// Each chunk but IDAT as type, then keyword for text chunks.
std::vector<std::string> described_chunks(const Bytes& png) {
  std::vector<std::string> out;
  for (const PngChunk& c : read_png_chunks(png).chunks) {
    if (c.is("IDAT")) continue;
    std::string d = c.type_name();
    if (c.is("tEXt")) {
      d += ' ';
      d.append(c.data.begin(), std::find(c.data.begin(), c.data.end(), 0));
    }
    out.push_back(d);
  }
  return out;
}

Bytes exif_of(const Bytes& png) {
  for (const PngChunk& c : read_png_chunks(png).chunks)
    if (c.is("eXIf")) return Bytes(c.data.begin(), c.data.end());
  return {};
}

Outcome optimized(const Bytes& png, MetadataPolicy metadata) {
  Policy policy;
  policy.metadata = metadata;
  return optimize(png, policy);
}

TEST(PngMetadata, EachPolicyKeepsWhatItSays) {
  const Bytes input = annotated_png();
  const std::vector<std::string> all = {"IHDR",        "gAMA", "pHYs", "eXIf", "tEXt Comment",
                                        "tEXt Author", "tIME", "prIv", "IEND"};
  ASSERT_EQ(described_chunks(input), all);

  const Outcome keep = optimized(input, MetadataPolicy::kKeep);
  ASSERT_TRUE(keep.replaced()) << keep.message;
  EXPECT_EQ(described_chunks(keep.bytes), all);

  const Outcome safe = optimized(input, MetadataPolicy::kSafe);
  ASSERT_TRUE(safe.replaced()) << safe.message;
  EXPECT_EQ(
      described_chunks(safe.bytes),
      (std::vector<std::string>{"IHDR", "gAMA", "pHYs", "eXIf", "tEXt Author", "prIv", "IEND"}));
  EXPECT_EQ(exif_of(safe.bytes), camera_exif());
  EXPECT_NE(safe.detail.find("2 metadata chunks dropped (--metadata safe)"), std::string::npos)
      << safe.detail;

  // The camera's EXIF goes, its orientation stays.
  const Outcome strip = optimized(input, MetadataPolicy::kStrip);
  ASSERT_TRUE(strip.replaced()) << strip.message;
  EXPECT_EQ(described_chunks(strip.bytes),
            (std::vector<std::string>{"IHDR", "gAMA", "pHYs", "eXIf", "IEND"}));
  EXPECT_EQ(exif_of(strip.bytes), orientation_only_tiff(6));
  EXPECT_EQ(tiff_orientation(exif_of(strip.bytes)), 6);

  for (const Outcome* o : {&keep, &safe, &strip}) {
    EXPECT_TRUE(o->quality.pixels_identical) << o->detail;
    EXPECT_EQ(testing::decode_rgba16(o->bytes), testing::decode_rgba16(input)) << o->detail;
  }
  EXPECT_LT(strip.bytes.size(), safe.bytes.size());
  EXPECT_LT(safe.bytes.size(), keep.bytes.size());
  // A second strip finds nothing more to drop.
  const Outcome again = optimized(strip.bytes, MetadataPolicy::kStrip);
  EXPECT_FALSE(again.replaced()) << again.detail;
}

// Image data that no trial packs tighter is kept as it was while the chunks go.
TEST(PngMetadata, ChunksGoEvenWhereTheImageDataCannotShrink) {
  const Bytes tight = optimized(annotated_png(), MetadataPolicy::kKeep).bytes;
  ASSERT_FALSE(tight.empty());
  ASSERT_FALSE(optimized(tight, MetadataPolicy::kKeep).replaced());
  const Outcome strip = optimized(tight, MetadataPolicy::kStrip);
  ASSERT_TRUE(strip.replaced()) << strip.message;
  EXPECT_NE(strip.detail.find("image data kept as it was"), std::string::npos) << strip.detail;
  EXPECT_EQ(testing::decode_rgba16(strip.bytes), testing::decode_rgba16(tight));
}

// An orientation of 1 (as stored) needs no eXIf at all.
TEST(PngMetadata, AnUprightOrientationIsNotKept) {
  const Bytes input = testing::with_chunk_after_header(testing::make_png({.text = ""}), "eXIf",
                                                       orientation_only_tiff(1));
  const Outcome strip = optimized(input, MetadataPolicy::kStrip);
  ASSERT_TRUE(strip.replaced()) << strip.message;
  EXPECT_TRUE(exif_of(strip.bytes).empty());
}

// Readers (libpng) take the first eXIf: an upright first one and a rotated second one show the
// image upright, and strip keeps no orientation.
TEST(PngMetadata, OnlyTheFirstExifGivesTheOrientation) {
  Bytes input = testing::with_chunk_after_header(testing::make_png({.text = ""}), "eXIf",
                                                 orientation_only_tiff(6));
  input = testing::with_chunk_after_header(input, "eXIf", orientation_only_tiff(1));
  const Outcome strip = optimized(input, MetadataPolicy::kStrip);
  ASSERT_TRUE(strip.replaced()) << strip.message;
  EXPECT_TRUE(exif_of(strip.bytes).empty());
}

// Pillow turns a PNG by XMP's tiff:Orientation or ImageMagick's raw EXIF profile where no eXIf
// gives an orientation; strip dropped such text, turning the image back. Text saying 1 still
// goes.
TEST(PngMetadata, TextThatTurnsTheImageStaysUnderStrip) {
  auto zlib = [](const std::string& text) {
    uLongf size = compressBound(uLong(text.size()));
    Bytes out(size);
    compress(out.data(), &size, reinterpret_cast<const Bytef*>(text.data()), uLong(text.size()));
    out.resize(size);
    return out;
  };
  auto itxt = [&](const std::string& text, bool compressed) {
    Bytes data = text_data("XML:com.adobe.xmp", "");  // the keyword and its NUL
    // Compression flag and method, empty language and translated keyword.
    data.insert(data.end(), {uint8_t(compressed), 0, 0, 0});
    const Bytes body = compressed ? zlib(text) : Bytes(text.begin(), text.end());
    data.insert(data.end(), body.begin(), body.end());
    return data;
  };
  std::string hex = "\nexif\n      40\n";
  const std::string exif_text = std::string("Exif\0\0", 6);
  Bytes exif(exif_text.begin(), exif_text.end());
  const Bytes tiff = camera_exif();
  exif.insert(exif.end(), tiff.begin(), tiff.end());
  for (const uint8_t b : exif) hex += "0123456789abcdef"[b >> 4], hex += "0123456789abcdef"[b & 15];
  Bytes raw_profile = text_data("Raw profile type exif", "");
  raw_profile.push_back(0);  // the method
  const Bytes deflated = zlib(hex + "\n");
  raw_profile.insert(raw_profile.end(), deflated.begin(), deflated.end());
  const std::vector<std::pair<std::string, Bytes>> turning = {
      {"iTXt", itxt("<x:xmpmeta tiff:Orientation=\"6\"/>", false)},
      {"iTXt", itxt("<tiff:Orientation>8</tiff:Orientation>", true)},
      // Pillow takes the first tag followed by a digit.
      {"iTXt", itxt("<a tiff:Orientation=\"x\"/><tiff:Orientation>6</tiff:Orientation>", false)},
      {"zTXt", raw_profile}};
  for (const auto& [type, data] : turning) {
    Bytes input =
        testing::with_chunk_after_header(testing::make_png({.text = ""}), type.c_str(), data);
    input = testing::with_chunk_after_header(input, "tEXt", text_data("Author", "someone"));
    const Outcome strip = optimized(input, MetadataPolicy::kStrip);
    ASSERT_TRUE(strip.replaced()) << strip.message;
    EXPECT_EQ(described_chunks(strip.bytes), (std::vector<std::string>{"IHDR", type, "IEND"}));
  }
  const Bytes upright = testing::with_chunk_after_header(
      testing::make_png({.text = ""}), "iTXt", itxt("<x:xmpmeta tiff:Orientation=\"1\"/>", false));
  const Outcome strip = optimized(upright, MetadataPolicy::kStrip);
  ASSERT_TRUE(strip.replaced()) << strip.message;
  EXPECT_EQ(described_chunks(strip.bytes), (std::vector<std::string>{"IHDR", "IEND"}));
  // Pillow reads XMP only where the EXIF (an eXIf, or without one the raw profile) gives no
  // orientation: beside an upright one the XMP's 6 turns nothing, and kept alone it would.
  const Bytes xmp_6 = itxt("<x:xmpmeta tiff:Orientation=\"6\"/>", false);
  std::string upright_hex = "\nexif\n      24\n";
  for (const uint8_t b : orientation_only_tiff(1))
    upright_hex += "0123456789abcdef"[b >> 4], upright_hex += "0123456789abcdef"[b & 15];
  // An eXIf without an orientation: Pillow then reads XMP after the image data only where its
  // caller loaded the pixels first. No text is kept beside an eXIf.
  const Bytes no_orientation = {'I',  'I',  42, 0, 8, 0, 0, 0, 1,   0,  // one entry
                                0x0F, 0x01, 2,  0, 4, 0, 0, 0, 'C', 'a', 'm', 0, 0, 0, 0, 0};
  for (const auto& [type, data] : std::vector<std::pair<std::string, Bytes>>{
           {"eXIf", orientation_only_tiff(1)},
           {"eXIf", no_orientation},
           {"tEXt", text_data("Raw profile type exif", upright_hex + "\n")}}) {
    SCOPED_TRACE(type);
    Bytes input = testing::with_chunk_after_header(testing::make_png({.text = ""}), "iTXt", xmp_6);
    input = testing::with_chunk_after_header(input, type.c_str(), data);
    const Outcome o = optimized(input, MetadataPolicy::kStrip);
    ASSERT_TRUE(o.replaced()) << o.message;
    EXPECT_EQ(described_chunks(o.bytes), (std::vector<std::string>{"IHDR", "IEND"}));
  }
}

// Strip keeps what changes how the image shows or what its values mean: HDR mastering and light
// levels under their earlier names too, a stereo pair, a calibration, a scale and an offset.
TEST(PngMetadata, StripKeepsHdrStereoAndCalibrationChunks) {
  Bytes input = testing::make_png({.text = ""});
  std::vector<std::string> kept = {"IHDR"};
  for (const char* type : {"mDCv", "cLLi", "mDCV", "cLLI", "sTER", "pCAL", "sCAL", "oFFs"}) {
    input = testing::with_chunk_after_header(input, type, Bytes{1, 2, 3, 4});
    kept.insert(kept.begin() + 1, type);
  }
  kept.push_back("IEND");
  const Outcome strip = optimized(input, MetadataPolicy::kStrip);
  ASSERT_TRUE(strip.replaced()) << strip.message;
  EXPECT_EQ(described_chunks(strip.bytes), kept);
}

// A digital signature (dSIG) covers the chunks between its two halves: the file is left alone.
// A palette image without its palette is damaged, not a verification failure.
TEST(PngMetadata, SignedAndPalettelessFilesAreLeftAloneWithTheirReason) {
  const Bytes signed_png =
      testing::with_chunk_after_header(testing::make_png({.text = ""}), "dSIG", Bytes{1, 2, 3});
  EXPECT_EQ(optimized(signed_png, MetadataPolicy::kKeep).reason, Reason::kSigned);
  Bytes palette = testing::make_png(
      {.width = 8, .height = 8, .color_type = PNG_COLOR_TYPE_PALETTE, .text = ""});
  ASSERT_FALSE(palette.empty());
  PngFile parsed = read_png_chunks(palette);
  Bytes without;
  without.insert(without.end(), palette.begin(), palette.begin() + 8);
  for (const PngChunk& c : parsed.chunks)
    if (!c.is("PLTE")) without.insert(without.end(), c.whole.begin(), c.whole.end());
  const Outcome o = optimized(without, MetadataPolicy::kKeep);
  EXPECT_EQ(o.reason, Reason::kCorrupt) << o.message;
  EXPECT_NE(o.message.find("without PLTE"), std::string::npos) << o.message;
  // A second PLTE libpng refuses in any colour type; one suggested palette in an RGB image is
  // no damage.
  const Bytes colours = {255, 0, 0, 0, 255, 0};
  const Bytes suggested =
      testing::with_chunk_after_header(testing::make_png({.text = ""}), "PLTE", colours);
  EXPECT_TRUE(optimized(suggested, MetadataPolicy::kKeep).replaced());
  const Outcome twice = optimized(testing::with_chunk_after_header(suggested, "PLTE", colours),
                                  MetadataPolicy::kKeep);
  EXPECT_EQ(twice.reason, Reason::kCorrupt) << twice.message;
  // An empty PLTE libpng refuses in colour images too (it was a verification failure); in a grey
  // one it passes it over.
  const Outcome grey = optimized(
      testing::with_chunk_after_header(
          testing::make_png({.color_type = PNG_COLOR_TYPE_GRAY, .text = ""}), "PLTE", Bytes{}),
      MetadataPolicy::kKeep);
  EXPECT_NE(grey.reason, Reason::kCorrupt) << grey.message;
  EXPECT_NE(grey.reason, Reason::kVerifyFailed) << grey.message;
  const Outcome empty =
      optimized(testing::with_chunk_after_header(testing::make_png({.text = ""}), "PLTE", Bytes{}),
                MetadataPolicy::kKeep);
  EXPECT_EQ(empty.reason, Reason::kCorrupt) << empty.message;
  EXPECT_NE(empty.message.find("empty PLTE"), std::string::npos) << empty.message;
}

// Apple's iDOT gives where each part of the image data starts, as offsets into the file: any new
// IDAT moves them, so no output carries it. Other chunks marked unsafe to copy (fourth letter
// upper case) stay: those met in files (ImageMagick's orNT, Fireworks' mkBF) describe the image.
TEST(PngMetadata, AppleImageDataIndexDoesNotFollowNewImageData) {
  const Bytes index = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0, 0, 40};
  const Bytes apple =
      testing::with_chunk_after_header(testing::make_png({.text = ""}), "iDOT", index);
  for (const MetadataPolicy policy : {MetadataPolicy::kKeep, MetadataPolicy::kStrip}) {
    const Outcome o = optimized(apple, policy);
    ASSERT_TRUE(o.replaced()) << o.message;
    EXPECT_EQ(described_chunks(o.bytes), (std::vector<std::string>{"IHDR", "IEND"}));
    EXPECT_NE(o.detail.find("Apple's iDOT dropped"), std::string::npos) << o.detail;
    EXPECT_EQ(testing::decode_rgba16(o.bytes), testing::decode_rgba16(apple));
  }
  const Bytes orientation = {1};
  const Outcome magick = optimized(
      testing::with_chunk_after_header(testing::make_png({.text = ""}), "orNT", orientation),
      MetadataPolicy::kKeep);
  ASSERT_TRUE(magick.replaced()) << magick.message;
  EXPECT_EQ(described_chunks(magick.bytes), (std::vector<std::string>{"IHDR", "orNT", "IEND"}));
}

// Apple's CgBI variant (iPhone app bundles) comes before IHDR: not a standard PNG, and said so.
TEST(PngMetadata, AppleCgbiIsAVariantNotDamage) {
  const Bytes png = testing::make_png({.text = ""});
  Bytes cgbi(png.begin(), png.begin() + 8);
  append_png_chunk(cgbi, "CgBI", Bytes{0x50, 0x00, 0x20, 0x02});
  cgbi.insert(cgbi.end(), png.begin() + 8, png.end());
  const Outcome o = optimized(cgbi, MetadataPolicy::kKeep);
  EXPECT_EQ(o.reason, Reason::kUnsupportedVariant);
  EXPECT_NE(o.message.find("CgBI"), std::string::npos) << o.message;
}

}  // namespace
}  // namespace lighten
