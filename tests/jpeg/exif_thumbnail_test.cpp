#include "formats/jpeg/exif_thumbnail.h"

#include <gtest/gtest.h>

#include <string>

#include "formats/jpeg/jpeg_format.h"
#include "formats/jpeg/markers.h"
#include "formats/jpeg/metadata.h"
#include "support/direct_context.h"
#include "test_support.h"

namespace lighten::jpeg {
namespace {

using testing::decode;
using testing::DirectContext;
using testing::EncodeOptions;
using testing::make_jpeg;

void put32(std::string& s, uint32_t v, bool le) {
  for (int i = 0; i < 4; ++i) s += char(le ? v >> (8 * i) : v >> (8 * (3 - i)));
}
void put16(std::string& s, uint16_t v, bool le) {
  s += char(le ? v : v >> 8);
  s += char(le ? v >> 8 : v);
}
void entry(std::string& s, uint16_t tag, uint16_t type, uint32_t count, uint32_t value, bool le) {
  put16(s, tag, le), put16(s, type, le), put32(s, count, le);
  if (type == 3 && count == 1)
    put16(s, uint16_t(value), le), put16(s, 0, le);
  else
    put32(s, value, le);
}

struct ExifOptions {
  bool le = true;
  size_t padding = 0;                    // zero bytes after the thumbnail
  std::string after = {};                // other bytes after those
  bool comment_after_thumbnail = false;  // the user comment's data after the thumbnail
  bool short_length = false;             // JPEGInterchangeFormatLength as a SHORT
};

// The TIFF layout here: IFD0 at 8 (Orientation 6, the Exif IFD's offset), the Exif IFD at 38 (a
// 16-byte user comment stored out of line), the comment at 56, IFD1 at 72 (compression JPEG,
// the thumbnail's offset and length), the thumbnail at 114.
constexpr size_t kIfd1 = 72, kThumbnail = 114;
constexpr size_t kLengthValue = kIfd1 + 2 + 2 * 12 + 8;  // the third entry's value field

std::string exif_payload(const Bytes& thumbnail, const ExifOptions& o) {
  const bool le = o.le;
  const std::string comment("ASCII\0\0\0lighten!", 16);
  const size_t comment_at =
      o.comment_after_thumbnail ? kThumbnail + thumbnail.size() + o.padding + o.after.size() : 56;
  std::string s("Exif\0\0", 6);
  s += le ? std::string("II*\0", 4) : std::string("MM\0*", 4);
  put32(s, 8, le);
  put16(s, 2, le);
  entry(s, 0x0112, 3, 1, 6, le);
  entry(s, 0x8769, 4, 1, 38, le);
  put32(s, kIfd1, le);
  put16(s, 1, le);
  entry(s, 0x9286, 7, 16, uint32_t(comment_at), le);
  put32(s, 0, le);
  s += o.comment_after_thumbnail ? std::string(16, '\x55') : comment;
  put16(s, 3, le);
  entry(s, 0x0103, 3, 1, 6, le);
  entry(s, 0x0201, 4, 1, kThumbnail, le);
  entry(s, 0x0202, o.short_length ? 3 : 4, 1, uint32_t(thumbnail.size()), le);
  put32(s, 0, le);
  EXPECT_EQ(s.size(), 6 + kThumbnail);
  s.append(thumbnail.begin(), thumbnail.end());
  s += std::string(o.padding, '\0') + o.after;
  if (o.comment_after_thumbnail) s += std::string(16, '\0');  // what padding would look like
  return s;
}

Bytes thumbnail_jpeg() {
  EncodeOptions t;
  t.width = 160;
  t.height = 120;
  t.quality = 95;
  t.smooth_chroma = true;
  return make_jpeg(t);
}

Bytes photo_with_exif(const ExifOptions& o) {
  EncodeOptions p;
  p.width = 320;
  p.height = 240;
  p.quality = 95;
  p.markers = {{JPEG_APP0 + 1, exif_payload(thumbnail_jpeg(), o)}};
  return make_jpeg(p);
}

// The APP1 segment of a file, whole.
ByteView exif_segment(const Bytes& file) {
  for (const Segment& s : parse_layout(file).segments)
    if (s.marker == 0xE1) return ByteView(file).subspan(s.offset, s.length);
  return {};
}

// The thumbnail by this test's own layout: its length read from IFD1's third entry.
Bytes thumbnail_of(const Bytes& file, bool le, bool short_length = false) {
  const ByteView tiff = exif_segment(file).subspan(10);
  const ByteView v = tiff.subspan(kLengthValue, 4);
  const uint32_t length = short_length ? (le ? v[0] | v[1] << 8 : v[0] << 8 | v[1])
                          : le         ? uint32_t(v[0] | v[1] << 8 | v[2] << 16 | v[3] << 24)
                                       : uint32_t(v[0] << 24 | v[1] << 16 | v[2] << 8 | v[3]);
  if (kThumbnail + length > tiff.size()) return {};
  return Bytes(tiff.begin() + kThumbnail, tiff.begin() + kThumbnail + length);
}

TEST(ExifThumbnail, IsOptimisedInPlaceAndVerified) {
  for (bool le : {true, false}) {
    for (bool short_length : {false, true}) {
      const ExifOptions o{.le = le, .padding = 7, .short_length = short_length};
      const Bytes in = photo_with_exif(o);
      DirectContext context;
      const Outcome out = optimize_jpeg(in, context);
      ASSERT_TRUE(out.replaced()) << out.message;
      EXPECT_NE(out.detail.find("EXIF thumbnail"), std::string::npos) << out.detail;
      const Bytes before = thumbnail_of(in, le, short_length);
      const Bytes after = thumbnail_of(out.bytes, le, short_length);
      ASSERT_EQ(before, thumbnail_jpeg());
      ASSERT_FALSE(after.empty());
      EXPECT_LT(after.size(), before.size());
      // Lossless: the thumbnail decodes to the same pixels; the segment is the input's up to it,
      // but for the two lengths, and its padding follows it.
      const testing::Decoded x = decode(before), y = decode(after);
      ASSERT_TRUE(x.ok && y.ok);
      EXPECT_EQ(x.samples, y.samples);
      const ByteView a = exif_segment(in), b = exif_segment(out.bytes);
      EXPECT_EQ(a.size() - b.size(), before.size() - after.size());
      const size_t value = 10 + kLengthValue;
      for (size_t i = 4; i < 10 + kThumbnail; ++i)
        if (i < value || i >= value + (short_length ? 2 : 4)) {
          ASSERT_EQ(a[i], b[i]) << i;
        }
      EXPECT_EQ(std::string(b.end() - 7, b.end()), std::string(7, '\0'));
      // Verified with the thumbnail's own verifier; without a context a changed thumbnail fails.
      Verdict v =
          verify_jpeg(in, out.bytes, context.policy(), std::nullopt, std::nullopt, &context);
      EXPECT_TRUE(v.ok) << v.problem;
      v = verify_jpeg(in, out.bytes, context.policy());
      EXPECT_FALSE(v.ok);
      EXPECT_NE(v.problem.find("EXIF thumbnail changed"), std::string::npos) << v.problem;
      // A second run finds nothing more to do in the thumbnail.
      DirectContext again;
      const Outcome second = optimize_jpeg(out.bytes, again);
      EXPECT_EQ(second.detail.find("EXIF thumbnail"), std::string::npos) << second.detail;
      EXPECT_EQ(thumbnail_of(second.bytes, le, short_length), after);
    }
  }
}

TEST(ExifThumbnail, FollowsThePerceptualMode) {
  Policy policy;
  policy.mode = Mode::kHigh;
  DirectContext context(policy);
  const Bytes in = photo_with_exif({});
  const Outcome out = optimize_jpeg(in, context);
  ASSERT_TRUE(out.replaced()) << out.message;
  const Bytes before = thumbnail_of(in, true), after = thumbnail_of(out.bytes, true);
  ASSERT_FALSE(after.empty());
  // Requantised to the floor like the primary, with no APPn segment of its own added (Exif
  // records none in a thumbnail): its tables keep a re-run lossless, and it stays as it is.
  EXPECT_LT(after.size(), before.size() * 3 / 4);
  auto app_segments = [](const Bytes& jpeg) {
    size_t n = 0;
    for (const Segment& s : parse_layout(jpeg).segments) n += s.is_app();
    return n;
  };
  EXPECT_EQ(app_segments(after), app_segments(before));
  EXPECT_FALSE(has_quality_marker(parse_layout(after)));
  DirectContext again(policy);
  const Outcome second = optimize_jpeg(out.bytes, again);
  EXPECT_EQ(thumbnail_of(second.replaced() ? second.bytes : out.bytes, true), after);
  EXPECT_FALSE(verify_jpeg(before, after, Policy{}).ok);  // not the same coefficients
  const Verdict v = verify_jpeg(in, out.bytes, policy, std::nullopt, std::nullopt, &context);
  EXPECT_TRUE(v.ok) << v.problem;
}

// A primary image lighten already requantised (its marker says so) stays lossless while its
// thumbnail is requantised: the output is not pixel-identical, and the verdict says so.
TEST(ExifThumbnail, RequantisedThumbnailIsNotPixelIdentical) {
  const Bytes marker = quality_marker_segment(70.0, 70.5);
  EncodeOptions p;
  p.width = 320;
  p.height = 240;
  p.quality = 95;
  p.markers = {{JPEG_APP0 + 1, exif_payload(thumbnail_jpeg(), {})},
               {0xEF, std::string(marker.begin() + 4, marker.end())}};
  const Bytes in = make_jpeg(p);
  Policy compact;
  compact.mode = Mode::kCompact;
  DirectContext context(compact);
  const Outcome out = optimize_jpeg(in, context);
  ASSERT_TRUE(out.replaced()) << out.message;
  EXPECT_NE(out.detail.find("lossless only"), std::string::npos) << out.detail;
  EXPECT_FALSE(has_quality_marker(parse_layout(thumbnail_of(out.bytes, true))));
  const Verdict v = verify_jpeg(in, out.bytes, compact, std::nullopt, std::nullopt, &context);
  ASSERT_TRUE(v.ok) << v.problem;
  EXPECT_FALSE(v.quality.pixels_identical);
  // Losslessly, the thumbnail's pixels stay and so does the verdict.
  DirectContext lossless;
  const Outcome kept = optimize_jpeg(in, lossless);
  ASSERT_TRUE(kept.replaced()) << kept.message;
  const Verdict w = verify_jpeg(in, kept.bytes, Policy{}, std::nullopt, std::nullopt, &lossless);
  ASSERT_TRUE(w.ok) << w.problem;
  EXPECT_TRUE(w.quality.pixels_identical);
}

TEST(ExifThumbnail, StaysBaselineWhateverTheScansPolicy) {
  Policy policy;
  policy.jpeg_scans = ScanMode::kProgressive;
  DirectContext context(policy);
  const Bytes in = photo_with_exif({});
  const Outcome out = optimize_jpeg(in, context);
  ASSERT_TRUE(out.replaced()) << out.message;
  EXPECT_TRUE(parse_layout(out.bytes).frame.marker == 0xC2);  // the image follows the policy
  const Bytes after = thumbnail_of(out.bytes, true);
  ASSERT_FALSE(after.empty());
  EXPECT_LT(after.size(), thumbnail_jpeg().size());
  EXPECT_EQ(parse_layout(after).frame.marker, 0xC0);
  const Verdict v = verify_jpeg(in, out.bytes, policy, std::nullopt, std::nullopt, &context);
  EXPECT_TRUE(v.ok) << v.problem;
}

TEST(ExifThumbnail, StaysWhereDataFollowsItOrThePointersReachIt) {
  const Bytes thumbnail = thumbnail_jpeg();
  // Bytes after it that are not padding, or a value stored after it: shortening it would move
  // them away from where readers look.
  for (const ExifOptions& o :
       {ExifOptions{.after = "more"}, ExifOptions{.padding = 4, .after = std::string("\0\x01", 2)},
        ExifOptions{.comment_after_thumbnail = true}}) {
    const std::string payload = exif_payload(thumbnail, o);
    Bytes segment = {0xFF, 0xE1, uint8_t((payload.size() + 2) >> 8), uint8_t(payload.size() + 2)};
    segment.insert(segment.end(), payload.begin(), payload.end());
    EXPECT_FALSE(locate_exif_thumbnail(segment).has_value());
    const Bytes in = photo_with_exif(o);
    DirectContext context;
    const Outcome out = optimize_jpeg(in, context);
    ASSERT_TRUE(out.replaced()) << out.message;
    EXPECT_EQ(out.detail.find("EXIF thumbnail"), std::string::npos) << out.detail;
    EXPECT_TRUE(same_bytes(exif_segment(in), exif_segment(out.bytes)));
  }
}

TEST(ExifThumbnail, BrokenStructuresAreLeftAlone) {
  const std::string payload = exif_payload(thumbnail_jpeg(), {});
  Bytes whole = {0xFF, 0xE1, uint8_t((payload.size() + 2) >> 8), uint8_t(payload.size() + 2)};
  whole.insert(whole.end(), payload.begin(), payload.end());
  ASSERT_TRUE(locate_exif_thumbnail(whole).has_value());
  // Every truncation: nothing read past the end, no thumbnail that runs past it.
  for (size_t n = 0; n < whole.size(); ++n)
    EXPECT_FALSE(locate_exif_thumbnail(ByteView(whole).first(n)).has_value()) << n;
  // Offsets and counts pointing outside the segment, an unknown type, no JPEG where it points.
  auto with = [&](size_t at, std::initializer_list<uint8_t> bytes) {
    Bytes b = whole;
    size_t i = 10 + at;
    for (uint8_t x : bytes) b.at(i++) = x;
    return b;
  };
  for (const Bytes& b : {with(4, {0xF0, 0xFF, 0xFF, 0xFF}),           // IFD0 outside
                         with(34, {0xF0, 0xFF, 0xFF, 0xFF}),          // IFD1 outside
                         with(kIfd1 + 2 + 12 + 8, {0xFF, 0xFF}),      // thumbnail offset outside
                         with(kLengthValue, {0xFF, 0xFF, 0xFF, 0}),   // length past the end
                         with(38 + 2 + 4, {0xFF, 0xFF, 0xFF, 0x0F}),  // a huge comment count
                         with(10 + 2, {99, 0}),                       // an unknown type
                         with(kThumbnail, {0x00, 0x00})})             // not a JPEG
    EXPECT_FALSE(locate_exif_thumbnail(b).has_value());
}

TEST(ExifThumbnail, ChangesOutsideTheThumbnailFailVerification) {
  const Bytes in = photo_with_exif({.padding = 3});
  DirectContext context;
  const Outcome out = optimize_jpeg(in, context);
  ASSERT_TRUE(out.replaced()) << out.message;
  const size_t segment = size_t(exif_segment(out.bytes).data() - out.bytes.data());
  auto fails = [&](size_t at, uint8_t mask) {
    Bytes changed = out.bytes;
    changed.at(segment + at) ^= mask;
    return !verify_jpeg(in, changed, context.policy(), std::nullopt, std::nullopt, &context).ok;
  };
  EXPECT_FALSE(fails(0, 0));
  EXPECT_TRUE(fails(10 + 18, 0x01));                             // IFD0's orientation
  EXPECT_TRUE(fails(10 + 60, 0x01));                             // the user comment
  EXPECT_TRUE(fails(10 + kLengthValue, 0x01));                   // the thumbnail's length
  EXPECT_TRUE(fails(exif_segment(out.bytes).size() - 1, 0x01));  // the padding
  // One zero byte more after the thumbnail (the segment's length to match).
  Bytes longer = out.bytes;
  const size_t end = segment + exif_segment(out.bytes).size();
  longer.insert(longer.begin() + ptrdiff_t(end), uint8_t(0));
  const size_t length = (longer[segment + 2] << 8 | longer[segment + 3]) + 1;
  longer[segment + 2] = uint8_t(length >> 8), longer[segment + 3] = uint8_t(length);
  const Verdict v = verify_jpeg(in, longer, context.policy(), std::nullopt, std::nullopt, &context);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.problem.find("outside its thumbnail"), std::string::npos) << v.problem;
  // A coefficient of the thumbnail changed: its lossless check fails.
  const Bytes after = thumbnail_of(out.bytes, true);
  EXPECT_TRUE(fails(10 + kThumbnail + parse_layout(after).segments.back().end() + 30, 0x10));
}

}  // namespace
}  // namespace lighten::jpeg
