// OfficeArt record walking and BLIP re-writing on synthetic records.
#include "formats/office_binary/officeart_records.h"

#include <gtest/gtest.h>

#include "office_binary/record_maker.h"

namespace lighten::officeart {
namespace {

using testing::container;
using testing::fake_jpeg;
using testing::fake_png;
using testing::fbse;
using testing::jpeg_blip;
using testing::png_blip;

// Keeps the first half of every picture: enough to see lengths move.
const PictureRewriter kHalve = [](ByteView image, const std::string&) -> std::optional<Bytes> {
  return Bytes(image.begin(), image.begin() + image.size() / 2);
};
const PictureRewriter kKeep = [](ByteView, const std::string&) -> std::optional<Bytes> {
  return std::nullopt;
};

TEST(OfficeArtRecords, ReadsHeaderFields) {
  const Bytes blip = jpeg_blip(fake_jpeg(100));
  const RecordHeader h = read_header(blip, 0, blip.size());
  EXPECT_EQ(h.version(), 0u);
  EXPECT_EQ(h.instance(), 0x46Au);
  EXPECT_EQ(h.type, kBlipJpeg);
  EXPECT_EQ(h.length, 117u);
  EXPECT_EQ(raster_blip_prefix(h), 25u);
}

TEST(OfficeArtRecords, RejectsLengthsBeyondTheParent) {
  Bytes blip = jpeg_blip(fake_jpeg(100));
  blip[4] = 0xFF;  // recLen far past the end
  EXPECT_THROW(read_header(blip, 0, blip.size()), FormatError);
  EXPECT_THROW(read_header(blip, 0, 5), FormatError);            // header cut short
  EXPECT_THROW(read_header(blip, blip.size(), 3), FormatError);  // offset past the end
}

TEST(OfficeArtRecords, RewritesJpegAndPngBlipsKeepingUidAndTag) {
  const Bytes jpeg = jpeg_blip(fake_jpeg(100), 0x5A);
  const std::optional<Bytes> out = rewrite_raster_blip(jpeg, kHalve, "x");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->size(), 25u + 50u);
  EXPECT_EQ(read_header(*out, 0, out->size()).length, 17u + 50u);
  EXPECT_TRUE(std::equal(jpeg.begin(), jpeg.begin() + 4, out->begin()));
  EXPECT_TRUE(std::equal(jpeg.begin() + 8, jpeg.begin() + 25, out->begin() + 8));
  EXPECT_TRUE(rewrite_raster_blip(png_blip(fake_png(64)), kHalve, "x"));
  EXPECT_FALSE(rewrite_raster_blip(testing::wmf_blip(100), kHalve, "x"));
  EXPECT_FALSE(rewrite_raster_blip(jpeg, kKeep, "x"));
}

TEST(OfficeArtRecords, TwoUidBlipsHaveALongerPrefix) {
  Bytes body(32, 0x01);
  body.push_back(0xFF);
  const Bytes image = fake_jpeg(40);
  body.insert(body.end(), image.begin(), image.end());
  const Bytes blip = testing::officeart(0, 0x46B, kBlipJpeg, body);
  EXPECT_EQ(raster_blip_image(blip).size(), 40u);
  EXPECT_EQ(raster_blip_image(blip)[0], 0xFF);
}

TEST(OfficeArtRecords, EmbeddedBlipsShrinkWithTheirContainers) {
  const Bytes blip1 = jpeg_blip(fake_jpeg(200));
  const Bytes blip2 = png_blip(fake_png(100));
  const Bytes dgg = container(kDggContainer, {testing::officeart(0, 0, 0xF006, Bytes(16, 7)),
                                              container(kBStoreContainer,
                                                        {fbse(uint32_t(blip1.size()), 0, blip1),
                                                         fbse(0, 0, {}, 0),  // an empty slot
                                                         fbse(uint32_t(blip2.size()), 0, blip2, 6)},
                                                        3)});
  size_t changed = 0;
  const std::optional<Bytes> out = rewrite_embedded_blips(dgg, kHalve, changed);
  ASSERT_TRUE(out);
  EXPECT_EQ(changed, 2u);
  EXPECT_EQ(out->size(), dgg.size() - 100 - 50);
  // The container lengths follow.
  EXPECT_EQ(read_header(*out, 0, out->size()).total_size(), out->size());
  const std::vector<FbseEntry> entries = find_fbse_records(*out, 0, out->size(), {kDggContainer});
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].blip_size, entries[0].embedded_size);
  EXPECT_EQ(entries[0].embedded_size, 25u + 100u);
  EXPECT_EQ(entries[1].embedded_offset, 0u);
  EXPECT_EQ(entries[2].embedded_size, 25u + 50u);
  std::vector<PicturePair> pairs;
  EXPECT_EQ(compare_embedded_blips(dgg, *out, pairs), "");
  EXPECT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].after.size(), 100u);
}

TEST(OfficeArtRecords, CompareFindsChangesOutsidePictures) {
  const Bytes blip = jpeg_blip(fake_jpeg(200));
  const Bytes dgg = container(
      kDggContainer, {container(kBStoreContainer, {fbse(uint32_t(blip.size()), 0, blip)})});
  size_t changed = 0;
  Bytes out = *rewrite_embedded_blips(dgg, kHalve, changed);
  std::vector<PicturePair> pairs;
  Bytes tampered = out;
  tampered[8 + 8 + 8 + 2] ^= 1;  // the FBSE's rgbUid
  EXPECT_NE(compare_embedded_blips(dgg, tampered, pairs), "");
  tampered = out;
  tampered[8 + 8 + 8 + 36 + 8] ^= 1;  // the BLIP's UID
  EXPECT_NE(compare_embedded_blips(dgg, tampered, pairs), "");
  tampered = out;
  tampered[8 + 8 + 8 + 20] ^= 1;  // the FBSE's size no longer matches
  EXPECT_NE(compare_embedded_blips(dgg, tampered, pairs), "");
  EXPECT_NE(compare_embedded_blips(dgg, Bytes(out.begin(), out.end() - 1), pairs), "");
}

TEST(OfficeArtRecords, FbseWithDisagreeingSizeIsLeftAlone) {
  const Bytes blip = jpeg_blip(fake_jpeg(200));
  const Bytes dgg = container(
      kDggContainer, {container(kBStoreContainer, {fbse(uint32_t(blip.size()) + 1, 0, blip)})});
  size_t changed = 0;
  EXPECT_FALSE(rewrite_embedded_blips(dgg, kHalve, changed));
}

TEST(OfficeArtRecords, MalformedTreesThrow) {
  const Bytes blip = jpeg_blip(fake_jpeg(50));
  Bytes dgg = container(kDggContainer,
                        {container(kBStoreContainer, {fbse(uint32_t(blip.size()), 0, blip)})});
  size_t changed = 0;
  Bytes bad = dgg;
  bad[8 + 4] = 0xF0;  // the BStore claims more than the DggContainer holds
  EXPECT_THROW(rewrite_embedded_blips(bad, kHalve, changed), FormatError);
  EXPECT_THROW(rewrite_embedded_blips(Bytes(dgg.begin(), dgg.end() - 3), kHalve, changed),
               FormatError);
  bad = dgg;
  bad[8 + 8 + 4] = 20;  // an FBSE shorter than its fixed fields
  bad[8 + 8 + 5] = 0;
  EXPECT_THROW(rewrite_embedded_blips(bad, kHalve, changed), FormatError);
  // Containers nested past the limit are refused, not recursed into.
  Bytes deep = testing::officeart(0, 0, 0xF00B, {});
  for (int i = 0; i < 40; ++i) deep = container(0xF004, {deep});
  EXPECT_THROW(rewrite_embedded_blips(deep, kHalve, changed), FormatError);
}

}  // namespace
}  // namespace lighten::officeart
