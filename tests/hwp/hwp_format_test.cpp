// HWP 5.0 documents made by tests/hwp/hwp_maker.h: images optimised, streams re-deflated, every
// flag and every other byte of content kept; protected and malformed documents left alone.
#include "formats/hwp/hwp_format.h"

#include <gtest/gtest.h>

#include <fstream>

#include "formats/cfb/compound_file.h"
#include "formats/hwp/hwp_document.h"
#include "hwp/hwp_maker.h"
#include "lighten/lighten.h"
#include "support/direct_context.h"
#include "support/jpeg_maker.h"
#include "support/png_maker.h"
#include "support/recording_gate.h"

namespace lighten {
namespace {

using testing::DirectContext;
using testing::HwpBinItem;
using testing::HwpRecipe;
using testing::make_hwp;

HwpRecipe picture_document() {
  HwpRecipe r;
  r.items = {{1, "jpg", testing::make_jpeg({.width = 320, .height = 240, .quality = 95})},
             {2, "png", testing::make_png({.width = 200, .height = 120, .text = {}})}};
  return r;
}

Reason refusal(const Bytes& doc) {
  DirectContext context;
  try {
    optimize_hwp(doc, context);
  } catch (const FormatError& e) {
    return e.reason();
  }
  return Reason::kOptimized;
}

Bytes stream(const Bytes& doc, const std::string& path) {
  return *cfb::CompoundFile::parse(doc).read_stream(path);
}

Bytes inflated(const Bytes& doc, const std::string& path) {
  auto out = hwp::inflate_stream(stream(doc, path), 64u << 20);
  EXPECT_TRUE(out) << path;
  return out ? out->content : Bytes{};
}

TEST(HwpFormat, PicturesShrinkAndEverythingElseIsKept) {
  const Bytes doc = make_hwp(picture_document());
  ASSERT_EQ(sniff(doc), Kind::kHwp);
  DirectContext context;
  const Outcome o = optimize_hwp(doc, context);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_LT(o.bytes.size(), doc.size());
  EXPECT_NE(o.detail.find("1 jpeg, 1 png optimised"), std::string::npos) << o.detail;
  const Verdict v = verify_hwp(doc, o.bytes, context);
  EXPECT_TRUE(v.ok) << v.problem;
  EXPECT_TRUE(v.quality.pixels_identical);

  const auto a = cfb::CompoundFile::parse(doc), b = cfb::CompoundFile::parse(o.bytes);
  ASSERT_EQ(a.entries().size(), b.entries().size());
  for (size_t i = 0; i < a.entries().size(); ++i) EXPECT_EQ(a.entry_record(i), b.entry_record(i));
  for (const char* path : {"DocInfo", "BodyText/Section0", "Scripts/JScriptVersion"})
    EXPECT_EQ(inflated(doc, path), inflated(o.bytes, path)) << path;
  for (const char* path : {"FileHeader", "\x05HwpSummaryInformation", "PrvText"})
    EXPECT_EQ(stream(doc, path), stream(o.bytes, path)) << path;
  const Bytes jpeg_before = inflated(doc, "BinData/BIN0001.jpg");
  const Bytes jpeg_after = inflated(o.bytes, "BinData/BIN0001.jpg");
  EXPECT_LT(jpeg_after.size(), jpeg_before.size());
  EXPECT_EQ(testing::decode_jpeg_pixels(jpeg_after), testing::decode_jpeg_pixels(jpeg_before));
  EXPECT_EQ(testing::decode_png_pixels(inflated(o.bytes, "BinData/BIN0002.png")),
            testing::decode_png_pixels(inflated(doc, "BinData/BIN0002.png")));
  // Hangul's trailer is kept and matches the new content.
  EXPECT_EQ(hwp::inflate_stream(stream(o.bytes, "BinData/BIN0001.jpg"), 1 << 24)->trailer,
            hwp::Trailer::kCrcAndSize);
}

// What another tool appended after the compound file stays after it, and the verifier holds the
// output to it.
TEST(HwpFormat, BytesAfterTheCompoundFileAreKept) {
  Bytes doc = make_hwp(picture_document());
  const std::string appended = "APPENDED-DATA: a record another tool added";
  doc.insert(doc.end(), appended.begin(), appended.end());
  DirectContext context;
  const Outcome o = optimize_hwp(doc, context);
  ASSERT_TRUE(o.replaced()) << o.message;
  ASSERT_GT(o.bytes.size(), appended.size());
  EXPECT_EQ(std::string(o.bytes.end() - long(appended.size()), o.bytes.end()), appended);
  EXPECT_TRUE(verify_hwp(doc, o.bytes, context).ok);
  const Bytes cut(o.bytes.begin(), o.bytes.end() - long(appended.size()));
  const Verdict v = verify_hwp(doc, cut, context);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.problem, "the bytes after the last sector changed");
  EXPECT_FALSE(optimize_hwp(o.bytes, context).replaced());
}

TEST(HwpFormat, SecondRunFindsNothing) {
  const Bytes doc = make_hwp(picture_document());
  DirectContext context;
  const Outcome first = optimize_hwp(doc, context);
  ASSERT_TRUE(first.replaced());
  const Outcome second = optimize_hwp(first.bytes, context);
  EXPECT_FALSE(second.replaced()) << second.detail;
}

// The HWP optimiser inflates its streams itself: the caller's gate is told of each inflated
// stream and its deflated copy, when optimising and when verifying.
TEST(HwpFormat, InflatedStreamsAreToldToTheMemoryGate) {
  HwpRecipe r = picture_document();
  std::vector<uint8_t> text;
  for (int i = 0; i < 200000; ++i) text.push_back(uint8_t("claim form line "[i % 16]));
  r.items.push_back({3, "txt", text});
  testing::RecordingGate gate;
  const Outcome o = optimize(make_hwp(r), Policy{}, gate);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(gate.largest_hold, 2 * text.size());
  EXPECT_EQ(gate.holds_of(2 * text.size()), 2u);  // optimising, then verifying
  EXPECT_EQ(gate.held, 0u);
}

TEST(HwpFormat, EachBinDataItemKeepsItsOwnCompression) {
  HwpRecipe r = picture_document();
  r.items[0].compression = 2;  // stored, in a compressed document
  r.items.push_back({3, "jpg", testing::make_jpeg({.width = 64, .height = 64, .quality = 97}),
                     1});  // deflated on its own flag
  for (uint32_t properties : {0u, 1u}) {
    r.properties = properties;
    const Bytes doc = make_hwp(r);
    DirectContext context;
    const Outcome o = optimize_hwp(doc, context);
    ASSERT_TRUE(o.replaced());
    EXPECT_TRUE(verify_hwp(doc, o.bytes, context).ok);
    const Bytes stored = stream(o.bytes, "BinData/BIN0001.jpg");
    EXPECT_EQ(sniff(stored), Kind::kJpeg) << "a stored item stays stored";
    EXPECT_LT(stored.size(), stream(doc, "BinData/BIN0001.jpg").size());
    EXPECT_EQ(sniff(inflated(o.bytes, "BinData/BIN0003.jpg")), Kind::kJpeg);
    const Bytes png = stream(o.bytes, "BinData/BIN0002.png");
    EXPECT_EQ(sniff(png) == Kind::kPng, properties == 0) << "default follows the FileHeader";
  }
}

TEST(HwpFormat, OldHangulZeroCrcTrailerIsKept) {
  HwpRecipe r = picture_document();
  r.trailer = HwpRecipe::Trailer::kZeroCrc;
  const Bytes doc = make_hwp(r);
  DirectContext context;
  const Outcome o = optimize_hwp(doc, context);
  ASSERT_TRUE(o.replaced());
  EXPECT_TRUE(verify_hwp(doc, o.bytes, context).ok);
  EXPECT_EQ(hwp::inflate_stream(stream(o.bytes, "DocInfo"), 1 << 24)->trailer,
            hwp::Trailer::kZeroAndSize);
  r.trailer = HwpRecipe::Trailer::kNone;
  const Bytes bare = make_hwp(r);
  const Outcome p = optimize_hwp(bare, context);
  ASSERT_TRUE(p.replaced());
  EXPECT_EQ(hwp::inflate_stream(stream(p.bytes, "DocInfo"), 1 << 24)->trailer, hwp::Trailer::kNone);
}

TEST(HwpFormat, ProtectedDocumentsAreLeftAlone) {
  HwpRecipe r = picture_document();
  r.properties = 1 | 2;
  EXPECT_EQ(refusal(make_hwp(r)), Reason::kEncrypted);
  r.properties = 1 | 4;  // distribution (배포용)
  EXPECT_EQ(refusal(make_hwp(r)), Reason::kEncrypted);
  r.properties = 1;
  r.view_text = true;
  EXPECT_EQ(refusal(make_hwp(r)), Reason::kEncrypted);
  r.view_text = false;
  r.properties = 1 | 1u << 4;  // DRM
  EXPECT_EQ(refusal(make_hwp(r)), Reason::kEncrypted);
  r.properties = 1 | 1u << 7;  // signed
  EXPECT_EQ(refusal(make_hwp(r)), Reason::kSigned);
  // The streams tell too, where a writer left the header's flags clear.
  r.properties = 1;
  r.doc_options = {"_LinkDoc"};
  EXPECT_EQ(refusal(make_hwp(r)), Reason::kOptimized);
  r.doc_options = {"_LinkDoc", "DIGITALSIGNATURE"};
  EXPECT_EQ(refusal(make_hwp(r)), Reason::kSigned);
  r.doc_options = {"PublicKeyInfo"};
  EXPECT_EQ(refusal(make_hwp(r)), Reason::kSigned);
  r.doc_options = {"DrmLicense"};
  EXPECT_EQ(refusal(make_hwp(r)), Reason::kEncrypted);
  r.doc_options = {"CertDrmHeader"};
  EXPECT_EQ(refusal(make_hwp(r)), Reason::kEncrypted);
}

TEST(HwpFormat, OtherCompoundFilesAndVersionsAreNotOurs) {
  HwpRecipe r;
  r.version = 0x03000000;
  EXPECT_EQ(refusal(make_hwp(r)), Reason::kUnsupportedVariant);
  const Bytes plain = testing::make_cfb({{"Workbook", Bytes(5000, 1)}});
  EXPECT_EQ(refusal(plain), Reason::kUnsupportedVariant);
  EXPECT_EQ(sniff(plain), Kind::kXls);
}

TEST(HwpFormat, MalformedDocumentsAreCorrupt) {
  HwpRecipe r = picture_document();
  const Bytes good = make_hwp(r);
  auto with_stream = [&](const std::string& path, Bytes contents) {
    auto file = cfb::CompoundFile::parse(good);
    file.replace_stream(path, std::move(contents));
    return file.serialize();
  };
  EXPECT_EQ(refusal(with_stream("DocInfo", Bytes(100, 0xEE))), Reason::kCorrupt);
  // A record that claims more bytes than its section has.
  Bytes section = testing::hwp_section(u"text");
  section[3] = 0x7F;
  EXPECT_EQ(refusal(with_stream("BodyText/Section0",
                                testing::hwp_deflate(section, HwpRecipe::Trailer::kCrc))),
            Reason::kCorrupt);
  // A declared, deflated item whose bytes do not inflate.
  EXPECT_EQ(refusal(with_stream("BinData/BIN0001.jpg", testing::make_jpeg({}))), Reason::kCorrupt);
  // A wrong CRC in the trailer.
  Bytes doc_info = stream(good, "DocInfo");
  doc_info[doc_info.size() - 6] ^= 1;
  EXPECT_EQ(refusal(with_stream("DocInfo", doc_info)), Reason::kCorrupt);
  // Bytes of unknown meaning after a deflate stream: readable, but not ours to rewrite.
  Bytes tail = stream(good, "BodyText/Section0");
  tail.push_back(0x42);
  EXPECT_EQ(refusal(with_stream("BodyText/Section0", tail)), Reason::kUnsupportedVariant);
  // Truncated files.
  for (size_t keep : {size_t(0), size_t(100), good.size() / 2, good.size() - 512}) {
    const Reason reason = refusal(Bytes(good.begin(), good.begin() + keep));
    EXPECT_TRUE(reason == Reason::kTruncated || reason == Reason::kCorrupt) << keep;
  }
}

// A trailer whose CRC or length alone is wrong was told as a stream that "does not inflate" or as
// "bytes of unknown meaning"; it is a damaged trailer, and the reason says so.
TEST(HwpFormat, ADamagedTrailerIsToldAsSuch) {
  const Bytes good = make_hwp(picture_document());
  for (const char* path : {"DocInfo", "BinData/BIN0001.jpg"}) {
    for (const size_t from_end : {size_t(6), size_t(2)}) {  // in the CRC, in the length
      auto file = cfb::CompoundFile::parse(good);
      Bytes damaged = *file.read_stream(path);
      damaged[damaged.size() - from_end] ^= 1;
      file.replace_stream(path, std::move(damaged));
      const Bytes doc = file.serialize();
      if (std::string(path) == "DocInfo") {  // `lighten info` reads DocInfo too
        const FileInfo info = describe(doc);
        EXPECT_NE(info.problem.find("CRC-32 or length"), std::string::npos) << info.problem;
      }
      DirectContext context;
      try {
        optimize_hwp(doc, context);
        ADD_FAILURE() << path << " " << from_end;
      } catch (const FormatError& e) {
        EXPECT_EQ(e.reason(), Reason::kCorrupt) << path << " " << from_end;
        EXPECT_NE(std::string(e.what()).find("CRC-32 or length after " + std::string(path)),
                  std::string::npos)
            << e.what();
      }
    }
  }
}

TEST(HwpFormat, UndeclaredStreamsThatAreNotDeflatedStayAsTheyAre) {
  HwpRecipe r = picture_document();
  r.items.push_back({7, "jpg", testing::make_jpeg({.quality = 97}), 2, false});
  const Bytes doc = make_hwp(r);
  DirectContext context;
  const Outcome o = optimize_hwp(doc, context);
  ASSERT_TRUE(o.replaced());
  EXPECT_TRUE(verify_hwp(doc, o.bytes, context).ok);
  EXPECT_EQ(stream(doc, "BinData/BIN0007.jpg"), stream(o.bytes, "BinData/BIN0007.jpg"));
}

TEST(HwpFormat, IdenticalPicturesAreOptimisedOnce) {
  HwpRecipe r;
  const Bytes jpeg = testing::make_jpeg({.width = 160, .height = 120, .quality = 95});
  for (uint16_t id = 1; id <= 5; ++id) r.items.push_back({id, "jpg", jpeg});
  const Bytes doc = make_hwp(r);
  DirectContext context;
  const Outcome o = optimize_hwp(doc, context);
  ASSERT_TRUE(o.replaced());
  EXPECT_EQ(context.embedded_calls, 1);
  EXPECT_NE(o.detail.find("5 jpeg optimised"), std::string::npos) << o.detail;
  EXPECT_EQ(inflated(o.bytes, "BinData/BIN0001.jpg"), inflated(o.bytes, "BinData/BIN0005.jpg"));
}

// Resident memory at its peak since `reset_peak_resident()`, from /proc/self/status.
uint64_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) << 10;
  return 0;
}
uint64_t resident_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) << 10;
  return 0;
}

// Remembering which pictures were handed to the engine kept a copy of every one, inflated, for
// the whole document and outside the memory budget: 10 streams of 20 MiB peaked at 283 MB
// where one at a time needs 98.
TEST(HwpFormat, PicturesAlreadySeenAreRememberedWithoutACopy) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the sanitizer keeps freed memory in quarantine";
#endif
  constexpr size_t kStreamBytes = 16u << 20;
  Bytes doc;
  {
    HwpRecipe r;
    for (uint16_t id = 1; id <= 8; ++id) {
      Bytes tiff(kStreamBytes, 0);
      std::copy_n("II*\0", 4, tiff.begin());
      tiff[4] = uint8_t(id);  // eight different pictures
      r.items.push_back({id, "tif", std::move(tiff)});
    }
    // Incompressible bytes, so that the expansion budget (200 times the input) admits them.
    Bytes noise(1u << 20);
    uint32_t state = 1;
    for (uint8_t& b : noise) b = uint8_t((state = state * 1664525u + 1013904223u) >> 24);
    r.items.push_back({9, "dat", std::move(noise)});
    doc = make_hwp(r);
  }
  if (!(std::ofstream("/proc/self/clear_refs") << "5").flush())
    GTEST_SKIP() << "the peak resident size cannot be reset here";
  const uint64_t before = resident_bytes();
  DirectContext context;
  const Outcome o = optimize_hwp(doc, context);
  const uint64_t growth = peak_resident_bytes() - std::min(before, peak_resident_bytes());
  EXPECT_EQ(context.embedded_calls, 8);
  // A stream inflated, its deflated copy and the engine's own work: a few streams' worth, not
  // all eight.
  EXPECT_LT(growth, 5 * kStreamBytes) << growth / 1e6 << " MB; " << o.detail;
}

TEST(HwpFormat, VerifierCatchesChangedContent) {
  const Bytes doc = make_hwp(picture_document());
  DirectContext context;
  const Outcome o = optimize_hwp(doc, context);
  ASSERT_TRUE(o.replaced());
  auto tampered = [&](const std::string& path, Bytes contents) {
    auto file = cfb::CompoundFile::parse(o.bytes);
    file.replace_stream(path, std::move(contents));
    return file.serialize();
  };
  const Bytes other_text =
      testing::hwp_deflate(testing::hwp_section(u"Hello, 한글 World"), HwpRecipe::Trailer::kCrc);
  EXPECT_FALSE(verify_hwp(doc, tampered("BodyText/Section0", other_text), context).ok);
  EXPECT_FALSE(verify_hwp(doc, tampered("PrvText", {'X', 0}), context).ok);
  EXPECT_FALSE(verify_hwp(doc, tampered("BinData/BIN0001.jpg", Bytes(50, 1)), context).ok);
  const Bytes other_jpeg = testing::hwp_deflate(testing::make_jpeg({.width = 320, .height = 240}),
                                                HwpRecipe::Trailer::kCrc);
  EXPECT_FALSE(verify_hwp(doc, tampered("BinData/BIN0001.jpg", other_jpeg), context).ok);
  const Bytes no_trailer =
      testing::hwp_deflate(inflated(o.bytes, "DocInfo"), HwpRecipe::Trailer::kNone);
  EXPECT_FALSE(verify_hwp(doc, tampered("DocInfo", no_trailer), context).ok);
}

// In the perceptual modes a picture shape shown in black and white or with raised contrast keeps
// every picture lossless, optimised and verified so; a washed-out or grey picture does not.
TEST(HwpFormat, PicturesShownInBlackAndWhiteOrRaisedContrastStayLossless) {
  Policy high;
  high.mode = Mode::kHigh;
  DirectContext context(high);
  auto with_shape = [](int8_t contrast, uint8_t effect) {
    HwpRecipe r = picture_document();
    r.shapes = {{0, 0, 2}, {contrast, effect, 1}};
    return make_hwp(r);
  };
  for (const auto& [contrast, effect] : {std::pair<int8_t, uint8_t>{-30, 0}, {0, 1}}) {
    const Outcome o = optimize_hwp(with_shape(contrast, effect), context);
    ASSERT_TRUE(o.replaced()) << o.message;
    const Verdict v = verify_hwp(with_shape(contrast, effect), o.bytes, context);
    EXPECT_TRUE(v.ok) << v.problem;
    EXPECT_FALSE(v.quality.pixels_identical) << o.detail;
  }
  for (const auto& [contrast, effect] : {std::pair<int8_t, uint8_t>{20, 0}, {0, 2}, {0, 3}}) {
    const Outcome o = optimize_hwp(with_shape(contrast, effect), context);
    ASSERT_TRUE(o.replaced()) << o.message;
    const Verdict v = verify_hwp(with_shape(contrast, effect), o.bytes, context);
    EXPECT_TRUE(v.ok) << v.problem;
    EXPECT_TRUE(v.quality.pixels_identical);
    EXPECT_EQ(
        testing::decode_jpeg_pixels(inflated(o.bytes, "BinData/BIN0001.jpg")),
        testing::decode_jpeg_pixels(inflated(with_shape(contrast, effect), "BinData/BIN0001.jpg")));
    EXPECT_NE(o.detail.find("as a dither pattern or with raised contrast"), std::string::npos)
        << o.detail;
  }
  // The same looks given to an image fill of a border and background definition, of a
  // rectangle, and to a picture bullet.
  using Looks = std::vector<testing::HwpPictureShape> HwpRecipe::*;
  for (const Looks where : {&HwpRecipe::fills, &HwpRecipe::shape_fills, &HwpRecipe::bullets}) {
    auto with_fill = [&](int8_t contrast, uint8_t effect) {
      HwpRecipe r = picture_document();
      r.*where = {{0, 0, 2}, {contrast, effect, 1}};
      return make_hwp(r);
    };
    for (const auto& [contrast, effect] :
         {std::pair<int8_t, uint8_t>{-30, 1}, {20, 0}, {0, 2}, {0, 3}}) {
      const bool shows = contrast > 0 || effect >= 2;
      const Outcome o = optimize_hwp(with_fill(contrast, effect), context);
      ASSERT_TRUE(o.replaced()) << o.message;
      const Verdict v = verify_hwp(with_fill(contrast, effect), o.bytes, context);
      EXPECT_TRUE(v.ok) << v.problem;
      EXPECT_EQ(v.quality.pixels_identical, shows) << int(effect) << " " << o.detail;
      EXPECT_EQ(o.detail.find("black and white") != std::string::npos, shows) << o.detail;
    }
  }
  // The verifier holds such a document to identical pixels: a requantised picture is refused.
  const Outcome requantised = optimize_hwp(with_shape(0, 0), context);
  ASSERT_TRUE(requantised.replaced());
  auto file = cfb::CompoundFile::parse(requantised.bytes);
  const Bytes black_and_white = with_shape(0, 2);
  file.replace_stream("BodyText/Section0", stream(black_and_white, "BodyText/Section0"));
  EXPECT_TRUE(verify_hwp(with_shape(0, 0), requantised.bytes, context).ok);
  EXPECT_FALSE(verify_hwp(black_and_white, file.serialize(), context).ok);

  // The scan's inflating of the sections is not charged to the document's expansion budget: a
  // document that fits it with half a section to spare is still optimised.
  const Bytes doc = with_shape(0, 2);
  size_t inflated_total = 0;
  for (const std::string& path : cfb::CompoundFile::parse(doc).stream_paths())
    if (auto content = hwp::inflate_stream(stream(doc, path), 64u << 20))
      inflated_total += content->content.size();
  Policy tight = high;
  tight.limits.max_expanded_bytes = inflated_total + inflated(doc, "BodyText/Section0").size() / 2;
  DirectContext tight_context(tight);
  const Outcome fits = optimize_hwp(doc, tight_context);
  EXPECT_TRUE(fits.replaced()) << fits.message;
}

TEST(HwpFormat, PreviewImageIsOptimised) {
  HwpRecipe r;
  r.preview = testing::make_png({.width = 150, .height = 200, .text = {}});
  const Bytes doc = make_hwp(r);
  DirectContext context;
  const Outcome o = optimize_hwp(doc, context);
  ASSERT_TRUE(o.replaced());
  EXPECT_TRUE(verify_hwp(doc, o.bytes, context).ok);
  const Bytes preview = stream(o.bytes, "PrvImage");
  EXPECT_LT(preview.size(), r.preview.size());
  EXPECT_EQ(testing::decode_png_pixels(preview), testing::decode_png_pixels(r.preview));
}

// A document whose directory lies beyond the first 4 MB is still recognised.
TEST(HwpFormat, SniffReadsTheDirectoryOfLargeFiles) {
  HwpRecipe r;
  Bytes noise(9u << 20);  // past 109 FAT sectors: the directory is found through the DIFAT
  uint32_t x = 1;
  for (auto& b : noise) b = uint8_t((x = x * 1103515245u + 12345u) >> 16);
  r.items = {{1, "dat", noise, 2}};
  const Bytes doc = make_hwp(r);
  EXPECT_EQ(sniff(doc), Kind::kHwp);
}

TEST(HwpFormat, DescribeSaysWhatItIs) {
  FileInfo info;
  describe_hwp(make_hwp(picture_document()), info);
  ASSERT_GE(info.properties.size(), 4u);
  EXPECT_EQ(info.properties[0].second, "5.0.3.4");
  EXPECT_EQ(info.properties.back().second, "1 jpg, 1 png");
}

// Through the public API, once the registry lists HWP.
TEST(HwpFormat, PublicApiOptimisesHwp) {
  if (find_format(Kind::kHwp) == nullptr) GTEST_SKIP() << "Kind::kHwp is not in the registry";
  const Bytes doc = make_hwp(picture_document());
  const Outcome o = optimize(doc, Policy{});
  ASSERT_TRUE(o.replaced()) << reason_name(o.reason) << ": " << o.message;
  EXPECT_EQ(o.kind, Kind::kHwp);
  HwpRecipe r = picture_document();
  r.properties = 1 | 4;
  const Outcome refused = optimize(make_hwp(r), Policy{});
  EXPECT_EQ(refused.reason, Reason::kEncrypted);
}

}  // namespace
}  // namespace lighten
