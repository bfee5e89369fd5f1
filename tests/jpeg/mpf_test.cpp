#include "formats/jpeg/mpf.h"

#include <gtest/gtest.h>

#include <string>

#include "formats/jpeg/jpeg_format.h"
#include "test_support.h"

namespace lighten::jpeg {
namespace {

using testing::EncodeOptions;
using testing::make_jpeg;
using testing::TestContext;

void put32(std::string& s, uint32_t v, bool le) {
  for (int i = 0; i < 4; ++i) s += char(le ? v >> (8 * i) : v >> (8 * (3 - i)));
}
void put16(std::string& s, uint16_t v, bool le) {
  s += char(le ? v : v >> 8);
  s += char(le ? v >> 8 : v);
}

// "MPF\0", a TIFF header, an IFD with version, image count and two MP Entries at TIFF offset 50.
std::string mpf_payload(bool le) {
  std::string s("MPF\0", 4);
  s += le ? std::string("II*\0", 4) : std::string("MM\0*", 4);
  put32(s, 8, le);
  put16(s, 3, le);
  put16(s, 0xB000, le), put16(s, 7, le), put32(s, 4, le), s += "0100";
  put16(s, 0xB001, le), put16(s, 4, le), put32(s, 1, le), put32(s, 2, le);
  put16(s, 0xB002, le), put16(s, 7, le), put32(s, 32, le), put32(s, 50, le);
  put32(s, 0, le);
  for (int i = 0; i < 2; ++i)
    put32(s, i == 0 ? 0x20030000 : 0x00020002, le), put32(s, 0, le), put32(s, 0, le),
        put32(s, 0, le);
  return s;
}

void set32(Bytes& b, size_t at, uint32_t v, bool le) {
  for (int i = 0; i < 4; ++i) b.at(at + i) = uint8_t(le ? v >> (8 * i) : v >> (8 * (3 - i)));
}

// A primary image with an MPF index and a secondary image after its EOI.
Bytes mpf_file(bool le, int32_t offset_error = 0) {
  EncodeOptions o;
  o.quality = 95;
  o.markers = {{JPEG_APP0 + 2, mpf_payload(le)}};
  Bytes primary = make_jpeg(o);
  EncodeOptions s;
  s.width = 16;
  s.height = 8;
  Bytes secondary = make_jpeg(s);
  Layout l = parse_layout(primary);
  size_t seg = 0;
  for (const Segment& x : l.segments)
    if (is_mpf_segment(x)) seg = x.offset;
  const size_t tiff = seg + MpfIndex::kTiffInSegment;
  set32(primary, tiff + 50 + 4, uint32_t(primary.size()), le);
  set32(primary, tiff + 50 + 16 + 4, uint32_t(secondary.size()), le);
  set32(primary, tiff + 50 + 16 + 8, uint32_t(primary.size() - tiff + offset_error), le);
  primary.insert(primary.end(), secondary.begin(), secondary.end());
  return primary;
}

TEST(JpegMpf, ParsesBothByteOrders) {
  for (bool le : {true, false}) {
    Bytes file = mpf_file(le);
    Layout l = parse_layout(file);
    auto mpf = parse_mpf(file, l);
    ASSERT_TRUE(mpf);
    EXPECT_EQ(mpf->little_endian, le);
    ASSERT_EQ(mpf->entries.size(), 2u);
    EXPECT_EQ(mpf->entries[0].offset, 0u);
    EXPECT_EQ(mpf->entries[0].size, l.image_end);
    EXPECT_EQ(mpf->segment_offset + MpfIndex::kTiffInSegment + mpf->entries[1].offset, l.image_end);
  }
}

TEST(JpegMpf, OffsetsFollowTheShrunkPrimary) {
  for (bool le : {true, false}) {
    Bytes in = mpf_file(le);
    Layout li = parse_layout(in);
    TestContext context;
    Outcome out = optimize_jpeg(in, context);
    ASSERT_TRUE(out.replaced());
    Layout lo = parse_layout(out.bytes);
    EXPECT_LT(lo.image_end, li.image_end);
    auto mpf = parse_mpf(out.bytes, lo);
    ASSERT_TRUE(mpf);
    EXPECT_EQ(mpf->entries[0].size, lo.image_end);
    EXPECT_EQ(mpf->segment_offset + MpfIndex::kTiffInSegment + mpf->entries[1].offset,
              lo.image_end);
    Verdict v = verify_jpeg(in, out.bytes, context.policy());
    EXPECT_TRUE(v.ok) << v.problem;
  }
}

TEST(JpegMpf, BrokenIndexLeavesTheFileAlone) {
  Bytes in = mpf_file(true, 3);
  TestContext context;
  try {
    optimize_jpeg(in, context);
    FAIL() << "expected a FormatError";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.reason(), Reason::kUnsupportedVariant);
    EXPECT_NE(std::string(e.what()).find("MPF index points outside"), std::string::npos);
  }
}

TEST(JpegMpf, TruncatedIndexIsCorrupt) {
  Bytes in = mpf_file(false);
  Layout l = parse_layout(in);
  auto mpf = parse_mpf(in, l);
  ASSERT_TRUE(mpf);
  // Point the MP Entry data past the segment.
  set32(in, mpf->segment_offset + MpfIndex::kTiffInSegment + 10 + 24 + 8, 5000, false);
  try {
    parse_mpf(in, parse_layout(in));
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_EQ(e.reason(), Reason::kCorrupt);
  }
}

}  // namespace
}  // namespace lighten::jpeg
