// PowerPoint Pictures stream re-writing on synthetic PowerPoint Document and Pictures streams.
#include "formats/office_binary/ppt_pictures.h"

#include <gtest/gtest.h>

#include "office_binary/record_maker.h"

namespace lighten::ppt {
namespace {

using officeart::FbseEntry;
using officeart::PictureRewriter;
using testing::container;
using testing::fbse;
using testing::get32;

const PictureRewriter kHalve = [](ByteView image, const std::string&) -> std::optional<Bytes> {
  return Bytes(image.begin(), image.begin() + image.size() / 2);
};

struct Presentation {
  Bytes document;
  Bytes pictures;
  std::vector<size_t> blip_offsets;  // in Pictures
};

// A document stream with a leading atom, a DocumentContainer whose drawing group holds one
// FBSE per picture (plus an empty slot), and a trailing atom; the Pictures stream holds a JPEG,
// a WMF and a PNG BLIP.
Presentation make_presentation(int document_containers = 1) {
  Presentation p;
  const std::vector<Bytes> blips = {testing::jpeg_blip(testing::fake_jpeg(1000)),
                                    testing::wmf_blip(300),
                                    testing::png_blip(testing::fake_png(600))};
  std::vector<Bytes> entries;
  for (const Bytes& b : blips) {
    p.blip_offsets.push_back(p.pictures.size());
    entries.push_back(fbse(uint32_t(b.size()), uint32_t(p.pictures.size())));
    testing::append(p.pictures, b);
  }
  entries.push_back(fbse(0, 0, {}, 0));
  testing::append(p.document, testing::officeart(0, 0, 0x0FF5, Bytes(20, 1)));  // UserEditAtom
  for (int i = 0; i < document_containers; ++i) {
    const Bytes drawing_group = container(
        kDrawingGroupContainer,
        {container(officeart::kDggContainer,
                   {testing::officeart(0, 0, 0xF006, Bytes(16, 2)),
                    container(officeart::kBStoreContainer, entries, uint16_t(entries.size()))})});
    testing::append(p.document,
                    container(kDocumentContainer,
                              {testing::officeart(1, 0, 0x03E9, Bytes(40, 3)), drawing_group}));
  }
  testing::append(p.document, testing::officeart(0, 0, 0x1772, Bytes(12, 4)));  // persist dir
  return p;
}

TEST(PptPictures, FindsTheBlipStore) {
  const Presentation p = make_presentation();
  const std::vector<FbseEntry> store = find_blip_store(p.document);
  ASSERT_EQ(store.size(), 4u);
  EXPECT_EQ(store[1].delay_offset, p.blip_offsets[1]);
  EXPECT_EQ(store[3].blip_size, 0u);
}

TEST(PptPictures, ShrinkingABlipMovesLaterFbseOffsets) {
  const Presentation p = make_presentation();
  const auto out = rewrite_pictures(p.document, p.pictures, kHalve);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->changed, 2u);  // the JPEG and the PNG; the WMF stays
  EXPECT_EQ(out->document.size(), p.document.size());
  EXPECT_EQ(out->pictures.size(), p.pictures.size() - 500 - 300);
  const std::vector<FbseEntry> store = find_blip_store(out->document);
  const std::vector<PictureRecord> records = list_picture_records(out->pictures);
  ASSERT_EQ(records.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(store[i].delay_offset, records[i].offset) << i;
    EXPECT_EQ(store[i].blip_size, records[i].size) << i;
  }
  EXPECT_EQ(records[1].offset, 25u + 500u);
  // The WMF moved but kept every byte.
  EXPECT_TRUE(std::equal(p.pictures.begin() + p.blip_offsets[1],
                         p.pictures.begin() + p.blip_offsets[2],
                         out->pictures.begin() + records[1].offset));
  EXPECT_EQ(store[3].delay_offset, 0u);  // the empty slot stays empty
  std::vector<officeart::PicturePair> changed;
  EXPECT_EQ(compare_pictures(p.document, p.pictures, out->document, out->pictures, changed), "");
  EXPECT_EQ(changed.size(), 2u);
}

TEST(PptPictures, EveryDocumentContainerOfAFastSavedFileIsFixed) {
  const Presentation p = make_presentation(3);
  const auto out = rewrite_pictures(p.document, p.pictures, kHalve);
  ASSERT_TRUE(out);
  const std::vector<FbseEntry> store = find_blip_store(out->document);
  ASSERT_EQ(store.size(), 12u);
  for (size_t k = 0; k < 3; ++k) EXPECT_EQ(store[4 * k + 2].delay_offset, 25u + 500u + 358u);
  std::vector<officeart::PicturePair> changed;
  EXPECT_EQ(compare_pictures(p.document, p.pictures, out->document, out->pictures, changed), "");
}

TEST(PptPictures, NothingToShrinkGivesNothing) {
  const Presentation p = make_presentation();
  const PictureRewriter keep = [](ByteView, const std::string&) -> std::optional<Bytes> {
    return std::nullopt;
  };
  EXPECT_FALSE(rewrite_pictures(p.document, p.pictures, keep));
}

TEST(PptPictures, FbsePointingNowhereIsRefused) {
  Presentation p = make_presentation();
  const std::vector<FbseEntry> store = find_blip_store(p.document);
  Bytes document = p.document;
  officeart::put_u32le(document, store[1].record_offset + FbseEntry::kDelayField, 7);
  EXPECT_THROW(rewrite_pictures(document, p.pictures, kHalve), FormatError);
  document = p.document;
  officeart::put_u32le(document, store[2].record_offset + FbseEntry::kDelayField, 0xFFFFFF00);
  EXPECT_THROW(rewrite_pictures(document, p.pictures, kHalve), FormatError);
  document = p.document;  // a size that disagrees with the BLIP's
  officeart::put_u32le(document, store[0].record_offset + FbseEntry::kSizeField, 10);
  EXPECT_THROW(rewrite_pictures(document, p.pictures, kHalve), FormatError);
}

TEST(PptPictures, MalformedStreamsAreRefused) {
  const Presentation p = make_presentation();
  EXPECT_THROW(
      rewrite_pictures(p.document, Bytes(p.pictures.begin(), p.pictures.end() - 1), kHalve),
      FormatError);
  EXPECT_THROW(
      rewrite_pictures(Bytes(p.document.begin(), p.document.end() - 1), p.pictures, kHalve),
      FormatError);
  Bytes document = p.document;
  document[28 + 4] = 0xFF;  // the DocumentContainer's length runs past the stream
  document[28 + 7] = 0x7F;
  EXPECT_THROW(rewrite_pictures(document, p.pictures, kHalve), FormatError);
  Bytes encrypted = p.document;
  testing::append(encrypted, container(kCryptSession, {}));
  try {
    rewrite_pictures(encrypted, p.pictures, kHalve);
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_EQ(e.reason(), Reason::kEncrypted);
  }
}

TEST(PptPictures, CurrentUserTokenSaysEncrypted) {
  Bytes current_user = testing::officeart(0, 0, 0x0FF6, {});
  testing::put32(current_user, 0x14);
  testing::put32(current_user, 0xE391C05F);
  EXPECT_FALSE(current_user_says_encrypted(current_user));
  officeart::put_u32le(current_user, 12, 0xF3D1C4DF);
  EXPECT_TRUE(current_user_says_encrypted(current_user));
  EXPECT_FALSE(current_user_says_encrypted(Bytes(5, 0)));
}

TEST(PptPictures, CompareRejectsTampering) {
  const Presentation p = make_presentation();
  const auto out = rewrite_pictures(p.document, p.pictures, kHalve);
  ASSERT_TRUE(out);
  std::vector<officeart::PicturePair> changed;
  Bytes document = out->document;
  document[30] ^= 1;  // a byte outside the FBSE offsets
  EXPECT_NE(compare_pictures(p.document, p.pictures, document, out->pictures, changed), "");
  const std::vector<FbseEntry> store = find_blip_store(out->document);
  document = out->document;  // an offset pointing at the wrong picture
  officeart::put_u32le(document, store[2].record_offset + FbseEntry::kDelayField, 0);
  EXPECT_NE(compare_pictures(p.document, p.pictures, document, out->pictures, changed), "");
  Bytes pictures = out->pictures;  // the WMF changed
  const auto records = list_picture_records(pictures);
  pictures[records[1].offset + 40] ^= 1;
  EXPECT_NE(compare_pictures(p.document, p.pictures, out->document, pictures, changed), "");
  (void)get32;
}

}  // namespace
}  // namespace lighten::ppt
