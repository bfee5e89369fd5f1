#include "formats/jpeg/mpf.h"

#include <gtest/gtest.h>

#include <string>

#include "formats/jpeg/jpeg_format.h"
#include "formats/jpeg/metadata.h"
#include "formats/jpeg/secondary_images.h"
#include "support/direct_context.h"
#include "test_support.h"

namespace lighten::jpeg {
namespace {

using testing::DirectContext;
using testing::EncodeOptions;
using testing::make_jpeg;
using testing::TestContext;

// MP Types of the secondary image (DC-007): a stereo view, a preview, an undefined image (an
// HDR gain map is stored as one).
constexpr uint32_t kDisparity = 0x00020002, kPreview = 0x00010002, kUndefined = 0;

void put32(std::string& s, uint32_t v, bool le) {
  for (int i = 0; i < 4; ++i) s += char(le ? v >> (8 * i) : v >> (8 * (3 - i)));
}
void put16(std::string& s, uint16_t v, bool le) {
  s += char(le ? v : v >> 8);
  s += char(le ? v >> 8 : v);
}

// "MPF\0", a TIFF header, an IFD with version, image count and two MP Entries after the IFD (at
// TIFF offset 50 with one MP Entry tag; `entry_tags` more than one list the same table again).
std::string mpf_payload(bool le, uint32_t secondary_type, uint16_t entry_tags = 1) {
  const uint32_t entries_at = 8 + 2 + 12 * (2 + entry_tags) + 4;
  std::string s("MPF\0", 4);
  s += le ? std::string("II*\0", 4) : std::string("MM\0*", 4);
  put32(s, 8, le);
  put16(s, 2 + entry_tags, le);
  put16(s, 0xB000, le), put16(s, 7, le), put32(s, 4, le), s += "0100";
  put16(s, 0xB001, le), put16(s, 4, le), put32(s, 1, le), put32(s, 2, le);
  for (uint16_t i = 0; i < entry_tags; ++i)
    put16(s, 0xB002, le), put16(s, 7, le), put32(s, 32, le), put32(s, entries_at, le);
  put32(s, 0, le);
  for (int i = 0; i < 2; ++i)
    put32(s, i == 0 ? 0x20030000 : secondary_type, le), put32(s, 0, le), put32(s, 0, le),
        put32(s, 0, le);
  return s;
}

void set32(Bytes& b, size_t at, uint32_t v, bool le) {
  for (int i = 0; i < 4; ++i) b.at(at + i) = uint8_t(le ? v >> (8 * i) : v >> (8 * (3 - i)));
}

struct MpfFileOptions {
  int32_t offset_error = 0;  // added to the secondary image's offset
  uint32_t secondary_type = kDisparity;
  int secondary_width = 16, secondary_height = 8;
  std::string gap = {}, tail = {};  // bytes before and after the secondary image
  std::string xmp = {};             // an XMP packet for an APP1 segment, when not empty
};

// A primary image with an MPF index and a secondary image after its EOI.
Bytes mpf_file(bool le, const MpfFileOptions& m = {}) {
  EncodeOptions o;
  o.quality = 95;
  o.markers = {{JPEG_APP0 + 2, mpf_payload(le, m.secondary_type)}};
  if (!m.xmp.empty())
    o.markers.insert(o.markers.begin(),
                     {JPEG_APP0 + 1, std::string("http://ns.adobe.com/xap/1.0/\0", 29) + m.xmp});
  Bytes primary = make_jpeg(o);
  EncodeOptions s;
  s.width = m.secondary_width;
  s.height = m.secondary_height;
  s.quality = 95;
  Bytes secondary = make_jpeg(s);
  Layout l = parse_layout(primary);
  size_t seg = 0;
  for (const Segment& x : l.segments)
    if (is_mpf_segment(x)) seg = x.offset;
  const size_t tiff = seg + MpfIndex::kTiffInSegment;
  set32(primary, tiff + 50 + 4, uint32_t(primary.size()), le);
  set32(primary, tiff + 50 + 16 + 4, uint32_t(secondary.size()), le);
  set32(primary, tiff + 50 + 16 + 8,
        uint32_t(primary.size() + m.gap.size() - tiff + m.offset_error), le);
  primary.insert(primary.end(), m.gap.begin(), m.gap.end());
  primary.insert(primary.end(), secondary.begin(), secondary.end());
  primary.insert(primary.end(), m.tail.begin(), m.tail.end());
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
  Bytes in = mpf_file(true, {.offset_error = 3});
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

// An IFD may hold the MP Entry tag only once: a segment of repeated tags, each pointing at the
// same table, would otherwise list thousands of entries per 12 bytes (a 65 kB segment, 400 MB).
TEST(JpegMpf, ARepeatedEntryTagIsRefused) {
  for (bool le : {true, false}) {
    EncodeOptions o;
    o.markers = {{JPEG_APP0 + 2, mpf_payload(le, kPreview, 2)}};
    const Bytes file = make_jpeg(o);
    EXPECT_THROW(parse_mpf(file, parse_layout(file)), FormatError);
    o.markers = {{JPEG_APP0 + 2, mpf_payload(le, kPreview)}};
    const Bytes once = make_jpeg(o);
    EXPECT_NO_THROW(parse_mpf(once, parse_layout(once)));
  }
}

// The secondary image of `file` as its MPF index locates it.
ByteView secondary_of(const Bytes& file) {
  const Layout l = parse_layout(file);
  const auto mpf = parse_mpf(file, l);
  if (!mpf) return {};
  const auto images = locate_secondary_images(file, l, *mpf);
  if (!images || images->size() != 1) return {};
  return ByteView(file).subspan(images->front().begin, images->front().end - images->front().begin);
}

TEST(JpegMpf, SecondaryImagesAreOptimisedInPlaceOfTheOriginals) {
  for (bool le : {true, false}) {
    const Bytes in = mpf_file(le, {.secondary_width = 96,
                                   .secondary_height = 64,
                                   .gap = std::string(5, '\0'),
                                   .tail = "tail bytes"});
    DirectContext context;
    const Outcome out = optimize_jpeg(in, context);
    ASSERT_TRUE(out.replaced()) << out.message;
    EXPECT_EQ(context.embedded_calls, 1);
    EXPECT_NE(out.detail.find("1 of 1 secondary images (MPF)"), std::string::npos) << out.detail;
    const ByteView before = secondary_of(in), after = secondary_of(out.bytes);
    ASSERT_FALSE(after.empty());
    EXPECT_LT(after.size(), before.size());
    // Lossless: the same coefficients, and the bytes around the image as they were.
    EXPECT_TRUE(verify_jpeg(before, after, context.policy()).ok);
    const Layout lo = parse_layout(out.bytes);
    const ByteView trailing = lo.trailing(out.bytes);
    EXPECT_TRUE(std::equal(trailing.begin(), trailing.begin() + 5, std::string(5, '\0').begin()));
    const std::string tail(trailing.end() - 10, trailing.end());
    EXPECT_EQ(tail, "tail bytes");
    Verdict v = verify_jpeg(in, out.bytes, context.policy(), std::nullopt, std::nullopt, &context);
    EXPECT_TRUE(v.ok) << v.problem;
    // Without a context a changed secondary image cannot be checked, so it fails.
    v = verify_jpeg(in, out.bytes, context.policy());
    EXPECT_FALSE(v.ok);
    EXPECT_NE(v.problem.find("secondary image 2 changed"), std::string::npos) << v.problem;
    // A second run finds nothing more to do in the secondary image.
    DirectContext again;
    const Outcome second = optimize_jpeg(out.bytes, again);
    EXPECT_EQ(second.detail.find("secondary images"), std::string::npos) << second.detail;
  }
}

// An Ultra HDR file's XMP lists the gain map after the image with its length (Google's container
// directory, Item:Length), and readers may find it by that length: the secondary images keep
// their bytes, while the primary image is still optimised.
TEST(JpegMpf, SecondaryImagesWhoseLengthsTheXmpRecordsAreKept) {
  const std::string directory =
      "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF "
      "xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description "
      "xmlns:Container=\"http://ns.google.com/photos/1.0/container/\" "
      "xmlns:Item=\"http://ns.google.com/photos/1.0/container/item/\"><Container:Directory>"
      "<rdf:Seq><rdf:li rdf:parseType=\"Resource\"><Container:Item Item:Semantic=\"Primary\" "
      "Item:Mime=\"image/jpeg\"/></rdf:li><rdf:li rdf:parseType=\"Resource\"><Container:Item "
      "Item:Semantic=\"GainMap\" Item:Mime=\"image/jpeg\" Item:Length=\"LENGTH\"/></rdf:li>"
      "</rdf:Seq></Container:Directory></rdf:Description></rdf:RDF></x:xmpmeta>";
  for (bool le : {true, false}) {
    MpfFileOptions m{.secondary_type = kUndefined, .secondary_width = 96, .secondary_height = 64};
    const size_t gain_map = secondary_of(mpf_file(le, m)).size();
    m.xmp = directory;
    m.xmp.replace(m.xmp.find("LENGTH"), 6, std::to_string(gain_map));
    const Bytes in = mpf_file(le, m);
    ASSERT_EQ(secondary_of(in).size(), gain_map);
    DirectContext context;
    const Outcome out = optimize_jpeg(in, context);
    ASSERT_TRUE(out.replaced()) << out.message;
    EXPECT_EQ(context.embedded_calls, 0);
    EXPECT_NE(out.detail.find("kept as they are (the XMP container directory records their "
                              "lengths)"),
              std::string::npos)
        << out.detail;
    const ByteView before = secondary_of(in), after = secondary_of(out.bytes);
    EXPECT_TRUE(std::equal(before.begin(), before.end(), after.begin(), after.end()));
    EXPECT_TRUE(
        verify_jpeg(in, out.bytes, context.policy(), std::nullopt, std::nullopt, &context).ok);
    // With --metadata strip the XMP goes, and the gain map with it is optimised at once: a
    // second run, which finds no directory, finds nothing more to do.
    Policy strip;
    strip.metadata = MetadataPolicy::kStrip;
    DirectContext stripping(strip);
    const Outcome stripped = optimize_jpeg(in, stripping);
    ASSERT_TRUE(stripped.replaced()) << stripped.message;
    EXPECT_NE(stripped.detail.find("1 of 1 secondary images (MPF)"), std::string::npos)
        << stripped.detail;
    DirectContext again(strip);
    const Outcome second = optimize_jpeg(stripped.bytes, again);
    EXPECT_FALSE(second.replaced() && second.bytes != stripped.bytes) << second.detail;
    // Without the directory the same gain map is optimised (losslessly: it is no view).
    m.xmp.clear();
    DirectContext plain;
    EXPECT_NE(optimize_jpeg(mpf_file(le, m), plain).detail.find("1 of 1 secondary images (MPF)"),
              std::string::npos);
  }
}

TEST(JpegMpf, ChangedBytesAroundOrInsideSecondaryImagesFailVerification) {
  const Bytes in =
      mpf_file(true, {.secondary_width = 96, .secondary_height = 64, .gap = "gap", .tail = "tail"});
  DirectContext context;
  const Outcome out = optimize_jpeg(in, context);
  ASSERT_TRUE(out.replaced());
  const Layout lo = parse_layout(out.bytes);
  // Whether the output with one byte flipped at `at` fails verification.
  auto fails = [&](size_t at, uint8_t mask) {
    Bytes changed = out.bytes;
    changed.at(at) ^= mask;
    return !verify_jpeg(in, changed, context.policy(), std::nullopt, std::nullopt, &context).ok;
  };
  EXPECT_TRUE(fails(lo.image_end, 1));          // the gap before the secondary image
  EXPECT_TRUE(fails(out.bytes.size() - 2, 1));  // the tail after it
  // A coefficient of the secondary image changed: its lossless check fails.
  const ByteView after = secondary_of(out.bytes);
  const size_t at = size_t(after.data() - out.bytes.data());
  EXPECT_TRUE(fails(at + parse_layout(after).segments.back().end() + 20, 0x10));
  // The index itself: its version, the image count, an entry's attribute and its dependent
  // images may not change; only the sizes and offsets follow the images.
  const auto mpf = parse_mpf(out.bytes, lo);
  ASSERT_TRUE(mpf);
  const size_t tiff = mpf->segment_offset + MpfIndex::kTiffInSegment;
  EXPECT_TRUE(fails(tiff + 8 + 2 + 8, 1));                                         // the version
  EXPECT_TRUE(fails(mpf->segment_offset + mpf->entries[1].field_offset, 1));       // attribute
  EXPECT_TRUE(fails(mpf->segment_offset + mpf->entries[1].field_offset + 12, 1));  // dependents
  EXPECT_TRUE(
      verify_jpeg(in, out.bytes, context.policy(), std::nullopt, std::nullopt, &context).ok);
}

// Asked for progressive scans, the primary image gets them; the secondary images keep theirs
// (a camera shows its previews on playback, baseline).
TEST(JpegMpf, SecondaryImagesKeepTheirScans) {
  const Bytes in =
      mpf_file(true, {.secondary_type = kPreview, .secondary_width = 160, .secondary_height = 120});
  Policy policy;
  policy.jpeg_scans = ScanMode::kProgressive;
  DirectContext context(policy);
  const Outcome out = optimize_jpeg(in, context);
  ASSERT_TRUE(out.replaced()) << out.message;
  EXPECT_EQ(parse_layout(out.bytes).frame.marker, 0xC2);
  const ByteView after = secondary_of(out.bytes);
  ASSERT_FALSE(after.empty());
  EXPECT_EQ(parse_layout(after).frame.marker, 0xC0);
}

TEST(JpegMpf, ViewsFollowThePerceptualModeAndOtherImagesStayLossless) {
  for (uint32_t type : {kPreview, kUndefined}) {
    const Bytes in =
        mpf_file(false, {.secondary_type = type, .secondary_width = 160, .secondary_height = 120});
    Policy policy;
    policy.mode = Mode::kHigh;
    DirectContext context(policy);
    const Outcome out = optimize_jpeg(in, context);
    ASSERT_TRUE(out.replaced()) << out.message;
    const ByteView before = secondary_of(in), after = secondary_of(out.bytes);
    ASSERT_FALSE(after.empty());
    Policy lossless;
    const Verdict same = verify_jpeg(before, after, lossless);
    // A preview is requantised like the primary (and carries the marker that stops a re-run
    // from requantising it again); a gain map or an image of unknown use keeps its coefficients.
    EXPECT_EQ(same.ok, type == kUndefined) << same.problem;
    EXPECT_EQ(has_quality_marker(parse_layout(after)), type == kPreview);
    const Verdict v = verify_jpeg(in, out.bytes, policy, std::nullopt, std::nullopt, &context);
    EXPECT_TRUE(v.ok) << v.problem;
  }
  Policy compact;
  compact.mode = Mode::kCompact;
  EXPECT_EQ(secondary_image_policy(0x80000000 | kPreview, compact).mode, Mode::kCompact);
  EXPECT_EQ(secondary_image_policy(0x01000000 | kPreview, compact).mode,
            Mode::kLossless);  // not JPEG data
}

TEST(JpegMpf, SecondaryImagesTheIndexDoesNotLocateAreKeptAsTheyAre) {
  for (int damage = 0; damage < 2; ++damage) {
    Bytes in = mpf_file(true, {.secondary_width = 96, .secondary_height = 64});
    const Layout l = parse_layout(in);
    const auto mpf = parse_mpf(in, l);
    ASSERT_TRUE(mpf);
    const size_t field = mpf->segment_offset + mpf->entries[1].field_offset;
    if (damage == 0) set32(in, field + 4, uint32_t(in.size()), true);  // size past the end
    if (damage == 1) set32(in, field + 4, 3, true);                    // too small for an image
    EXPECT_FALSE(locate_secondary_images(in, l, *parse_mpf(in, l)));
    DirectContext context;
    Outcome out;
    try {
      out = optimize_jpeg(in, context);
    } catch (const FormatError& e) {
      // Only the index the primary's offsets cannot follow is refused, with its reason.
      EXPECT_EQ(e.reason(), Reason::kUnsupportedVariant) << e.what();
      continue;
    }
    EXPECT_EQ(context.embedded_calls, 0);
    const Layout lo = parse_layout(out.bytes);
    const ByteView ta = l.trailing(in), tb = lo.trailing(out.bytes);
    EXPECT_TRUE(std::equal(ta.begin(), ta.end(), tb.begin(), tb.end()));
    const Verdict v =
        verify_jpeg(in, out.bytes, context.policy(), std::nullopt, std::nullopt, &context);
    EXPECT_TRUE(v.ok) << v.problem;
  }
}

TEST(JpegMpf, OverlappingSecondaryImagesAreNotLocated) {
  const Bytes file = mpf_file(false, {.secondary_width = 96, .secondary_height = 64});
  const Layout l = parse_layout(file);
  MpfIndex mpf = *parse_mpf(file, l);
  ASSERT_TRUE(locate_secondary_images(file, l, mpf));
  mpf.entries.push_back(mpf.entries[1]);  // a second entry for the same bytes
  EXPECT_FALSE(locate_secondary_images(file, l, mpf));
  mpf.entries.pop_back();
  mpf.entries[1].offset -= 2;  // not on an SOI
  EXPECT_FALSE(locate_secondary_images(file, l, mpf));
}

}  // namespace
}  // namespace lighten::jpeg
