// Every file of the shared video corpus and the broken files: MJPEG AVIs come out smaller with
// every frame pixel-identical and every index entry in place; everything else is left alone
// with a reason. The independent readers (ffprobe, ffmpeg, OpenCV) are video_readers_test.py.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "lighten/lighten.h"
#include "support/corpus.h"
#include "video/avi_checks.h"

namespace lighten {
namespace {

TEST(VideoCorpus, MjpegAvisShrinkLosslessly) {
  const auto files = testing::corpus_files("video");
  LIGHTEN_REQUIRE_CORPUS(files, "video");
  uint64_t before = 0, after = 0;
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    const Bytes input = testing::read_file(file);
    const Outcome o = optimize(input, Policy{});
    if (sniff(input) != Kind::kAvi) {
      EXPECT_FALSE(o.replaced());
      EXPECT_FALSE(o.message.empty());
      continue;
    }
    bool mjpeg = false;
    for (const auto& s : video::parse_avi(input).streams) mjpeg = mjpeg || s.mjpeg;
    if (!mjpeg) {
      EXPECT_FALSE(o.replaced());
      EXPECT_EQ(o.reason, Reason::kUnsupportedVariant) << o.message;
      continue;
    }
    ASSERT_TRUE(o.replaced()) << o.message;
    EXPECT_TRUE(o.quality.pixels_identical);
    before += input.size();
    after += o.bytes.size();
    video::expect_same_frames(input, o.bytes);
  }
  if (before > 0) {
    const double saved = 100.0 * double(before - after) / double(before);
    std::printf("video corpus: MJPEG AVIs %llu -> %llu bytes (%.1f %% saved)\n",
                (unsigned long long)before, (unsigned long long)after, saved);
  }
}

// Visually-lossless mode: Motion-JPEG AVIs come out smaller with their worst frame at or above
// the floor and the chunk tree intact; everything else, broken files included, is left alone
// with a reason. (video_readers_test.py scores every frame again through ffmpeg's extraction.)
TEST(VideoCorpus, PerceptualModeMeetsTheFloorOnEveryMjpegAvi) {
  const auto videos = testing::corpus_files("video");
  LIGHTEN_REQUIRE_CORPUS(videos, "video");
  auto files = testing::corpus_files("broken");
  files.insert(files.end(), videos.begin(), videos.end());
  Policy policy;
  policy.mode = Mode::kVisuallyLossless;
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    const Bytes input = testing::read_file(file);
    const Outcome o = optimize(input, policy);
    bool mjpeg = false;
    if (sniff(input) == Kind::kAvi) {
      try {
        for (const auto& s : video::parse_avi(input).streams) mjpeg = mjpeg || s.mjpeg;
      } catch (const FormatError&) {
      }
    }
    if (!mjpeg || file.parent_path().filename() == "broken") {
      if (!o.replaced()) {
        EXPECT_FALSE(o.message.empty());
      }
      continue;
    }
    ASSERT_TRUE(o.replaced()) << o.message;
    ASSERT_TRUE(o.quality.ssimulacra2.has_value()) << o.detail;
    EXPECT_GE(*o.quality.ssimulacra2, 85.0) << o.detail;
    EXPECT_EQ(video::parse_avi(o.bytes).tree.chunks.size(),
              video::parse_avi(input).tree.chunks.size());
    std::printf("%s: %zu -> %zu bytes, %s\n", file.filename().c_str(), input.size(), o.bytes.size(),
                o.detail.c_str());
  }
}

TEST(VideoCorpus, BrokenFilesAreLeftAloneWithAReason) {
  const auto files = testing::corpus_files("broken");
  LIGHTEN_REQUIRE_CORPUS(files, "broken");
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    const Bytes input = testing::read_file(file);
    const Outcome o = optimize(input, Policy{});
    if (!o.replaced()) {
      EXPECT_FALSE(o.message.empty());
    }
  }
}

// Every corpus video cut short at a few places: no crash, a reason, never a larger output.
TEST(VideoCorpus, TruncatedVideosAreLeftAlone) {
  const auto files = testing::corpus_files("video");
  LIGHTEN_REQUIRE_CORPUS(files, "video");
  for (const auto& file : files) {
    const Bytes input = testing::read_file(file);
    if (sniff(input) != Kind::kAvi) continue;
    for (double share : {0.1, 0.5, 0.97}) {
      SCOPED_TRACE(file.filename().string() + " cut at " + std::to_string(share));
      const Bytes part(input.begin(), input.begin() + long(double(input.size()) * share));
      const Outcome o = optimize(part, Policy{});
      EXPECT_FALSE(o.replaced());
      EXPECT_FALSE(o.message.empty());
    }
  }
}

}  // namespace
}  // namespace lighten
