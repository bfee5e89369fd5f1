#include "formats/jpeg/markers.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace lighten::jpeg {
namespace {

using testing::EncodeOptions;
using testing::make_jpeg;

Reason reason_of(const Bytes& bytes) {
  try {
    parse_layout(bytes);
  } catch (const FormatError& e) {
    return e.reason();
  }
  return Reason::kOptimized;
}

TEST(JpegMarkers, WalksSegmentsAndFindsTheEnd) {
  EncodeOptions o;
  o.markers = {{JPEG_COM, "hello"}, {JPEG_APP0 + 1, "Exif"}};
  Bytes jpeg = make_jpeg(o);
  jpeg.insert(jpeg.end(), {'t', 'a', 'i', 'l'});
  Layout l = parse_layout(jpeg);
  EXPECT_EQ(l.image_end, jpeg.size() - 4);
  EXPECT_EQ(l.trailing(jpeg).size(), 4u);
  EXPECT_EQ(l.frame.width, 67);
  EXPECT_EQ(l.frame.height, 45);
  EXPECT_EQ(l.frame.components.size(), 3u);
  EXPECT_EQ(l.scans, 1u);
  EXPECT_EQ(l.junk_bytes, 0u);
  int metadata = 0;
  for (const Segment& s : l.segments) metadata += s.is_metadata();
  EXPECT_EQ(metadata, 3);  // JFIF, COM, APP1
  EXPECT_EQ(l.segments[l.sof_index].marker, 0xC0);
}

TEST(JpegMarkers, ProgressiveHasManyScans) {
  EncodeOptions o;
  o.progressive = true;
  Layout l = parse_layout(make_jpeg(o));
  EXPECT_GT(l.scans, 5u);
  EXPECT_EQ(l.frame.marker, 0xC2);
}

TEST(JpegMarkers, CountsJunkBetweenMarkers) {
  Bytes jpeg = make_jpeg({});
  jpeg.insert(jpeg.begin() + 2, {0x12, 0x34, 0x56});
  Layout l = parse_layout(jpeg);
  EXPECT_EQ(l.junk_bytes, 3u);
  EXPECT_EQ(l.fill_bytes, 0u);
  // 0xFF fill bytes before a marker are allowed (T.81 B.1.1.2): counted apart, not as junk.
  jpeg.insert(jpeg.begin() + 5, {0xFF, 0xFF});
  l = parse_layout(jpeg);
  EXPECT_EQ(l.junk_bytes, 3u);
  EXPECT_EQ(l.fill_bytes, 2u);
}

// The reason `jpeg` is refused for with bytes of its frame header (from its FF) set as given.
Reason reason_with_frame_bytes(Bytes jpeg, std::initializer_list<std::pair<size_t, uint8_t>> set) {
  const Layout l = parse_layout(jpeg);
  const size_t sof = l.segments[l.sof_index].offset;
  for (const auto& [at, value] : set) jpeg[sof + at] = value;
  return reason_of(jpeg);
}

TEST(JpegMarkers, RejectsBadInput) {
  Bytes jpeg = make_jpeg({});
  EXPECT_EQ(reason_of({}), Reason::kEmpty);
  EXPECT_EQ(reason_of({0x89, 'P', 'N', 'G'}), Reason::kCorrupt);
  for (size_t cut : {size_t(3), size_t(20), jpeg.size() / 2, jpeg.size() - 1})
    EXPECT_EQ(reason_of(Bytes(jpeg.begin(), jpeg.begin() + cut)), Reason::kTruncated) << cut;
  // A segment length below 2.
  Bytes bad = {0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01, 0xFF, 0xD9};
  EXPECT_EQ(reason_of(bad), Reason::kCorrupt);
  // EOI without a frame.
  EXPECT_EQ(reason_of({0xFF, 0xD8, 0xFF, 0xD9}), Reason::kCorrupt);
  // A frame header that claims components its length does not hold, or a precision T.81 has not
  // (12 is a variant, above), is damage.
  EXPECT_EQ(reason_with_frame_bytes(jpeg, {{9, 105}}), Reason::kCorrupt);
  EXPECT_EQ(reason_with_frame_bytes(jpeg, {{4, 169}}), Reason::kCorrupt);
}

TEST(JpegMarkers, RejectsVariantsLibjpegCannotCarry) {
  const Bytes jpeg = make_jpeg({});
  EXPECT_EQ(reason_with_frame_bytes(jpeg, {{1, 0xC3}}), Reason::kUnsupportedVariant);  // lossless
  EXPECT_EQ(reason_with_frame_bytes(jpeg, {{1, 0xC5}}), Reason::kUnsupportedVariant);
  EXPECT_EQ(reason_with_frame_bytes(jpeg, {{1, 0xC1}, {4, 12}}), Reason::kUnsupportedVariant);
  EXPECT_EQ(reason_with_frame_bytes(jpeg, {{1, 0xF7}}), Reason::kUnsupportedVariant);  // SOF55
}

// A frame header that claims more blocks than the scans could code (at a bit each at least) is
// damage, told before any decoder allocates for the claimed size.
TEST(JpegMarkers, ScansTooShortForTheFrameAreDamage) {
  Bytes jpeg = make_jpeg({});
  const size_t sof = parse_layout(jpeg).segments[parse_layout(jpeg).sof_index].offset;
  Bytes claimed = jpeg;
  for (size_t at : {sof + 5, sof + 7}) claimed[at] = 20000 >> 8, claimed[at + 1] = 20000 & 0xFF;
  EXPECT_EQ(reason_of(claimed), Reason::kCorrupt);
  try {
    parse_layout(claimed);
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("too few for the 9375000 blocks of a 20000x20000"),
              std::string::npos)
        << e.what();
  }
  // A flat gray image codes each block in a few bits: far more blocks than bytes, and valid.
  EncodeOptions flat;
  flat.width = flat.height = 1024;
  flat.components = 1;
  flat.pixels.assign(size_t(1024) * 1024, 128);
  const Bytes small = make_jpeg(flat);
  EXPECT_LT(small.size(), size_t(1024 / 8) * (1024 / 8));
  EXPECT_NO_THROW(parse_layout(small));
}

// A sequential frame codes each component in one scan: a second scan of it (libjpeg lays one
// over the other, other decoders keep either) or none at all is damage.
TEST(JpegMarkers, EachComponentOfASequentialFrameIsCodedOnce) {
  const Bytes jpeg = make_jpeg({});
  const Layout l = parse_layout(jpeg);
  const Segment* sos = nullptr;
  for (const Segment& s : l.segments)
    if (s.marker == kSos) sos = &s;
  ASSERT_NE(sos, nullptr);
  ASSERT_EQ(sos->payload[0], 3);
  Bytes twice(jpeg.begin(), jpeg.begin() + long(sos->entropy_end));
  twice.insert(twice.end(), jpeg.begin() + long(sos->offset), jpeg.end());
  EXPECT_EQ(reason_of(twice), Reason::kCorrupt);
  // The scan names two of the three components: the third is coded nowhere.
  Bytes two(jpeg.begin(), jpeg.begin() + long(sos->offset));
  const size_t length = sos->length - 2 - 2;  // the length field counts itself
  two.insert(two.end(), {0xFF, kSos, uint8_t(length >> 8), uint8_t(length), 2});
  two.insert(two.end(), sos->payload.begin() + 1, sos->payload.begin() + 5);
  two.insert(two.end(), jpeg.begin() + long(sos->offset + 4 + 7), jpeg.end());
  try {
    parse_layout(two);
    ADD_FAILURE() << "a component no scan codes passed";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.reason(), Reason::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("coded in no scan"), std::string::npos) << e.what();
  }
  EncodeOptions progressive;
  progressive.progressive = true;
  EXPECT_NO_THROW(parse_layout(make_jpeg(progressive)));
}

}  // namespace
}  // namespace lighten::jpeg
