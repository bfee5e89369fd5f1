#include <gtest/gtest.h>

#include "core/bytes.h"

namespace lighten {
namespace {

TEST(ByteReader, ReadsBothByteOrders) {
  const uint8_t data[] = {0x12, 0x34, 0x56, 0x78, 0x9A};
  ByteReader r(data);
  EXPECT_EQ(r.u16be(), 0x1234);
  EXPECT_EQ(r.u16le(), 0x7856);
  EXPECT_EQ(r.remaining(), 1u);
  ByteReader r2(data);
  EXPECT_EQ(r2.u32be(), 0x12345678u);
  ByteReader r3(data);
  EXPECT_EQ(r3.u32le(), 0x78563412u);
}

TEST(ByteReader, NeverReadsPastTheEnd) {
  const uint8_t data[] = {1, 2, 3};
  ByteReader r(data);
  r.skip(2);
  try {
    r.u16be();
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_EQ(e.reason(), Reason::kTruncated);
    EXPECT_EQ(e.offset(), 2u);
  }
  EXPECT_THROW(r.take(SIZE_MAX), FormatError);
  EXPECT_THROW(r.seek(4), FormatError);
  EXPECT_THROW(ByteReader(data, 4), FormatError);
}

}  // namespace
}  // namespace lighten
