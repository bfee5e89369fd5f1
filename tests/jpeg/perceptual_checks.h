// The promises every perceptual output keeps, checked on one optimisation: the floor by lighten's
// metric on the final bytes, dimensions, components, metadata and trailing data kept, the quality
// marker written, and a second run that does no lossy work.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "formats/jpeg/exif_thumbnail.h"
#include "formats/jpeg/markers.h"
#include "formats/jpeg/metadata.h"
#include "lighten/lighten.h"
#include "test_support.h"

namespace lighten::jpeg {

// The metadata segments but lighten's marker and the MPF index, an EXIF segment without its
// thumbnail and the two lengths that follow it (exif_thumbnail_test.cpp checks those).
inline std::vector<Bytes> metadata_without_marker(const Bytes& jpeg) {
  const Layout l = parse_layout(jpeg);
  std::vector<Bytes> out;
  for (const Segment& s : l.segments) {
    if (!s.is_metadata() || is_quality_marker(s) ||
        (s.marker == 0xE2 && starts_with(s.payload, {"MPF\0", 4})))
      continue;
    Bytes& b = out.emplace_back(jpeg.begin() + long(s.offset), jpeg.begin() + long(s.end()));
    if (const auto thumbnail = locate_exif_thumbnail(b)) {
      b.erase(b.begin() + long(thumbnail->begin), b.begin() + long(thumbnail->end));
      b[2] = b[3] = 0;
      std::fill_n(b.begin() + long(thumbnail->length_at), thumbnail->short_length ? 2 : 4, 0);
    }
  }
  return out;
}

// `requantised`, where given, is set when the output changed pixels (not only the coding).
inline void check_perceptual(const Bytes& in, const Policy& policy, const std::string& name,
                             bool* requantised = nullptr) {
  SCOPED_TRACE(name);
  const double floor = quality_floor(policy);
  const Outcome o = optimize(in, policy);
  if (requantised) *requantised = o.replaced() && !o.quality.pixels_identical;
  if (!o.replaced()) {
    EXPECT_NE(o.reason, Reason::kVerifyFailed) << o.message;
    EXPECT_NE(o.reason, Reason::kInternalError) << o.message;
    return;
  }
  EXPECT_LT(o.bytes.size(), in.size());
  if (!o.quality.pixels_identical) {
    ASSERT_TRUE(o.quality.ssimulacra2.has_value());
    EXPECT_GE(*o.quality.ssimulacra2, floor);
    EXPECT_TRUE(has_quality_marker(parse_layout(o.bytes)));
  }
  const auto a = testing::decode(in);
  const auto b = testing::decode(o.bytes);
  ASSERT_TRUE(a.ok && b.ok);
  EXPECT_EQ(a.width, b.width);
  EXPECT_EQ(a.height, b.height);
  EXPECT_EQ(a.components, b.components);
  EXPECT_TRUE(metadata_without_marker(in) == metadata_without_marker(o.bytes));
  const Layout li = parse_layout(in), lo = parse_layout(o.bytes);
  ByteView ta = li.trailing(in), tb = lo.trailing(o.bytes);
  EXPECT_TRUE(ta.size() == tb.size() && std::equal(ta.begin(), ta.end(), tb.begin()));
  // Idempotence: the output, optimised again under the same policy, is left as it is.
  const Outcome again = optimize(o.bytes, policy);
  EXPECT_FALSE(again.replaced() && !again.quality.pixels_identical)
      << "second run requantised again: " << again.detail;
  if (again.replaced()) {
    EXPECT_GE(again.bytes.size() + 64, o.bytes.size() - o.bytes.size() / 100);
  }
}

}  // namespace lighten::jpeg
