// Picture effects read from OfficeArt property tables, on synthetic record streams.
#include "formats/office_binary/picture_effects.h"

#include <gtest/gtest.h>

#include "formats/office_binary/officeart_records.h"
#include "office_binary/record_maker.h"

namespace lighten::officeart {
namespace {

using testing::property_table;

// A stream with the table among other records, as in a slide's drawing container.
bool shows(const Bytes& table) {
  Bytes stream = testing::officeart(1, 0, 0x03E9, Bytes(40, 3));
  testing::append(stream, table);
  testing::append(stream, testing::officeart(0, 0, 0xF00A, Bytes(8, 0)));
  return shows_pictures_through_effects(stream);
}

TEST(PictureEffects, ColourKeyBiLevelAndRaisedContrastShow) {
  constexpr uint16_t kPib = 0x4104;  // pib, fBid set
  EXPECT_FALSE(shows(property_table({{kPib, 1}, {0x0100, 0x2000}})));
  // A transparent colour; 0xFFFFFFFF says none.
  EXPECT_TRUE(shows(property_table({{kPib, 1}, {kPictureTransparent, 0x00FFFFFF}})));
  EXPECT_FALSE(shows(property_table({{kPib, 1}, {kPictureTransparent, 0xFFFFFFFF}})));
  EXPECT_TRUE(shows(property_table({{kPictureTransparentExt, 0x00FF00FF}})));
  EXPECT_FALSE(shows(property_table({{kPictureTransparentExt, 0xFFFFFFFF}})));
  // Contrast above the neutral 0x10000 raises it; below washes the picture out.
  EXPECT_TRUE(shows(property_table({{kPictureContrast, 0x20000}})));
  EXPECT_FALSE(shows(property_table({{kPictureContrast, 0x10000}})));
  EXPECT_FALSE(shows(property_table({{kPictureContrast, 0x8000}})));
  // Black and white counts only where its "use" bit says the value is set.
  EXPECT_TRUE(shows(property_table({{kBlipBooleans, 0x00020002}})));
  EXPECT_FALSE(shows(property_table({{kBlipBooleans, 0x00000002}})));
  EXPECT_FALSE(shows(property_table({{kBlipBooleans, 0x00020000}})));
  // Grey scale alone changes nothing the floor does not cover.
  EXPECT_FALSE(shows(property_table({{kBlipBooleans, 0x00040004}})));
  // Tertiary tables count as well.
  EXPECT_TRUE(shows(property_table({{kPictureTransparent, 0}}, kTertiaryFopt)));
}

TEST(PictureEffects, OnlyWellFormedTablesAreRead) {
  Bytes table = property_table({{kPictureTransparent, 0x0000FF00}});
  ASSERT_TRUE(shows(table));
  // A complex property's value is a length, not a colour.
  Bytes complex = table;
  complex[kHeaderSize + 1] |= 0x80;
  EXPECT_FALSE(shows(complex));
  // Another record version, or a length shorter than its properties: not a table.
  Bytes version = table;
  version[0] = uint8_t((version[0] & 0xF0) | 2);
  EXPECT_FALSE(shows(version));
  Bytes short_length = table;
  short_length[4] = 5;
  EXPECT_FALSE(shows(short_length));
  // A table running past the stream's end is not read past it.
  table.pop_back();
  EXPECT_FALSE(shows_pictures_through_effects(table));
  EXPECT_FALSE(shows_pictures_through_effects({}));
}

}  // namespace
}  // namespace lighten::officeart
