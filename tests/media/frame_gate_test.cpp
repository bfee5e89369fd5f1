// The frame gate on small videos ffmpeg writes here (skipped without ffmpeg) and on the corpus:
// identical videos pass at 100, a coarse re-encode fails the floor, a changed frame count or size
// is named, bytes libav cannot read get a FormatError, never a crash.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "core/errors.h"
#include "formats/media/frame_gate.h"
#include "support/corpus.h"

namespace lighten::media {
namespace {

namespace fs = std::filesystem;

// Writes a clip with ffmpeg's test source into a temporary folder; empty when ffmpeg fails.
class Clips : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("lighten_media_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  Bytes clip(const std::string& name, const std::string& args) {
    const fs::path out = dir_ / name;
    if (!fs::exists(out)) {
      const std::string cmd =
          "ffmpeg -nostdin -v error -y -f lavfi -i "
          "testsrc2=size=320x240:rate=25 " +
          args + " " + out.string() + " 2>/dev/null";
      if (std::system(cmd.c_str()) != 0) return {};
    }
    return testing::read_file(out);
  }

  void SetUp() override {
    if (std::system("ffmpeg -version > /dev/null 2>&1") != 0) GTEST_SKIP() << "ffmpeg is absent";
  }

  static inline fs::path dir_;
};

TEST_F(Clips, DecodesEveryFrameAndSamplesEvenly) {
  const Bytes avi = clip("fine.avi", "-t 1 -c:v mjpeg -q:v 2");
  ASSERT_FALSE(avi.empty());
  std::vector<int64_t> numbers;
  const VideoFrames v = decode_frames(avi, 10, 2, [&](int64_t n, const ImageRgb8& image) {
    numbers.push_back(n);
    EXPECT_EQ(image.width, 320u);
    EXPECT_EQ(image.height, 240u);
    EXPECT_EQ(image.samples.size(), 320u * 240u * 3u);
  });
  EXPECT_EQ(v.codec, "mjpeg");
  EXPECT_EQ(v.frames, 25);
  EXPECT_EQ(v.packets, 25);
  EXPECT_EQ(numbers, (std::vector<int64_t>{0, 10}));
  EXPECT_EQ(probe_video(avi).packets, 25);
}

TEST_F(Clips, IdenticalVideosPassAtOneHundred) {
  const Bytes mp4 = clip("h264.mp4", "-t 1 -c:v libx264 -crf 18 -pix_fmt yuv420p");
  ASSERT_FALSE(mp4.empty());
  const GateResult g = frame_gate(mp4, mp4, 85, 6, 10);
  EXPECT_TRUE(g.passes) << g.problem;
  EXPECT_EQ(g.compared, 5u);  // frames 0, 5, 10, 15, 20 of 25
  EXPECT_DOUBLE_EQ(g.worst, 100);
}

TEST_F(Clips, ACoarseReencodeFailsTheFloor) {
  const Bytes fine = clip("fine.avi", "-t 1 -c:v mjpeg -q:v 2");
  const Bytes coarse = clip("coarse.avi", "-t 1 -c:v mjpeg -q:v 25");
  ASSERT_FALSE(fine.empty() || coarse.empty());
  const GateResult g = frame_gate(fine, coarse, 85, 4, 10);
  EXPECT_FALSE(g.passes);
  EXPECT_LT(g.worst, 85);
  EXPECT_NE(g.problem.find("scores SSIMULACRA2"), std::string::npos) << g.problem;
  // The same pair passes a floor under its worst frame.
  EXPECT_TRUE(frame_gate(fine, coarse, g.worst - 1, 4, 100).passes);
}

TEST_F(Clips, FrameCountAndSizeChangesAreNamed) {
  const Bytes fine = clip("fine.avi", "-t 1 -c:v mjpeg -q:v 2");
  const Bytes shorter = clip("shorter.avi", "-t 0.96 -c:v mjpeg -q:v 2");
  const Bytes smaller = clip("smaller.avi", "-t 1 -vf scale=160:120 -c:v mjpeg -q:v 2");
  ASSERT_FALSE(fine.empty() || shorter.empty() || smaller.empty());
  const GateResult a = frame_gate(fine, shorter, 85, 4, 10);
  EXPECT_FALSE(a.passes);
  EXPECT_NE(a.problem.find("frame count changed from 25 to 24"), std::string::npos) << a.problem;
  const GateResult b = frame_gate(fine, smaller, 85, 4, 10);
  EXPECT_FALSE(b.passes);
  EXPECT_NE(b.problem.find("size"), std::string::npos) << b.problem;
}

TEST_F(Clips, MalformedInputGetsAFormatError) {
  const Bytes fine = clip("fine.avi", "-t 1 -c:v mjpeg -q:v 2");
  ASSERT_FALSE(fine.empty());
  const auto noop = [](int64_t, const ImageRgb8&) {};
  Bytes garbage(4096);
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = uint8_t(i * 2654435761u >> 24);
  EXPECT_THROW(decode_frames(garbage, 1, 1, noop), FormatError);
  EXPECT_THROW(decode_frames(Bytes{}, 1, 1, noop), FormatError);
  // Cut and damaged copies: a FormatError or fewer frames, never a crash.
  for (const double share : {0.05, 0.5, 0.9}) {
    Bytes part(fine.begin(), fine.begin() + long(double(fine.size()) * share));
    Bytes flipped = fine;
    for (size_t i = size_t(double(fine.size()) * share); i < flipped.size(); i += 97)
      flipped[i] ^= 0x5A;
    for (const Bytes* b : {&part, &flipped}) {
      try {
        EXPECT_LE(decode_frames(*b, 1, 1, noop).frames, 25);
      } catch (const FormatError& e) {
        EXPECT_NE(std::string(e.what()), "");
      }
    }
  }
}

// Every corpus video libav reads decodes to as many frames as ffprobe counts by decoding.
TEST(FrameGateCorpus, CorpusVideosDecode) {
  const auto files = testing::corpus_files("video");
  LIGHTEN_REQUIRE_CORPUS(files, "video");
  const std::map<std::string, int64_t> frames = {
      {"canon_mjpeg.avi", 78}, {"kodak_mjpeg.avi", 41}, {"gps.mov", 120}, {"mpeg4.mp4", 149}};
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    const Bytes input = testing::read_file(file);
    auto it = frames.find(file.filename().string());
    if (it == frames.end()) continue;
    const VideoFrames v = decode_frames(input, 1000, 1, [](int64_t, const ImageRgb8&) {});
    EXPECT_EQ(v.frames, it->second);
  }
}

}  // namespace
}  // namespace lighten::media
