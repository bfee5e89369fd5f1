#include "formats/jpeg/metadata.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>

#include "formats/jpeg/jpeg_format.h"
#include "test_support.h"

namespace lighten::jpeg {
namespace {

using testing::EncodeOptions;
using testing::make_jpeg;
using testing::TestContext;

// An EXIF APP1 payload (little-endian) with Orientation = `o` and one more tag.
std::string exif_payload(int o) {
  std::string s("Exif\0\0II*\0\x08\0\0\0", 14);
  s += std::string("\x02\0", 2);
  s += std::string("\x0f\x01\x02\0\x04\0\0\0ACME", 12);  // Make
  s += std::string("\x12\x01\x03\0\x01\0\0\0", 8) + char(o) + std::string("\0\0\0", 3);
  s += std::string("\0\0\0\0", 4);
  return s;
}

Bytes sample_jpeg() {
  EncodeOptions o;
  o.markers = {{JPEG_APP0 + 1, exif_payload(6)},
               {JPEG_COM, "a comment"},
               {JPEG_APP0 + 13, "Photoshop 3.0"},
               {JPEG_APP0 + 1, std::string("http://ns.adobe.com/xap/1.0/\0<x hdrgm:Version/>", 48)},
               {JPEG_APP0 + 2, std::string("ICC_PROFILE\0\x01\x01profile", 21)}};
  return make_jpeg(o);
}

bool contains_text(ByteView bytes, std::string_view text) {
  return std::search(bytes.begin(), bytes.end(), text.begin(), text.end()) != bytes.end();
}

std::vector<std::string> labels(const Bytes& jpeg) {
  Layout l = parse_layout(jpeg);
  std::vector<std::string> out;
  for (const Segment& s : l.segments)
    if (s.is_metadata()) {
      std::string label = marker_name(s.marker);
      label += ' ';
      label += segment_label(s);
      out.push_back(label);
    }
  return out;
}

TEST(JpegMetadata, ReadsOrientation) {
  std::string p = exif_payload(6);
  EXPECT_EQ(exif_orientation(ByteView(reinterpret_cast<const uint8_t*>(p.data()), p.size())), 6);
  Bytes minimal = minimal_exif_segment(8);
  EXPECT_EQ(exif_orientation(ByteView(minimal).subspan(4)), 8);
  EXPECT_FALSE(exif_orientation(ByteView(minimal).subspan(4, 10)));
}

TEST(JpegMetadata, PoliciesKeepWhatTheyPromise) {
  Bytes in = sample_jpeg();
  const std::vector<std::string> all = {"APP0 JFIF",       "APP1 Exif", "COM comment",
                                        "APP13 Photoshop", "APP1 XMP",  "APP2 ICC"};
  ASSERT_EQ(labels(in), all);
  struct Case {
    MetadataPolicy policy;
    std::vector<std::string> expected;
    size_t warnings;
  };
  const Case cases[] = {
      {MetadataPolicy::kKeep, all, 0},
      {MetadataPolicy::kSafe, {"APP0 JFIF", "APP1 Exif", "APP1 XMP", "APP2 ICC"}, 0},
      {MetadataPolicy::kStrip, {"APP0 JFIF", "APP1 Exif", "APP2 ICC"}, 1},
  };
  for (const Case& c : cases) {
    Policy p;
    p.metadata = c.policy;
    TestContext context(p);
    Outcome out = optimize_jpeg(in, context);
    ASSERT_TRUE(out.replaced());
    EXPECT_EQ(labels(out.bytes), c.expected) << int(c.policy);
    EXPECT_EQ(out.warnings.size(), c.warnings);
    Verdict v = verify_jpeg(in, out.bytes, p);
    EXPECT_TRUE(v.ok) << v.problem;
    if (c.policy == MetadataPolicy::kStrip) {
      Layout l = parse_layout(out.bytes);
      for (const Segment& s : l.segments)
        if (segment_label(s) == "Exif") {
          EXPECT_EQ(exif_orientation(s.payload), 6);
          EXPECT_LT(s.length, 40u);
        }
    }
  }
}

// The profile's data colour space comes from its first chunk wherever that stands among the
// chunks; a first chunk too short for the header, or none, gives nothing.
TEST(JpegMetadata, ReadsTheIccDataSpaceFromTheFirstChunk) {
  auto chunk = [](char number, const std::string& profile) {
    return std::string("ICC_PROFILE\0", 12) + number + '\x02' + profile;
  };
  std::string header(128, 'x');
  header.replace(16, 4, "Lab ");
  EncodeOptions o;
  o.markers = {{JPEG_APP0 + 2, chunk('\x02', std::string(40, 'y'))},
               {JPEG_APP0 + 2, chunk('\x01', header)}};
  EXPECT_EQ(icc_data_space(parse_layout(make_jpeg(o))), std::optional<std::string>("Lab "));
  o.markers = {{JPEG_APP0 + 2, chunk('\x01', header.substr(0, 19))}};
  EXPECT_EQ(icc_data_space(parse_layout(make_jpeg(o))), std::nullopt);
  // The first chunk numbered 1 decides, too short or not.
  o.markers = {{JPEG_APP0 + 2, chunk('\x01', header.substr(0, 19))},
               {JPEG_APP0 + 2, chunk('\x01', header)}};
  EXPECT_EQ(icc_data_space(parse_layout(make_jpeg(o))), std::nullopt);
  o.markers = {{JPEG_APP0 + 2, chunk('\x02', header)}};
  EXPECT_EQ(icc_data_space(parse_layout(make_jpeg(o))), std::nullopt);
  EXPECT_EQ(icc_data_space(parse_layout(sample_jpeg())), std::nullopt);  // 7 bytes of profile
}

// The profile is its chunks joined in their numbered order, wherever they stand; a chunk missing,
// repeated, numbered past the count or counting otherwise than the rest gives none.
TEST(JpegMetadata, JoinsTheIccProfileFromItsChunks) {
  auto chunk = [](char number, char count, const std::string& part) {
    return std::string("ICC_PROFILE\0", 12) + number + count + part;
  };
  auto profile = [](const std::vector<std::pair<int, std::string>>& markers) {
    EncodeOptions o;
    o.markers = markers;
    const std::optional<Bytes> p = icc_profile(parse_layout(make_jpeg(o)));
    return p ? std::optional<std::string>(std::string(p->begin(), p->end())) : std::nullopt;
  };
  const int app2 = JPEG_APP0 + 2;
  EXPECT_EQ(
      profile({{app2, chunk(2, 3, "bb")}, {app2, chunk(3, 3, "c")}, {app2, chunk(1, 3, "a")}}),
      std::optional<std::string>("abbc"));
  EXPECT_EQ(profile({{app2, chunk(1, 1, "whole")}}), std::optional<std::string>("whole"));
  EXPECT_EQ(profile({{app2, chunk(1, 3, "a")}, {app2, chunk(3, 3, "c")}}), std::nullopt);
  EXPECT_EQ(profile({{app2, chunk(1, 2, "a")}, {app2, chunk(1, 2, "a")}}), std::nullopt);
  EXPECT_EQ(profile({{app2, chunk(1, 2, "a")}, {app2, chunk(3, 2, "c")}}), std::nullopt);
  EXPECT_EQ(profile({{app2, chunk(1, 2, "a")}, {app2, chunk(2, 3, "b")}}), std::nullopt);
  EXPECT_EQ(profile({{app2, chunk(1, 1, "")}}), std::nullopt);
  EXPECT_EQ(profile({}), std::nullopt);
}

TEST(JpegMetadata, StripDropsOrientationOne) {
  EncodeOptions o;
  o.markers = {{JPEG_APP0 + 1, exif_payload(1)}};
  Bytes in = make_jpeg(o);
  Policy p;
  p.metadata = MetadataPolicy::kStrip;
  TestContext context(p);
  Outcome out = optimize_jpeg(in, context);
  EXPECT_EQ(labels(out.bytes), std::vector<std::string>{"APP0 JFIF"});
}

// Motion-JPEG frames say which field comes first in APP0 "AVI1" (ffmpeg reads it to interlace
// them): strip keeps it.
TEST(JpegMetadata, StripKeepsTheFieldOrderOfMotionJpeg) {
  EncodeOptions o;
  o.markers = {{JPEG_APP0, std::string("AVI1\x02\0\0\0\0\0\0\0\0\0", 14)}, {JPEG_COM, "a comment"}};
  const Bytes in = make_jpeg(o);
  ASSERT_EQ(labels(in), (std::vector<std::string>{"APP0 JFIF", "APP0 AVI1", "COM comment"}));
  Policy p;
  p.metadata = MetadataPolicy::kStrip;
  TestContext context(p);
  const Outcome out = optimize_jpeg(in, context);
  ASSERT_TRUE(out.replaced()) << out.message;
  EXPECT_EQ(labels(out.bytes), (std::vector<std::string>{"APP0 JFIF", "APP0 AVI1"}));
}

// An EXIF APP1 payload (big-endian) whose Exif IFD holds ColorSpace = `space` and an
// interoperability IFD of index "R03", beside a Make that strip must drop; the two IFD
// pointers of type `pointer` (LONG, or TIFF's IFD type 13).
std::string exif_colour_space_payload(uint16_t space, char pointer = 4) {
  std::string s("Exif\0\0MM\0*\0\0\0\x08", 14);
  s += std::string("\0\x02", 2);
  s += std::string("\x01\x0f\0\x02\0\0\0\x04", 8) + "ACM" + std::string(1, '\0');        // Make
  s += std::string("\x87\x69\0", 3) + pointer + std::string("\0\0\0\x01\0\0\0\x26", 8);  // at 38
  s += std::string("\0\0\0\0", 4);
  s += std::string("\0\x02", 2);  // the Exif IFD: ColorSpace, interoperability IFD at 68
  s += std::string("\xA0\x01\0\x03\0\0\0\x01", 8) + char(space >> 8) + char(space) +
       std::string("\0\0", 2);
  s += std::string("\xA0\x05\0", 3) + pointer + std::string("\0\0\0\x01\0\0\0\x44", 8);
  s += std::string("\0\0\0\0", 4);
  s += std::string("\0\x01", 2);  // the interoperability IFD
  s += std::string("\0\x01\0\x02\0\0\0\x04", 8) + "R03" + std::string(1, '\0');
  s += std::string("\0\0\0\0", 4);
  return s;
}

// Strip keeps ISO 21496-1 gain-map metadata (how a gain map brightens the image on an HDR
// display), and where an EXIF names a colour space other than sRGB and no ICC profile does (a
// camera in Adobe RGB mode), that colour space, in a minimal EXIF of its own: the camera's EXIF
// (GPS positions, serial numbers) goes.
TEST(JpegMetadata, StripKeepsGainMapsAndAColourSpaceNamedInExifAlone) {
  const std::string iso("urn:iso:std:iso:ts:21496:-1\0\0\0\0\0", 33);
  const std::string apple_xmp = std::string("http://ns.adobe.com/xap/1.0/\0", 29) +
                                "<x xmlns:HDRGainMap=\"http://ns.apple.com/HDRGainMap/1.0/\"/>";
  Policy p;
  p.metadata = MetadataPolicy::kStrip;
  TestContext context(p);
  for (const uint16_t space : {uint16_t(0xFFFF), uint16_t(1)}) {
    EncodeOptions o;
    o.markers = {{JPEG_APP0 + 1, exif_colour_space_payload(space)},
                 {JPEG_APP0 + 2, iso},
                 {JPEG_APP0 + 1, apple_xmp}};
    const Bytes in = make_jpeg(o);
    const Outcome out = optimize_jpeg(in, context);
    ASSERT_TRUE(out.replaced()) << out.message;
    const std::vector<std::string> kept =
        space == 1 ? std::vector<std::string>{"APP0 JFIF", "APP2 "}
                   : std::vector<std::string>{"APP0 JFIF", "APP1 Exif", "APP2 "};
    EXPECT_EQ(labels(out.bytes), kept) << space;
    ASSERT_EQ(out.warnings.size(), 1u);
    EXPECT_NE(out.warnings[0].find("Apple's HDR gain-map"), std::string::npos);
    EXPECT_TRUE(verify_jpeg(in, out.bytes, p).ok);
    for (const Segment& s : parse_layout(out.bytes).segments) {
      if (segment_label(s) != "Exif") continue;
      const auto colour = tiff_other_colour_space(s.payload.subspan(6));
      ASSERT_TRUE(colour);
      EXPECT_EQ(colour->colour_space, 0xFFFF);
      EXPECT_EQ(colour->interop_index, (std::array<uint8_t, 4>{'R', '0', '3', 0}));
      EXPECT_FALSE(contains_text(s.payload, "ACM"));
    }
    // A second run finds the same minimal EXIF and nothing more to do.
    TestContext again(p);
    const Outcome second = optimize_jpeg(out.bytes, again);
    EXPECT_TRUE(!second.replaced() || second.bytes == out.bytes);
  }
  // With a profile, the profile says the colour space: the EXIF goes.
  EncodeOptions o;
  o.markers = {{JPEG_APP0 + 1, exif_colour_space_payload(0xFFFF)},
               {JPEG_APP0 + 2, std::string("ICC_PROFILE\0\x01\x01profile", 21)}};
  const Outcome out = optimize_jpeg(make_jpeg(o), context);
  ASSERT_TRUE(out.replaced()) << out.message;
  EXPECT_EQ(labels(out.bytes), (std::vector<std::string>{"APP0 JFIF", "APP2 ICC"}));
}

// The Exif and interoperability IFD pointers may have TIFF's IFD type (13) rather than LONG:
// the colour space is read through them alike.
TEST(JpegMetadata, AColourSpaceBehindIfdTypedPointersIsRead) {
  const std::string payload = exif_colour_space_payload(0xFFFF, 13);
  const auto colour = tiff_other_colour_space(
      ByteView(reinterpret_cast<const uint8_t*>(payload.data()), payload.size()).subspan(6));
  ASSERT_TRUE(colour);
  EXPECT_EQ(colour->colour_space, 0xFFFF);
  EXPECT_EQ(colour->interop_index, (std::array<uint8_t, 4>{'R', '0', '3', 0}));
}

// Strip warns of what it drops that a reader would miss, by the XMP namespace whatever its
// prefix: a motion photo's video (MotionPhoto, or older Pixels' MicroVideo), a portrait's depth
// map and its unblurred original.
TEST(JpegMetadata, StripWarnsOfMotionPhotosAndDepthMapsByNamespace) {
  const std::string xmp_header("http://ns.adobe.com/xap/1.0/\0", 29);
  const std::string camera = "xmlns:Cam=\"http://ns.google.com/photos/1.0/camera/\"";
  const std::pair<std::string, std::string> cases[] = {
      {"<x " + camera + " Cam:MotionPhoto=\"1\"/>", "motion-photo"},
      {"<x " + camera + " Cam:MicroVideo=\"1\"/>", "motion-photo"},
      {"<x xmlns:D=\"http://ns.google.com/photos/1.0/depthmap/\" D:Format=\"RangeInverse\"/>",
       "depth map"},
      {"<x xmlns:I=\"http://ns.google.com/photos/1.0/image/\" I:Mime=\"image/jpeg\"/>",
       "unblurred original"},
  };
  Policy p;
  p.metadata = MetadataPolicy::kStrip;
  for (const auto& [xmp, warning] : cases) {
    EncodeOptions o;
    o.markers = {{JPEG_APP0 + 1, xmp_header + xmp}};
    TestContext context(p);
    const Outcome out = optimize_jpeg(make_jpeg(o), context);
    ASSERT_TRUE(out.replaced()) << out.message;
    ASSERT_EQ(out.warnings.size(), 1u) << xmp;
    EXPECT_NE(out.warnings[0].find(warning), std::string::npos) << out.warnings[0];
  }
  // The depth map's namespace in the main XMP and again in its extension: one warning.
  const std::string extension_header("http://ns.adobe.com/xmp/extension/\0", 35);
  const std::string depth = cases[2].first;
  EncodeOptions o;
  o.markers = {{JPEG_APP0 + 1, xmp_header + depth},
               {JPEG_APP0 + 1, extension_header + std::string(40, '0') + depth}};
  TestContext context(p);
  const Outcome out = optimize_jpeg(make_jpeg(o), context);
  ASSERT_TRUE(out.replaced()) << out.message;
  EXPECT_EQ(out.warnings.size(), 1u);
}

// A Sony maker note's preview image lies after the JPEG's image, named by an offset from the
// EXIF's TIFF header: any output whose image data changes size would leave it pointing at other
// bytes. Such a file is left alone unless strip drops the EXIF.
TEST(JpegMetadata, ExifNamingDataPastItsSegmentLeavesTheFileAlone) {
  // Big-endian TIFF: IFD0 of one Exif IFD pointer (at 26); the Exif IFD of one MakerNote (at
  // 44, 32 bytes); the maker note: "SONY DSC " and an IFD of PreviewImage, 9000 bytes at 20000.
  std::string tiff("MM\0*\0\0\0\x08", 8);
  tiff += std::string("\0\x01", 2) + std::string("\x87\x69\0\x04\0\0\0\x01\0\0\0\x1a", 12);
  tiff += std::string("\0\0\0\0", 4);
  tiff += std::string("\0\x01", 2) + std::string("\x92\x7c\0\x07\0\0\0\x20\0\0\0\x2c", 12);
  tiff += std::string("\0\0\0\0", 4);
  tiff += std::string("SONY DSC \0\0\0", 12);
  tiff += std::string("\0\x01", 2) + std::string("\x20\x01\0\x07\0\0\x23\x28\0\0\x4e\x20", 12);
  tiff += std::string("\0\0\0\0\0\0", 6);
  ASSERT_EQ(tiff.size(), 76u);
  const ByteView view(reinterpret_cast<const uint8_t*>(tiff.data()), tiff.size());
  EXPECT_EQ(tiff_value_past_end(view), 20000u);
  // The same under the header Sony's phones write.
  std::string mobile = tiff;
  mobile.replace(44, 12, std::string("SONY MOBILE\0", 12));
  EXPECT_EQ(
      tiff_value_past_end(ByteView(reinterpret_cast<const uint8_t*>(mobile.data()), mobile.size())),
      20000u);
  EncodeOptions o;
  o.markers = {{JPEG_APP0 + 1, std::string("Exif\0\0", 6) + tiff}};
  const Bytes in = make_jpeg(o);
  for (const MetadataPolicy policy : {MetadataPolicy::kKeep, MetadataPolicy::kSafe}) {
    Policy p;
    p.metadata = policy;
    TestContext context(p);
    try {
      optimize_jpeg(in, context);
      ADD_FAILURE() << "optimised with a preview offset that goes stale";
    } catch (const FormatError& e) {
      EXPECT_EQ(e.reason(), Reason::kUnsupportedVariant);
      EXPECT_NE(std::string(e.what()).find("past its own segment"), std::string::npos) << e.what();
    }
  }
  Policy strip;
  strip.metadata = MetadataPolicy::kStrip;
  TestContext context(strip);
  EXPECT_TRUE(optimize_jpeg(in, context).replaced());
  // The same maker note with its preview inside the segment is kept as usual.
  std::string inside = tiff;
  inside[62] = 0, inside[63] = 0, inside[64] = 0, inside[65] = 8;  // 8 bytes
  inside[66] = 0, inside[67] = 0, inside[68] = 0, inside[69] = 8;  // at 8
  EXPECT_FALSE(tiff_value_past_end(
      ByteView(reinterpret_cast<const uint8_t*>(inside.data()), inside.size())));
}

// IFD1 names its thumbnail by an offset (JPEGInterchangeFormat) in one field and its length in
// another: one pointing past the segment (a thumbnail appended after the EOI) went stale once
// the image data changed size, the file optimised without a word. So does one strip of an
// uncompressed thumbnail.
TEST(JpegMetadata, AThumbnailPastTheExifSegmentLeavesTheFileAlone) {
  for (const bool little : {true, false})
    for (const auto& [offset_tag, length_tag] : {std::pair<uint16_t, uint16_t>{0x0201, 0x0202},
                                                 std::pair<uint16_t, uint16_t>{0x0111, 0x0117}}) {
      // TIFF: IFD0 with no entries, then IFD1 (at 14) of the offset (LONG) and length (LONG).
      Bytes tiff;
      auto put16 = [&](uint32_t v) {
        if (little)
          tiff.push_back(uint8_t(v)), tiff.push_back(uint8_t(v >> 8));
        else
          tiff.push_back(uint8_t(v >> 8)), tiff.push_back(uint8_t(v));
      };
      auto put32 = [&](uint32_t v) {
        if (little)
          put16(v & 0xFFFF), put16(v >> 16);
        else
          put16(v >> 16), put16(v & 0xFFFF);
      };
      tiff = little ? Bytes{'I', 'I', 42, 0} : Bytes{'M', 'M', 0, 42};
      put32(8);
      put16(0), put32(14);  // IFD0: no entries, IFD1 at 14
      put16(2);
      put16(offset_tag), put16(4), put32(1), put32(16554);
      put16(length_tag), put16(4), put32(1), put32(700);
      put32(0);
      const ByteView view(tiff);
      EXPECT_EQ(tiff_value_past_end(view), 16554u) << little << " " << offset_tag;
      // Inside the segment, it is followed as usual.
      Bytes inside = tiff;
      const size_t at = 14 + 2 + 8;  // the first entry's value
      inside[at] = inside[at + 1] = inside[at + 2] = inside[at + 3] = 0;
      inside[little ? at : at + 3] = 8;
      const size_t length_at = at + 12;
      inside[length_at] = inside[length_at + 1] = inside[length_at + 2] = inside[length_at + 3] = 0;
      inside[little ? length_at : length_at + 3] = 4;
      EXPECT_FALSE(tiff_value_past_end(ByteView(inside))) << little << " " << offset_tag;
    }
}

// A JFIF segment may carry a thumbnail of its own, raw RGB: strip writes the segment's fixed
// fields alone; a second run finds nothing more to drop.
TEST(JpegMetadata, StripDropsTheJfifThumbnail) {
  EncodeOptions o;
  o.write_jfif = false;
  std::string jfif("JFIF\0\x01\x02\x01\0\x48\0\x48\x28\x1e", 14);
  jfif += std::string(40 * 30 * 3, '\x7f');
  o.markers = {{JPEG_APP0, jfif}};
  const Bytes in = make_jpeg(o);
  ASSERT_EQ(labels(in), std::vector<std::string>{"APP0 JFIF"});
  Policy p;
  p.metadata = MetadataPolicy::kStrip;
  TestContext context(p);
  const Outcome out = optimize_jpeg(in, context);
  ASSERT_TRUE(out.replaced()) << out.message;
  const Layout layout = parse_layout(out.bytes);
  ASSERT_EQ(labels(out.bytes), std::vector<std::string>{"APP0 JFIF"});
  const Segment& kept = layout.segments[0];
  EXPECT_EQ(kept.payload.size(), 14u);
  EXPECT_TRUE(std::equal(kept.payload.begin(), kept.payload.begin() + 12, jfif.begin()));
  EXPECT_EQ(kept.payload[12], 0);
  EXPECT_EQ(kept.payload[13], 0);
  EXPECT_LT(out.bytes.size() + 3600, in.size());
  EXPECT_TRUE(verify_jpeg(in, out.bytes, p).ok);
  TestContext again(p);
  const Outcome second = optimize_jpeg(out.bytes, again);
  EXPECT_TRUE(!second.replaced() || second.bytes == out.bytes);
  // Keep carries the thumbnail as it is.
  TestContext keep{Policy{}};
  const Outcome kept_whole = optimize_jpeg(in, keep);
  ASSERT_TRUE(kept_whole.replaced());
  EXPECT_EQ(parse_layout(kept_whole.bytes).segments[0].payload.size(), jfif.size());
}

// C2PA Content Credentials sign a hash of the file's other bytes: the file is left as it is.
TEST(JpegMetadata, ContentCredentialsLeaveTheFileAlone) {
  // JUMBF: "JP", instance, sequence, then a superbox whose description box is labelled "c2pa".
  std::string jumbf("JP\0\x01\0\0\0\x01", 8);
  jumbf += std::string("\0\0\0\x2A", 4) + "jumb" + std::string("\0\0\0\x22", 4) + "jumd";
  jumbf += "c2pa" + std::string(12, '\x01') + "c2pa" + std::string(1, '\0');
  EncodeOptions o;
  o.markers = {{JPEG_APP0 + 11, jumbf}};
  const Bytes in = make_jpeg(o);
  for (const MetadataPolicy m : {MetadataPolicy::kKeep, MetadataPolicy::kStrip}) {
    Policy p;
    p.metadata = m;
    TestContext context(p);
    try {
      optimize_jpeg(in, context);
      FAIL() << "a signed file was optimised";
    } catch (const FormatError& e) {
      EXPECT_EQ(e.reason(), Reason::kSigned);
      EXPECT_NE(std::string(e.what()).find("C2PA"), std::string::npos) << e.what();
    }
  }
}

TEST(JpegMetadata, SegmentsAfterTheFrameStayAfterIt) {
  // ICC after SOF, as some writers do: move the APP2 written by libjpeg behind the SOF.
  EncodeOptions o;
  o.markers = {{JPEG_APP0 + 2, std::string("ICC_PROFILE\0\x01\x01late", 18)}};
  Bytes jpeg = make_jpeg(o);
  Layout l = parse_layout(jpeg);
  const Segment* app2 = nullptr;
  for (const Segment& s : l.segments)
    if (s.marker == 0xE2) app2 = &s;
  ASSERT_NE(app2, nullptr);
  const Segment& sof = l.segments[l.sof_index];
  Bytes moved(jpeg.begin(), jpeg.begin() + long(app2->offset));
  moved.insert(moved.end(), jpeg.begin() + long(app2->end()), jpeg.begin() + long(sof.end()));
  moved.insert(moved.end(), jpeg.begin() + long(app2->offset), jpeg.begin() + long(app2->end()));
  moved.insert(moved.end(), jpeg.begin() + long(sof.end()), jpeg.end());
  TestContext context;
  Outcome out = optimize_jpeg(moved, context);
  Layout lo = parse_layout(out.bytes);
  size_t app2_index = 0;
  for (size_t i = 0; i < lo.segments.size(); ++i)
    if (lo.segments[i].marker == 0xE2) app2_index = i;
  EXPECT_GT(app2_index, lo.sof_index);
  EXPECT_TRUE(verify_jpeg(moved, out.bytes, context.policy()).ok);
}

// Readers take metadata from the header alone, which ends at the first scan: a segment after it
// is never seen, and written before the scans it would be (an orientation applied, a profile
// followed). Kept, it leaves the file alone; dropped, nothing stands in for it.
TEST(JpegMetadata, SegmentsAfterTheFirstScanAreNotMovedBeforeIt) {
  const Bytes plain = make_jpeg(EncodeOptions{});
  ASSERT_EQ(plain[plain.size() - 2], 0xFF);
  const std::string exif = exif_payload(6);
  Bytes late(plain.begin(), plain.end() - 2);
  late.push_back(0xFF);
  late.push_back(0xE1);
  late.push_back(uint8_t((exif.size() + 2) >> 8));
  late.push_back(uint8_t(exif.size() + 2));
  late.insert(late.end(), exif.begin(), exif.end());
  late.insert(late.end(), plain.end() - 2, plain.end());
  TestContext keep;
  try {
    (void)optimize_jpeg(late, keep);
    ADD_FAILURE() << "the EXIF after the scan was kept";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.reason(), Reason::kUnsupportedVariant);
    EXPECT_NE(std::string(e.what()).find("APP1 segment after the first scan"), std::string::npos)
        << e.what();
  }
  Policy strip;
  strip.metadata = MetadataPolicy::kStrip;
  TestContext stripping(strip);
  const Outcome stripped = optimize_jpeg(late, stripping);
  ASSERT_TRUE(stripped.replaced()) << stripped.message;
  for (const std::string& label : labels(stripped.bytes)) EXPECT_NE(label, "APP1 Exif");
  EXPECT_TRUE(verify_jpeg(late, stripped.bytes, strip).ok);
}

}  // namespace
}  // namespace lighten::jpeg
