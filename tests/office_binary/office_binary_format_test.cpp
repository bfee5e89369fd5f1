// PPT, XLS and DOC files built in the test (compound files from tests/cfb/cfb_maker.h, real
// JPEG pictures) go through the public optimize(): outputs parse, keep their storage tree, and
// their pictures decode to the same pixels; what cannot be rewritten is left with a reason.
#include <gtest/gtest.h>

#include <algorithm>

#include "cfb/cfb_maker.h"
#include "formats/cfb/compound_file.h"
#include "formats/office_binary/ppt_format.h"
#include "formats/office_binary/ppt_pictures.h"
#include "formats/office_binary/xls_workbook.h"
#include "lighten/lighten.h"
#include "office_binary/record_maker.h"
#include "support/direct_context.h"
#include "support/jpeg_maker.h"

namespace lighten {
namespace {

using testing::container;

// A JPEG with Huffman tables left unoptimised: the lossless optimiser can always shrink it.
Bytes plain_jpeg(int width) {
  testing::JpegRecipe recipe;
  recipe.width = width;
  recipe.height = width * 3 / 4;
  recipe.quality = 92;
  return testing::make_jpeg(recipe);
}

Bytes current_user(uint32_t token) {
  Bytes body;
  testing::put32(body, 0x14);
  testing::put32(body, token);
  body.resize(20 + 4, 0);
  return testing::officeart(0, 0, 0x0FF6, body);
}

// `shapes`: records placed in the document container after the drawing group (a slide's
// property tables, say).
Bytes make_ppt(const std::vector<Bytes>& images, uint32_t token = 0xE391C05F,
               const std::vector<testing::CfbItem>& extra = {}, const Bytes& shapes = {},
               const std::string& pictures_name = "Pictures") {
  Bytes pictures;
  std::vector<Bytes> entries;
  for (const Bytes& image : images) {
    const Bytes blip = testing::jpeg_blip(image);
    entries.push_back(testing::fbse(uint32_t(blip.size()), uint32_t(pictures.size())));
    testing::append(pictures, blip);
  }
  const Bytes document =
      container(ppt::kDocumentContainer,
                {testing::officeart(1, 0, 0x03E9, Bytes(40, 3)),
                 container(ppt::kDrawingGroupContainer,
                           {container(officeart::kDggContainer,
                                      {container(officeart::kBStoreContainer, entries)})}),
                 shapes});
  std::vector<testing::CfbItem> items = {{"Current User", current_user(token)},
                                         {"PowerPoint Document", document},
                                         {pictures_name, pictures},
                                         {"SummaryInformation", Bytes(300, 9)}};
  items.insert(items.end(), extra.begin(), extra.end());
  return testing::make_cfb(items);
}

// `sheet_drawing`: the payload of an MsoDrawing record in the sheet.
Bytes make_xls(const Bytes& image, const Bytes& sheet_drawing = {},
               const std::string& workbook_name = "Workbook") {
  const Bytes blip = testing::jpeg_blip(image);
  const Bytes dgg = container(
      officeart::kDggContainer,
      {container(officeart::kBStoreContainer, {testing::fbse(uint32_t(blip.size()), 0, blip)})});
  Bytes s = testing::biff_bof(0x0005);
  const size_t sheet_field = s.size() + 4;
  testing::append(s, testing::biff(xls::kBoundSheet, {0, 0, 0, 0, 0, 0, 1, 0, 'A'}));
  for (size_t at = 0; at < dgg.size(); at += xls::kMaxPayload) {
    const size_t n = std::min(xls::kMaxPayload, dgg.size() - at);
    testing::append(s, testing::biff(at == 0 ? xls::kDrawingGroup : xls::kContinue,
                                     Bytes(dgg.begin() + at, dgg.begin() + at + n)));
  }
  testing::append(s, testing::biff(xls::kEof, {}));
  officeart::put_u32le(s, sheet_field, uint32_t(s.size()));
  testing::append(s, testing::biff_bof(0x0010));
  if (!sheet_drawing.empty()) testing::append(s, testing::biff(xls::kDrawing, sheet_drawing));
  testing::append(s, testing::biff(xls::kEof, {}));
  return testing::make_cfb({{workbook_name, s}, {"CompObj", Bytes(100, 5)}});
}

// Until the registry lists PPT, XLS and DOC, the tests through the public API skip.
#define REQUIRE_REGISTERED(bytes) \
  if (!describe(bytes).supported) \
  GTEST_SKIP() << kind_name(sniff(bytes)) << " is not in src/engine/registry.cpp yet"

std::vector<std::pair<std::string, cfb::EntryType>> tree_of(const cfb::CompoundFile& f) {
  std::vector<std::pair<std::string, cfb::EntryType>> tree;
  for (const auto& e : f.entries()) tree.emplace_back(e.path, e.type);
  return tree;
}

TEST(OfficeBinaryFormat, PptPicturesShrinkLosslessly) {
  const Bytes input = make_ppt({plain_jpeg(320), plain_jpeg(200), plain_jpeg(256)});
  ASSERT_EQ(sniff(input), Kind::kPpt);
  REQUIRE_REGISTERED(input);
  const Outcome o = optimize(input, Policy{});
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_LT(o.bytes.size(), input.size());
  EXPECT_TRUE(o.quality.pixels_identical);
  const cfb::CompoundFile a = cfb::CompoundFile::parse(input);
  const cfb::CompoundFile b = cfb::CompoundFile::parse(o.bytes);
  EXPECT_EQ(tree_of(a), tree_of(b));
  EXPECT_EQ(a.read_stream("Current User"), b.read_stream("Current User"));
  EXPECT_EQ(a.read_stream("SummaryInformation"), b.read_stream("SummaryInformation"));
  std::vector<officeart::PicturePair> pictures;
  EXPECT_EQ(ppt::compare_pictures(*a.read_stream("PowerPoint Document"), *a.read_stream("Pictures"),
                                  *b.read_stream("PowerPoint Document"), *b.read_stream("Pictures"),
                                  pictures),
            "");
  ASSERT_EQ(pictures.size(), 3u);
  for (const auto& p : pictures)
    EXPECT_EQ(testing::decode_jpeg_pixels(p.after), testing::decode_jpeg_pixels(p.before));
  // Idempotent: a second run finds nothing more to do.
  EXPECT_FALSE(optimize(o.bytes, Policy{}).replaced());
}

// Bytes another tool appended after the compound file stay after it, in PPT as in XLS.
TEST(OfficeBinaryFormat, BytesAfterTheCompoundFileAreKept) {
  const std::string appended = "TRAILER-DATA: kept by nobody but this file";
  for (Bytes input : {make_ppt({plain_jpeg(320)}), make_xls(plain_jpeg(400))}) {
    input.insert(input.end(), appended.begin(), appended.end());
    REQUIRE_REGISTERED(input);
    const Outcome o = optimize(input, Policy{});
    ASSERT_TRUE(o.replaced()) << o.message;
    ASSERT_GT(o.bytes.size(), appended.size());
    EXPECT_EQ(std::string(o.bytes.end() - long(appended.size()), o.bytes.end()), appended);
    EXPECT_FALSE(optimize(o.bytes, Policy{}).replaced());
  }
}

TEST(OfficeBinaryFormat, XlsPicturesShrinkLosslessly) {
  const Bytes input = make_xls(plain_jpeg(400));  // spans several CONTINUE records
  ASSERT_EQ(sniff(input), Kind::kXls);
  REQUIRE_REGISTERED(input);
  const Outcome o = optimize(input, Policy{});
  ASSERT_TRUE(o.replaced()) << o.message;
  const cfb::CompoundFile a = cfb::CompoundFile::parse(input);
  const cfb::CompoundFile b = cfb::CompoundFile::parse(o.bytes);
  EXPECT_EQ(tree_of(a), tree_of(b));
  std::vector<officeart::PicturePair> pictures;
  EXPECT_EQ(
      xls::compare_workbooks(*a.read_stream("Workbook"), *b.read_stream("Workbook"), pictures), "");
  ASSERT_EQ(pictures.size(), 1u);
  EXPECT_EQ(testing::decode_jpeg_pixels(pictures[0].after),
            testing::decode_jpeg_pixels(pictures[0].before));
  const Outcome again = optimize(o.bytes, Policy{});
  EXPECT_FALSE(again.replaced());
  EXPECT_EQ(again.message, "no picture could be made smaller");
  // A workbook without a drawing group says so, as a presentation without pictures does.
  Bytes sheets = testing::biff_bof(0x0005);
  testing::append(sheets, testing::biff(xls::kEof, {}));
  const Outcome bare = optimize(testing::make_cfb({{"Workbook", sheets}}), Policy{});
  EXPECT_EQ(bare.reason, Reason::kNoGain);
  EXPECT_EQ(bare.message, "the workbook has no pictures");
}

// In the perceptual modes a document that shows a picture through a colour key (here "Set
// Transparent Colour"), black and white or raised contrast keeps every picture lossless,
// optimised and verified so; without such an effect its pictures are requantised.
TEST(OfficeBinaryFormat, PicturesShownThroughEffectsStayLossless) {
  const std::vector<Bytes> images = {plain_jpeg(320), plain_jpeg(256)};
  REQUIRE_REGISTERED(make_ppt(images));
  Policy high;
  high.mode = Mode::kHigh;
  const Bytes key = testing::property_table({{0x4104, 1}, {0x0107, 0x00FFFFFF}});
  const Bytes no_key = testing::property_table({{0x4104, 1}, {0x0107, 0xFFFFFFFF}});
  const Outcome plain = optimize(make_ppt(images, 0xE391C05F, {}, no_key), high);
  ASSERT_TRUE(plain.replaced()) << plain.message;
  EXPECT_FALSE(plain.quality.pixels_identical);
  const Bytes keyed_ppt = make_ppt(images, 0xE391C05F, {}, key);
  const Outcome keyed = optimize(keyed_ppt, high);
  ASSERT_TRUE(keyed.replaced()) << keyed.message;
  EXPECT_TRUE(keyed.quality.pixels_identical);
  EXPECT_NE(keyed.detail.find("colour key"), std::string::npos) << keyed.detail;
  EXPECT_GT(keyed.bytes.size(), plain.bytes.size());
  // The verifier holds such a document to identical pixels: the requantised output, its table
  // given the key, is refused.
  testing::DirectContext context(high);
  EXPECT_TRUE(verify_ppt(make_ppt(images, 0xE391C05F, {}, no_key), plain.bytes, context).ok);
  cfb::CompoundFile requantised = cfb::CompoundFile::parse(plain.bytes);
  Bytes document = *requantised.read_stream("PowerPoint Document");
  const auto at = std::search(document.begin(), document.end(), no_key.begin(), no_key.end());
  ASSERT_NE(at, document.end());
  std::copy(key.begin(), key.end(), at);
  requantised.replace_stream("PowerPoint Document", document);
  const Verdict v = verify_ppt(keyed_ppt, requantised.serialize(), context);
  EXPECT_FALSE(v.ok);

  const Bytes bilevel = testing::property_table({{0x013F, 0x00020002}});
  const Outcome xls_plain = optimize(make_xls(plain_jpeg(400)), high);
  ASSERT_TRUE(xls_plain.replaced()) << xls_plain.message;
  EXPECT_FALSE(xls_plain.quality.pixels_identical);
  const Outcome xls_bilevel = optimize(make_xls(plain_jpeg(400), bilevel), high);
  ASSERT_TRUE(xls_bilevel.replaced()) << xls_bilevel.message;
  EXPECT_TRUE(xls_bilevel.quality.pixels_identical);
}

TEST(OfficeBinaryFormat, EncryptedAndSignedPresentationsAreLeftAlone) {
  REQUIRE_REGISTERED(make_ppt({}));
  const Outcome encrypted = optimize(make_ppt({plain_jpeg(320)}, 0xF3D1C4DF), Policy{});
  EXPECT_FALSE(encrypted.replaced());
  EXPECT_EQ(encrypted.reason, Reason::kEncrypted);
  const Outcome signed_ppt = optimize(
      make_ppt({plain_jpeg(320)}, 0xE391C05F, {{"_signatures/sig", Bytes(64, 1)}}), Policy{});
  EXPECT_FALSE(signed_ppt.replaced());
  EXPECT_EQ(signed_ppt.reason, Reason::kSigned);
}

TEST(OfficeBinaryFormat, DocFilesAreLeftAloneWithAReason) {
  const Bytes doc = testing::make_cfb(
      {{"WordDocument", Bytes(2000, 1)}, {"1Table", Bytes(600, 2)}, {"Data", plain_jpeg(200)}});
  ASSERT_EQ(sniff(doc), Kind::kDoc);
  REQUIRE_REGISTERED(doc);
  const Outcome o = optimize(doc, Policy{});
  EXPECT_FALSE(o.replaced());
  EXPECT_EQ(o.reason, Reason::kUnsupportedVariant);
  EXPECT_NE(o.message.find("Word 97-2003"), std::string::npos);
  const FileInfo info = describe(doc);
  EXPECT_EQ(info.kind, Kind::kDoc);
  // A password-protected one says so (its FIB's fEncrypted bit).
  Bytes fib(2000, 0);
  fib[0] = 0xEC, fib[1] = 0xA5, fib[11] = 0x01;
  const Outcome locked =
      optimize(testing::make_cfb({{"WordDocument", fib}, {"1Table", Bytes(600, 2)}}), Policy{});
  EXPECT_FALSE(locked.replaced());
  EXPECT_EQ(locked.reason, Reason::kEncrypted) << locked.message;
}

TEST(OfficeBinaryFormat, DamagedFilesGetAReason) {
  Bytes input = make_ppt({plain_jpeg(320)});
  REQUIRE_REGISTERED(input);
  for (size_t cut : {input.size() / 2, size_t(600), size_t(100)}) {
    const Outcome o = optimize(Bytes(input.begin(), input.begin() + cut), Policy{});
    EXPECT_FALSE(o.replaced());
    EXPECT_FALSE(o.message.empty()) << cut;
  }
  // A Pictures stream whose FBSE points elsewhere.
  Bytes bad = make_ppt({plain_jpeg(320)});
  cfb::CompoundFile g = cfb::CompoundFile::parse(bad);
  Bytes document = *g.read_stream("PowerPoint Document");
  const auto store = ppt::find_blip_store(document);
  ASSERT_EQ(store.size(), 1u);
  officeart::put_u32le(document, store[0].record_offset + officeart::FbseEntry::kDelayField, 3);
  g.replace_stream("PowerPoint Document", document);
  const Outcome o = optimize(g.serialize(), Policy{});
  EXPECT_FALSE(o.replaced());
  EXPECT_EQ(o.reason, Reason::kUnsupportedVariant);
}

// Readers look streams up regardless of ASCII case ([MS-CFB] compares names so): LibreOffice
// opens a presentation whose stream is "PICTURES" and a workbook in "WORKBOOK". The first failed
// verification ("stream PICTURES changed ... Please report it"), the second was not taken for a
// workbook at all.
TEST(OfficeBinaryFormat, StreamNamesMatchRegardlessOfCase) {
  const Bytes ppt = make_ppt({plain_jpeg(320)}, 0xE391C05F, {}, {}, "PICTURES");
  REQUIRE_REGISTERED(ppt);
  const Outcome p = optimize(ppt, Policy{});
  EXPECT_TRUE(p.replaced()) << p.message;
  const Bytes xls = make_xls(plain_jpeg(400), {}, "WORKBOOK");
  EXPECT_EQ(sniff(xls), Kind::kXls);
  const Outcome x = optimize(xls, Policy{});
  EXPECT_TRUE(x.replaced()) << x.message;
}

// An FBSE whose length takes in the next record (here the next FBSE) holds bytes after its
// fields that are not its BLIP: readers then take the picture from the Pictures stream at its
// foDelay, which was not moved with the picture (LibreOffice showed no picture there). Its
// foDelay and size now follow the picture like any other's.
TEST(OfficeBinaryFormat, AnFbseHoldingOtherBytesFollowsItsPictureInThePicturesStream) {
  const std::vector<Bytes> images = {plain_jpeg(320), plain_jpeg(200)};
  Bytes input = make_ppt(images);
  REQUIRE_REGISTERED(input);
  cfb::CompoundFile f = cfb::CompoundFile::parse(input);
  Bytes document = *f.read_stream("PowerPoint Document");
  const auto store = ppt::find_blip_store(document);
  ASSERT_EQ(store.size(), 2u);
  officeart::put_u32le(document, store[0].record_offset + 4,
                       uint32_t(store[0].header.length + store[1].header.total_size()));
  f.replace_stream("PowerPoint Document", document);
  const Outcome o = optimize(f.serialize(), Policy{});
  ASSERT_TRUE(o.replaced()) << o.message;
  const cfb::CompoundFile out = cfb::CompoundFile::parse(o.bytes);
  const Bytes pictures = *out.read_stream("Pictures");
  const auto entries = ppt::find_blip_store(*out.read_stream("PowerPoint Document"));
  ASSERT_EQ(entries.size(), 1u);  // the second FBSE stays inside the first
  ASSERT_LE(uint64_t(entries[0].delay_offset) + entries[0].blip_size, pictures.size());
  const ByteView blip = ByteView(pictures).subspan(entries[0].delay_offset, entries[0].blip_size);
  const ByteView image = officeart::raster_blip_image(blip);
  EXPECT_EQ(testing::decode_jpeg_pixels(Bytes(image.begin(), image.end())),
            testing::decode_jpeg_pixels(images[0]));
}

}  // namespace
}  // namespace lighten
