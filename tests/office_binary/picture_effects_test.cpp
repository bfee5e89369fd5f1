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

// The count in the header bounds the table: an effect just past its last property is not its.
TEST(PictureEffects, TheTableEndsWithItsCount) {
  Bytes table = property_table({{0x0100, 0x2000}, {0x0101, 0}, {kPictureContrast, 0x20000}});
  ASSERT_TRUE(shows(table));
  table[0] = uint8_t((table[0] & 0x0F) | (2 << 4));  // two properties; the length still covers 3
  EXPECT_FALSE(shows(table));
}

// The scan, read naively: every candidate header's properties in turn.
bool shows_naively(ByteView s) {
  for (size_t pos = 0; pos + kHeaderSize <= s.size(); ++pos) {
    const uint16_t vi = uint16_t(s[pos] | s[pos + 1] << 8),
                   type = uint16_t(s[pos + 2] | s[pos + 3] << 8);
    if ((type != kFopt && type != kSecondaryFopt && type != kTertiaryFopt) || (vi & 0xF) != 3)
      continue;
    const size_t count = vi >> 4;
    const uint32_t length = get_u32le(s, pos + 4);
    if (length < count * 6 || s.size() - pos - kHeaderSize < length) continue;
    for (size_t i = 0; i < count; ++i) {
      const size_t at = pos + kHeaderSize + 6 * i;
      const uint16_t opid = uint16_t(s[at] | s[at + 1] << 8);
      const uint32_t v = get_u32le(s, at + 2);
      if (opid & 0x8000) continue;
      const uint16_t id = opid & 0x3FFF;
      if (((id == kPictureTransparent || id == kPictureTransparentExt) && v != 0xFFFFFFFF) ||
          (id == kPictureContrast && int32_t(v) > 0x10000) ||
          (id == kBlipBooleans && (v & 2) && (v & 0x20000)))
        return true;
    }
  }
  return false;
}

// Streams of overlapping table headers, effect properties and noise, answered as the naive scan
// answers them; and a crafted stream where every eighth byte starts a 4,083-property table.
TEST(PictureEffects, EveryStreamIsAnsweredAsTheNaiveScanAnswersIt) {
  uint32_t state = 7;
  auto next = [&state] { return state = state * 1103515245u + 12345u, state >> 8; };
  int shown = 0;
  for (int n = 0; n < 3000; ++n) {
    Bytes stream;
    while (stream.size() < 120) {
      const uint32_t r = next();
      switch (r % 4) {
        case 0: {  // a table header, its count and length drawn small
          const uint16_t count = uint16_t(next() % 6);
          const uint32_t length = next() % 40;
          testing::append(stream,
                          {uint8_t(0x03 | count << 4), 0, 0x0B, 0xF0, uint8_t(length), 0, 0, 0});
          break;
        }
        case 1: {  // a property that is an effect, or one that is not
          const uint16_t id = next() % 2 ? kPictureContrast : 0x0100;
          testing::append(stream, {uint8_t(id), uint8_t(id >> 8), 0, 0, 2, 0});
          break;
        }
        default:
          stream.push_back(uint8_t(next()));
      }
    }
    const bool expected = shows_naively(stream);
    shown += expected;
    ASSERT_EQ(shows_pictures_through_effects(stream), expected) << "stream " << n;
  }
  EXPECT_GT(shown, 300);
  EXPECT_LT(shown, 2700);
  Bytes crafted;
  for (int i = 0; i < 250000; ++i)
    testing::append(crafted, {0x33, 0xFF, 0x0B, 0xF0, 0xB2, 0x5F, 0, 0});
  EXPECT_FALSE(shows_pictures_through_effects(crafted));
}

}  // namespace
}  // namespace lighten::officeart
