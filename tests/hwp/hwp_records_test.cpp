#include "formats/hwp/hwp_records.h"

#include <gtest/gtest.h>

#include "hwp/hwp_maker.h"

namespace lighten::hwp {
namespace {

using testing::put_le16;
using testing::put_record;

TEST(HwpRecords, SplitsRecordsWithShortAndExtendedSizes) {
  Bytes stream;
  put_record(stream, 0x10, 0, Bytes(26, 1));
  put_record(stream, 0x43, 2, Bytes(5000, 2));  // size 0xFFF + UINT32
  put_record(stream, 0x44, 1, {});
  const auto records = parse_records(stream);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].tag, 0x10);
  EXPECT_EQ(records[0].data.size(), 26u);
  EXPECT_EQ(records[1].tag, 0x43);
  EXPECT_EQ(records[1].level, 2);
  EXPECT_EQ(records[1].data.size(), 5000u);
  EXPECT_EQ(records[2].data.size(), 0u);
  EXPECT_EQ(records[2].offset, 4u + 26 + 8 + 5000);
}

TEST(HwpRecords, RejectsRecordsThatRunPastTheEnd) {
  Bytes stream;
  put_record(stream, 0x10, 0, Bytes(40, 1));
  for (size_t cut = 1; cut < stream.size(); ++cut)
    EXPECT_THROW(parse_records(ByteView(stream).first(cut)), FormatError) << cut;
  Bytes huge = {0x43, 0x00, 0xF0, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 1, 2, 3};
  EXPECT_THROW(parse_records(huge), FormatError);
}

TEST(HwpRecords, ReadsBinDataDeclarations) {
  Bytes doc_info, rec;
  put_le16(rec, 0x0001 | 0x20);  // embedding, stored
  put_le16(rec, 0x1A);
  put_le16(rec, 3);
  for (char c : std::string("png")) put_le16(rec, uint8_t(c));
  put_record(doc_info, kTagBinData, 1, rec);
  rec.clear();
  put_le16(rec, 0x0000);  // link: two paths
  put_le16(rec, 2), put_le16(rec, 'C'), put_le16(rec, ':');
  put_le16(rec, 1), put_le16(rec, 'a');
  put_record(doc_info, kTagBinData, 1, rec);
  rec.clear();
  put_le16(rec, 0x0002 | 0x10);  // storage, compressed
  put_le16(rec, 2);
  put_record(doc_info, kTagBinData, 1, rec);
  const auto items = bin_data_items(doc_info);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].stream_name(), "BIN001A.png");
  EXPECT_FALSE(items[0].deflated(true));
  EXPECT_EQ(items[1].type, BinDataType::kLink);
  EXPECT_EQ(items[2].stream_name(), "BIN0002.OLE");
  EXPECT_TRUE(items[2].deflated(false));

  // A record cut inside its id is a damaged record, not a file cut short.
  Bytes bad;
  put_record(bad, kTagBinData, 1, {0x01, 0x00, 0x01});
  try {
    bin_data_items(bad);
    ADD_FAILURE() << "a BinData item cut inside its id was read";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.reason(), Reason::kCorrupt) << e.what();
  }
  Bytes unknown;
  put_record(unknown, kTagBinData, 1, {0x31, 0x00, 0x01, 0x00});  // compression 3
  EXPECT_THROW(bin_data_items(unknown), FormatError);
}

// Pictures number their items with 16 bits: a DocInfo declaring more (millions of 10-byte
// records inflate from a few hundred kilobytes) is damaged, and is refused before it is kept.
TEST(HwpRecords, MoreBinDataItemsThanPicturesCanNumberAreRefused) {
  Bytes doc_info;
  const Bytes link = {0x00, 0x00, 0x00, 0x00, 0x00, 0x00};  // two empty paths
  for (int i = 0; i < 65535; ++i) put_record(doc_info, kTagBinData, 1, link);
  EXPECT_EQ(bin_data_items(doc_info).size(), 65535u);
  put_record(doc_info, kTagBinData, 1, link);
  try {
    bin_data_items(doc_info);
    ADD_FAILURE() << "65536 BinData items were read";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.reason(), Reason::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("more BinData items"), std::string::npos) << e.what();
  }
}

TEST(HwpRecords, ReadsTheLookOfImageFills) {
  using testing::border_fill;
  Bytes doc_info;
  put_record(doc_info, 0x14, 1, border_fill(0x1, {}));            // a colour: no image
  put_record(doc_info, 0x14, 1, border_fill(0x3, {20, 2, 7}));    // a colour and an image
  put_record(doc_info, 0x14, 1, border_fill(0x2, {-5, 1, 300}));  // an image alone
  put_record(doc_info, 0x14, 1, border_fill(0x6, {}));            // an image and a gradient
  Bytes cut = border_fill(0x3, {});
  cut.resize(32 + 4 + 12 + 3);
  put_record(doc_info, 0x14, 1, cut);                           // too short for the look
  put_record(doc_info, 0x12, 1, border_fill(0x3, {20, 2, 7}));  // not a border fill
  const std::vector<FillLook> looks = border_fill_looks(doc_info);
  ASSERT_EQ(looks.size(), 3u);
  EXPECT_FALSE(looks[0].unread);
  EXPECT_EQ(looks[0].look.contrast, 20);
  EXPECT_EQ(looks[0].look.effect, 2);
  EXPECT_EQ(looks[0].look.bin_item, 7);
  EXPECT_EQ(looks[1].look.contrast, -5);
  EXPECT_EQ(looks[1].look.effect, 1);
  EXPECT_EQ(looks[1].look.bin_item, 300);
  EXPECT_TRUE(looks[2].unread);
}

TEST(HwpRecords, ReadsTheLookOfDrawingShapesImageFills) {
  using testing::shape_component;
  Bytes section;
  put_record(section, 0x4C, 2, shape_component("$rec", 1, 0x3, {20, 2, 7}));
  put_record(section, 0x4C, 2, shape_component("$ell", 3, 0x2, {-5, 1, 300}));
  put_record(section, 0x4C, 2, shape_component("$pol", 0, 0x1, {}));          // a colour: no image
  put_record(section, 0x4C, 2, shape_component("$rec", 0, 0x6, {}));          // and a gradient
  put_record(section, 0x4C, 2, shape_component("$rec", 0, 0x13, {}));         // no fill type
  put_record(section, 0x4C, 2, shape_component("$con", 1, 0x3, {20, 2, 7}));  // a group
  // A picture's component ends with its rendering information.
  Bytes picture = shape_component("$pic", 1, 0x3, {20, 2, 7});
  picture.resize(8 + 42 + 2 + 3 * 48);
  put_record(section, 0x4C, 2, picture);
  // The id written once, as for a member of a group.
  Bytes member = shape_component("$arc", 1, 0x2, {0, 2, 4});
  member.erase(member.begin(), member.begin() + 4);
  put_record(section, 0x4C, 3, member);
  // More matrix pairs than the record holds.
  Bytes cut = shape_component("$rec", 1, 0x3, {20, 2, 7});
  cut[8 + 42] = 200;
  put_record(section, 0x4C, 2, cut);
  const std::vector<FillLook> looks = shape_fill_looks(section);
  ASSERT_EQ(looks.size(), 5u);
  EXPECT_EQ(looks[0].look.contrast, 20);
  EXPECT_EQ(looks[0].look.effect, 2);
  EXPECT_EQ(looks[0].look.bin_item, 7);
  EXPECT_EQ(looks[1].look.contrast, -5);
  EXPECT_EQ(looks[1].look.bin_item, 300);
  EXPECT_TRUE(looks[2].unread);
  EXPECT_TRUE(looks[3].unread);
  EXPECT_FALSE(looks[4].unread);
  EXPECT_EQ(looks[4].look.effect, 2);
  EXPECT_EQ(looks[4].look.bin_item, 4);
}

TEST(HwpRecords, ExtractsParagraphText) {
  Bytes section = testing::hwp_section(u"abc 한글");
  Bytes chars;
  for (char16_t c : std::u16string(u"x")) put_le16(chars, c);
  put_le16(chars, 11);  // an extended control: 8 units
  for (int i = 0; i < 7; ++i) put_le16(chars, 'Z');
  put_le16(chars, 'y');
  put_le16(chars, 13);
  put_record(section, 0x43, 1, chars);
  EXPECT_EQ(paragraph_text(section), u"abc 한글\nxy\n");
}

}  // namespace
}  // namespace lighten::hwp
