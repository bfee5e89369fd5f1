// AVIs with other codecs than Motion-JPEG through the public optimize(): the perceptual modes
// re-encode Xvid and DivX 3 with their own codec, or as H.264 under --video-codec h264, the AVI
// container, audio and frame count kept, and a second run leaves the result alone; lossless
// mode, cinepak and broken files are left alone with a reason. Clips are made here by ffmpeg
// (skipped without it), a second long, so that the suite stays short.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "formats/jpeg/perceptual.h"
#include "formats/media/frame_gate.h"
#include "formats/video/avi_file.h"
#include "lighten/lighten.h"
#include "support/command.h"
#include "support/corpus.h"

namespace lighten {
namespace {

namespace fs = std::filesystem;

using testing::command_output;

Policy perceptual(Mode mode, VideoCodecPolicy codec = VideoCodecPolicy::kKeep) {
  Policy p;
  p.mode = mode;
  p.video_codec = codec;
  return p;
}

class AviLibav : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("ffmpeg -version > /dev/null 2>&1") != 0) GTEST_SKIP() << "ffmpeg is absent";
    dir_ = fs::temp_directory_path() / ("lighten_avi_libav_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A finely coded one-second clip with PCM audio, as capture software writes them.
  Bytes clip(const std::string& name, const std::string& video_args,
             const std::string& source = "testsrc2") {
    const fs::path out = dir_ / name;
    const std::string cmd =
        "ffmpeg -nostdin -v error -y -f lavfi -i " + source +
        "=size=320x240:rate=25 -f lavfi -i sine=f=440:r=16000 -t 1 -map 0 -map 1 -c:a pcm_s16le " +
        video_args + " " + out.string() + " 2>/dev/null";
    return std::system(cmd.c_str()) == 0 ? testing::read_file(out) : Bytes{};
  }

  // ffprobe's view of the streams: codec, tag, size, frames counted by decoding, rate.
  std::string streams(const Bytes& file) {
    const fs::path path = dir_ / "probe.avi";
    testing::write_file(path, file);
    return command_output(
        "ffprobe -v error -count_frames -show_entries "
        "stream=codec_type,codec_name,codec_tag_string,width,height,pix_fmt,nb_read_frames,"
        "avg_frame_rate,sample_rate -of compact " +
        path.string());
  }

  std::string audio_hashes(const Bytes& file) {
    const fs::path path = dir_ / "audio.avi";
    testing::write_file(path, file);
    return command_output("ffmpeg -nostdin -v quiet -i " + path.string() +
                          " -map 0:a -c copy -f framemd5 - | grep -v '^#'");
  }

  std::string decode_errors(const Bytes& file) {
    const fs::path path = dir_ / "decode.avi";
    testing::write_file(path, file);
    return command_output("ffmpeg -nostdin -v error -i " + path.string() + " -f null - 2>&1");
  }

  fs::path dir_;
};

// Motion-JPEG frames are gated inside the JPEG optimiser as libjpeg decodes them; ffmpeg (and
// OpenCV, decord) decode with another IDCT and chroma upsampling, and show test patterns about
// four points lower in compact mode. Every frame as ffmpeg decodes it still meets the floor.
TEST_F(AviLibav, MjpegFramesMeetTheFloorAsFfmpegDecodesThem) {
  const Bytes in = clip("mjpeg.avi", "-c:v mjpeg -q:v 3 -huffman default -pix_fmt yuvj422p");
  ASSERT_FALSE(in.empty());
  const Policy policy = perceptual(Mode::kCompact);
  const Outcome o = optimize(in, policy);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_NE(o.detail.find("as ffmpeg decodes them: min"), std::string::npos) << o.detail;
  EXPECT_NE(o.detail.find("done again at a raised floor"), std::string::npos) << o.detail;
  const media::GateResult g =
      media::frame_gate(in, o.bytes, quality_floor(policy), 0, jpeg::kWorstTileMargin);
  EXPECT_TRUE(g.passes) << g.problem;
  EXPECT_EQ(g.compared, 25u);
  EXPECT_LT(o.bytes.size(), in.size() * 3 / 4);
}

// 4:4:4 Motion-JPEG keeps its sampling in every frame (a photo may become 4:2:0, a frame may not:
// decoders would reconfigure from frame to frame). Smooth gradients, where 4:2:0 would win.
TEST_F(AviLibav, MjpegFramesKeepTheirSampling) {
  const Bytes in =
      clip("g444.avi", "-c:v mjpeg -q:v 2 -huffman default -pix_fmt yuvj444p", "gradients");
  ASSERT_FALSE(in.empty());
  const Outcome o = optimize(in, perceptual(Mode::kCompact));
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(media::probe_video(o.bytes).pixel_format, "yuv444p");
  EXPECT_EQ(media::probe_video(in).pixel_format, "yuv444p");
}

// With B-frames, as Xvid writes them: AVI readers show every frame one frame late, and so must
// they the output's (the gate compares every frame's time). By default Xvid stays Xvid;
// --video-codec h264 turns it into H.264 in the same AVI.
TEST_F(AviLibav, XvidIsReencodedWithItsOwnCodecOrAsH264AndLeftAloneTheSecondTime) {
  const Bytes in = clip("xvid.avi", "-c:v mpeg4 -vtag XVID -bf 1 -q:v 2", "mandelbrot");
  ASSERT_FALSE(in.empty());
  ASSERT_EQ(sniff(in), Kind::kAvi);
  const Outcome own = optimize(in, perceptual(Mode::kCompact));
  ASSERT_TRUE(own.replaced()) << own.message;
  EXPECT_EQ(sniff(own.bytes), Kind::kAvi);
  EXPECT_LT(own.bytes.size(), in.size());
  EXPECT_NE(own.detail.find("mpeg4 re-encoded with mpeg4 qscale"), std::string::npos) << own.detail;
  EXPECT_EQ(streams(own.bytes), streams(in));
  EXPECT_NE(streams(in).find("codec_tag_string=XVID"), std::string::npos) << streams(in);
  EXPECT_EQ(audio_hashes(own.bytes), audio_hashes(in));
  EXPECT_EQ(decode_errors(own.bytes), "");
  EXPECT_NO_THROW(video::parse_avi(own.bytes));  // our own RIFF parser reads the muxer's file
  EXPECT_EQ(optimize(own.bytes, perceptual(Mode::kCompact)).reason, Reason::kAlreadyOptimized);

  const Outcome o = optimize(in, perceptual(Mode::kCompact, VideoCodecPolicy::kH264));
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(sniff(o.bytes), Kind::kAvi);
  EXPECT_LT(o.bytes.size(), in.size());
  ASSERT_TRUE(o.quality.ssimulacra2.has_value());
  EXPECT_GE(*o.quality.ssimulacra2, 70.0);
  EXPECT_NE(o.detail.find("mpeg4 re-encoded with libx264 crf"), std::string::npos) << o.detail;
  EXPECT_NE(streams(o.bytes).find("codec_name=h264"), std::string::npos) << streams(o.bytes);
  EXPECT_EQ(audio_hashes(o.bytes), audio_hashes(in));
  EXPECT_EQ(decode_errors(o.bytes), "");
  EXPECT_NO_THROW(video::parse_avi(o.bytes));
  const Outcome again = optimize(o.bytes, perceptual(Mode::kCompact, VideoCodecPolicy::kH264));
  EXPECT_FALSE(again.replaced());
  EXPECT_EQ(again.reason, Reason::kAlreadyOptimized) << again.message;
}

// A re-encode goes through libav's muxer, which writes no chunk it does not know: a maker's chunk
// beside the headers, or a stream's strd, would be lost (strd even turned into codec data). Such
// files are left alone, before any encoding; here a JUNK chunk of ffmpeg's file is renamed.
TEST_F(AviLibav, ChunksTheMuxerWouldDropLeaveTheFileAlone) {
  const Bytes in = clip("vendor.avi", "-c:v mpeg4 -vtag XVID -q:v 2", "mandelbrot");
  ASSERT_FALSE(in.empty());
  const video::AviFile avi = video::parse_avi(in);
  for (const auto& [depth, name] : {std::pair{1u, "vndr"}, std::pair{2u, "strd"}}) {
    Bytes renamed = in;
    bool found = false;
    for (const video::RiffChunk& c : avi.tree.chunks)
      if (!found && c.id == video::fourcc("JUNK") && c.depth == depth) {
        std::copy_n(name, 4, renamed.begin() + long(c.offset));
        found = true;
      }
    ASSERT_TRUE(found) << "no JUNK at depth " << depth;
    const Outcome o = optimize(renamed, perceptual(Mode::kCompact));
    EXPECT_EQ(o.reason, Reason::kUnsupportedVariant) << o.message;
    EXPECT_NE(o.message.find(name), std::string::npos) << o.message;
  }
}

// (Over testsrc2's fine text no DivX 3 re-encode stays above 70 at frame 22, ten frames after
// the last keyframe; a fractal, as detailed, has no such flat edges.)
TEST_F(AviLibav, H264PolicyTurnsDivX3IntoH264InAvi) {
  const Bytes in = clip("div3.avi", "-c:v msmpeg4 -vtag DIV3 -q:v 2", "mandelbrot");
  ASSERT_FALSE(in.empty());
  const Outcome o = optimize(in, perceptual(Mode::kCompact, VideoCodecPolicy::kH264));
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(sniff(o.bytes), Kind::kAvi);
  EXPECT_NE(o.detail.find("msmpeg4v3 re-encoded with libx264 crf"), std::string::npos) << o.detail;
  ASSERT_TRUE(o.quality.ssimulacra2.has_value());
  EXPECT_GE(*o.quality.ssimulacra2, 70.0);
  // The same streams, but for the video's codec and tag.
  std::string expected = streams(in);
  const std::string from = "codec_name=msmpeg4v3", tag = "codec_tag_string=DIV3";
  expected.replace(expected.find(from), from.size(), "codec_name=h264");
  expected.replace(expected.find(tag), tag.size(), "codec_tag_string=H264");
  EXPECT_EQ(streams(o.bytes), expected);
  EXPECT_EQ(audio_hashes(o.bytes), audio_hashes(in));
  EXPECT_EQ(decode_errors(o.bytes), "");

  // Kept codec: DivX 3 stays DivX 3 and the H.264 file is not touched again.
  const Outcome again = optimize(o.bytes, perceptual(Mode::kCompact, VideoCodecPolicy::kH264));
  EXPECT_EQ(again.reason, Reason::kAlreadyOptimized) << again.message;
  const Outcome kept = optimize(in, perceptual(Mode::kCompact));
  ASSERT_TRUE(kept.replaced()) << kept.message;
  EXPECT_EQ(streams(kept.bytes), streams(in));
}

// H.264 in AVI with x264's B-pyramid: every frame shows two frames late, in the output too.
TEST_F(AviLibav, H264WithBFramesInAviIsReencodedWithItsOwnCodec) {
  const Bytes in = clip("h264.avi", "-c:v libx264 -crf 10 -bf 3", "mandelbrot");
  ASSERT_FALSE(in.empty());
  const Outcome o = optimize(in, perceptual(Mode::kCompact));
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_NE(o.detail.find("h264 re-encoded with libx264 crf"), std::string::npos) << o.detail;
  EXPECT_EQ(streams(o.bytes), streams(in));
  EXPECT_EQ(audio_hashes(o.bytes), audio_hashes(in));
  EXPECT_EQ(decode_errors(o.bytes), "");
}

TEST_F(AviLibav, LosslessModeLeavesXvidAlone) {
  const Bytes in = clip("xvid.avi", "-c:v mpeg4 -vtag XVID -q:v 2");
  ASSERT_FALSE(in.empty());
  const Outcome o = optimize(in, Policy{});
  EXPECT_FALSE(o.replaced());
  EXPECT_EQ(o.reason, Reason::kUnsupportedVariant);
  EXPECT_NE(o.message.find("lossless mode does not re-encode lossy video"), std::string::npos)
      << o.message;
}

// Cinepak decodes to RGB: neither its own encoder (no quality setting) nor H.264 (YUV 4:2:0)
// keeps what it is, so it is left alone with that reason under both codec policies.
TEST_F(AviLibav, CinepakIsLeftAloneWithAReason) {
  const Bytes in = clip("cinepak.avi", "-c:v cinepak -s 64x48 -frames:v 3");
  ASSERT_FALSE(in.empty());
  for (const VideoCodecPolicy codec : {VideoCodecPolicy::kKeep, VideoCodecPolicy::kH264}) {
    const Outcome o = optimize(in, perceptual(Mode::kCompact, codec));
    EXPECT_FALSE(o.replaced());
    EXPECT_EQ(o.reason, Reason::kUnsupportedVariant);
    EXPECT_NE(o.message.find("cinepak video is not re-encoded: its frames are rgb24"),
              std::string::npos)
        << o.message;
  }
}

// Cut short or with a damaged index: our RIFF parser or libav refuses, and the reason says so.
TEST_F(AviLibav, BrokenXvidIsLeftAloneWithAReason) {
  const Bytes in = clip("xvid.avi", "-c:v mpeg4 -vtag XVID -q:v 2");
  ASSERT_FALSE(in.empty());
  for (const double share : {0.05, 0.5, 0.98}) {
    SCOPED_TRACE(share);
    const Bytes part(in.begin(), in.begin() + long(double(in.size()) * share));
    const Outcome o = optimize(part, perceptual(Mode::kCompact));
    EXPECT_FALSE(o.replaced());
    EXPECT_FALSE(o.message.empty());
    EXPECT_NE(o.reason, Reason::kInternalError) << o.message;
  }
  // An idx1 entry pointing past the movi list.
  const video::AviFile avi = video::parse_avi(in);
  Bytes damaged = in;
  for (const video::RiffChunk& c : avi.tree.chunks)
    if (c.id == video::fourcc("idx1") && c.size >= 16)
      for (int k = 0; k < 4; ++k) damaged[c.data_offset() + 8 + size_t(k)] = 0x7f;
  const Outcome o = optimize(damaged, perceptual(Mode::kCompact));
  EXPECT_FALSE(o.replaced());
  EXPECT_NE(o.reason, Reason::kInternalError) << o.message;
  EXPECT_FALSE(o.message.empty());
}

}  // namespace
}  // namespace lighten
