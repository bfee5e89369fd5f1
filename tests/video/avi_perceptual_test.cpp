// Motion-JPEG AVIs in the perceptual modes: every frame is requantised on its own gate, and every
// frame of the output, scored here independently, meets the mode's floor; the rest of the file
// is kept as in lossless mode, a second run does no further lossy work.
#include <gtest/gtest.h>

#include "formats/video/avi_file.h"
#include "formats/video/avi_index.h"
#include "formats/video/mjpeg.h"
#include "lighten/compare.h"
#include "lighten/lighten.h"
#include "lighten/report.h"
#include "video/avi_checks.h"
#include "video/avi_maker.h"

namespace lighten {
namespace {

using namespace video;
using testing::AviRecipe;
using testing::make_avi;

Policy perceptual(Mode mode) {
  Policy p;
  p.mode = mode;
  return p;
}

// A camera-like clip: frames large enough to requantise, without DHT, with PCM audio.
AviRecipe camera_clip() {
  AviRecipe r;
  r.frames = 5;
  r.width = 320, r.height = 240;
  r.quality = 92;  // camera MJPEG is written fine: there is room to requantise
  r.strip_dht = true;
  r.open_dml = true;
  return r;
}

// The frame images of `avi`, in file order (fields one after the other).
std::vector<Bytes> frame_images(const Bytes& avi) {
  const AviFile a = parse_avi(avi);
  std::vector<Bytes> images;
  for (const RiffChunk& c : a.tree.chunks) {
    if (c.is_list || !a.is_mjpeg_frame(c)) continue;
    const Bytes data = chunk_data(avi, c);
    for (const JpegImageSpan& s : split_mjpeg_chunk(data))
      images.emplace_back(data.begin() + long(s.begin), data.begin() + long(s.end));
  }
  return images;
}

// Every chunk but the frames unchanged, every index entry pointing where it did.
void expect_same_structure(const Bytes& in, const Bytes& out) {
  const AviFile a = parse_avi(in), b = parse_avi(out);
  ASSERT_EQ(a.tree.chunks.size(), b.tree.chunks.size());
  for (size_t i = 0; i < a.tree.chunks.size(); ++i) {
    const RiffChunk& x = a.tree.chunks[i];
    ASSERT_EQ(x.id, b.tree.chunks[i].id);
    if (x.is_list || a.is_mjpeg_frame(x)) continue;
    if (index_kind(in, x) != IndexKind::kNone) {
      EXPECT_EQ(resolve_index(in, a, i).targets, resolve_index(out, b, i).targets);
    } else {
      EXPECT_EQ(chunk_data(in, x), chunk_data(out, b.tree.chunks[i])) << fourcc_text(x.id);
    }
  }
}

TEST(AviPerceptual, EveryFrameMeetsTheFloor) {
  for (const Mode mode : {Mode::kVisuallyLossless, Mode::kCompact}) {
    const Policy policy = perceptual(mode);
    const double floor = quality_floor(policy);
    SCOPED_TRACE("floor " + std::to_string(floor));
    const Bytes in = make_avi(camera_clip());
    const Outcome o = optimize(in, policy);
    ASSERT_TRUE(o.replaced()) << o.message;
    EXPECT_LT(o.bytes.size(), in.size());
    EXPECT_FALSE(o.quality.pixels_identical) << o.detail;
    ASSERT_TRUE(o.quality.ssimulacra2.has_value());  // the worst frame's score
    EXPECT_GE(*o.quality.ssimulacra2, floor);
    EXPECT_NE(o.detail.find("requantised: SSIMULACRA2 min"), std::string::npos) << o.detail;
    expect_same_structure(in, o.bytes);
    const auto before = frame_images(in), after = frame_images(o.bytes);
    ASSERT_EQ(before.size(), after.size());
    double worst = 100;
    for (size_t k = 0; k < before.size(); ++k) {
      // 320x240 frames are held to the floor score (also mirrored out to 256 px).
      const ImageScores s = compare_images(before[k], after[k], false);
      EXPECT_GE(s.floor_score, floor) << "frame " << k;
      EXPECT_GE(s.ssimulacra2, s.floor_score) << "frame " << k;
      worst = std::min(worst, s.floor_score);
    }
    // The reported score is the lower of this (libjpeg's view) and the frames as ffmpeg-based
    // readers decode them, which the detail gives too.
    EXPECT_LE(*o.quality.ssimulacra2, worst + 0.01);
    EXPECT_NE(o.detail.find("as ffmpeg decodes them: min"), std::string::npos) << o.detail;
    EXPECT_NEAR(ssimulacra2_from_detail(o.detail).value_or(0), *o.quality.ssimulacra2, 0.005)
        << o.detail;
  }
}

TEST(AviPerceptual, ASecondRunDoesNoFurtherLossyWork) {
  const Policy policy = perceptual(Mode::kHigh);
  const Outcome first = optimize(make_avi(camera_clip()), policy);
  ASSERT_TRUE(first.replaced()) << first.message;
  EXPECT_FALSE(first.quality.pixels_identical) << first.detail;
  const Outcome second = optimize(first.bytes, policy);
  if (second.replaced()) {
    EXPECT_TRUE(second.quality.pixels_identical) << second.detail;
  }
}

// An earlier run left some frames of a file it requantised as they were (under the floor as
// ffmpeg decodes them, say): each frame's search depends on the frames before it, so a second run
// could find another answer for them. Once any frame carries the marker, none is requantised,
// also where the first marked frame comes after one this run would have requantised.
TEST(AviPerceptual, FramesAnEarlierRunLeftUnrequantisedStayAsTheyAre) {
  const Policy policy = perceptual(Mode::kHigh);
  AviRecipe r = camera_clip();
  r.strip_dht = false;  // every frame decodes with its own tables, in any order
  const Bytes in = make_avi(r);
  const Outcome first = optimize(in, policy);
  ASSERT_TRUE(first.replaced()) << first.message;
  const std::vector<Bytes> requantised = frame_chunks(first.bytes);
  const std::vector<Bytes> original = frame_chunks(in);
  ASSERT_EQ(requantised.size(), original.size());
  // Frames the first run requantised carry the marker (others stayed lossless: tables that
  // would stay mostly the source's).
  std::vector<size_t> marked;
  for (size_t i = 0; i < requantised.size(); ++i)
    if (carries_quality_marker(requantised[i])) marked.push_back(i);
  ASSERT_GE(marked.size(), 2u);
  for (const size_t left : {marked.back(), marked.front()}) {
    SCOPED_TRACE("frame " + std::to_string(left) + " left as it was");
    // Put back as it was, a requantised frame stands for one a run left alone.
    ASSERT_FALSE(carries_quality_marker(original[left]));
    r.given_frames = requantised;
    r.given_frames[left] = original[left];
    const Outcome second = optimize(make_avi(r), policy);
    const std::string said = second.replaced() ? second.detail : second.message;
    EXPECT_NE(said.find("requantised frames of this file before"), std::string::npos) << said;
    if (second.replaced()) {
      EXPECT_TRUE(second.quality.pixels_identical) << second.detail;
      EXPECT_FALSE(carries_quality_marker(frame_chunks(second.bytes)[left]));
    } else {
      EXPECT_EQ(second.reason, Reason::kNoGain) << second.message;
    }
  }
}

// A stream header that says XVID over Motion-JPEG frames: libav cannot re-encode what it reads,
// and the file is left alone with libav's reason (AVIs with real Xvid: avi_libav_test.cpp).
TEST(AviPerceptual, AStreamThatLiesAboutItsCodecIsLeftAloneWithAReason) {
  Bytes in = make_avi(AviRecipe{});
  const AviFile a = parse_avi(in);
  for (const RiffChunk& c : a.tree.chunks)
    if (c.id == fourcc("strf") && c.size == 40)
      std::copy_n("XVID", 4, in.begin() + long(c.data_offset() + 16));
  const Outcome o = optimize(in, perceptual(Mode::kVisuallyLossless));
  EXPECT_FALSE(o.replaced());
  EXPECT_NE(o.reason, Reason::kInternalError) << o.message;
  EXPECT_FALSE(o.message.empty());
}

TEST(AviPerceptual, TheTimeBudgetIsHonoured) {
  Policy policy = perceptual(Mode::kVisuallyLossless);
  policy.limits.time_budget_s = 0;
  const Outcome o = optimize(make_avi(camera_clip()), policy);
  EXPECT_FALSE(o.replaced());
  EXPECT_EQ(o.reason, Reason::kLimitExceeded) << o.message;
}

// A video that would outlast the budget is given up after about two seconds, not after all of it.
TEST(AviPerceptual, ALongVideoIsGivenUpEarly) {
  AviRecipe r = camera_clip();
  r.frames = 120;
  Policy policy = perceptual(Mode::kVisuallyLossless);
  policy.limits.time_budget_s = 4;
  const Outcome o = optimize(make_avi(r), policy);
  EXPECT_FALSE(o.replaced());
  EXPECT_EQ(o.reason, Reason::kLimitExceeded);
  EXPECT_NE(o.message.find("120 frames would take about"), std::string::npos) << o.message;
}

}  // namespace
}  // namespace lighten
