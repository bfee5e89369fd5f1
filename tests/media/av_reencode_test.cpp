// One same-codec re-encode of clips ffmpeg writes here (skipped without ffmpeg): the result keeps
// the container, every stream, the frame count and size, the rotation, the metadata and the audio
// packets, and decodes within the gate when the setting is fine; bad input gets a FormatError.
#include <gtest/gtest.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/errors.h"
#include "formats/media/av_io.h"
#include "formats/media/av_reencode.h"
#include "formats/media/frame_gate.h"
#include "formats/media/mp4_metadata.h"
#include "support/command.h"
#include "support/corpus.h"

namespace lighten::media {
namespace {

namespace fs = std::filesystem;

using testing::command_output;

class Reencode : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("ffmpeg -version > /dev/null 2>&1") != 0) GTEST_SKIP() << "ffmpeg is absent";
    dir_ = fs::temp_directory_path() / ("lighten_reencode_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path clip(const std::string& name, const std::string& args) {
    const fs::path out = dir_ / name;
    const std::string cmd =
        "ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=320x240:rate=25 -f lavfi -i "
        "sine=f=440:r=16000 -t 1 -map 0 -map 1 " +
        args + " " + out.string() + " 2>/dev/null";
    return std::system(cmd.c_str()) == 0 ? out : fs::path();
  }

  // ffprobe's view of what must not change, one line per stream plus the file's tags. The MOV
  // muxer writes no language for "und" (undetermined), as ffmpeg -c copy does: not compared.
  static std::string shape(const fs::path& file) {
    std::string s = command_output(
        "ffprobe -v error -count_frames -show_entries "
        "stream=codec_type,codec_name,width,height,pix_fmt,nb_read_frames,avg_frame_rate:"
        "stream_side_data=rotation:stream_tags:format_tags -of compact " +
        file.string());
    for (size_t at; (at = s.find("|tag:language=und")) != std::string::npos;) s.erase(at, 17);
    // The file type box is the muxer's (its minor version among it).
    for (size_t at; (at = s.find("|tag:minor_version=")) != std::string::npos;)
      s.erase(at, s.find('|', at + 1) - at);
    // The sample description's vendor names the encoder, which is now libavcodec's.
    for (size_t at; (at = s.find("|tag:vendor_id=")) != std::string::npos;)
      s.erase(at, s.find('|', at + 1) - at);
    // Tags in sorted order: the muxer writes them in its own.
    std::string sorted;
    std::istringstream lines(s);
    for (std::string line; std::getline(lines, line);) {
      std::vector<std::string> fields;
      std::istringstream parts(line);
      for (std::string f; std::getline(parts, f, '|');) fields.push_back(f);
      std::sort(fields.begin() + 1, fields.end());
      for (const auto& f : fields) sorted += f + "|";
      sorted += "\n";
    }
    return sorted;
  }

  static std::string audio_hashes(const fs::path& file) {
    return command_output("ffmpeg -nostdin -v quiet -i " + file.string() +
                          " -map 0:a -c copy -f framemd5 - | grep -v '^#'");
  }

  fs::path dir_;
};

TEST_F(Reencode, H264Mp4KeepsStreamsMetadataAndAudio) {
  const fs::path in = clip("in.mp4",
                           "-c:v libx264 -crf 8 -pix_fmt yuv420p -c:a aac -metadata title=Hello "
                           "-metadata:s:a:0 language=kor");
  ASSERT_FALSE(in.empty());
  const Bytes input = testing::read_file(in);
  const Bytes output = reencode_video(input, *same_codec_encoder("h264", 26));
  ASSERT_FALSE(output.empty());
  EXPECT_LT(output.size(), input.size());
  const fs::path out = dir_ / "out.mp4";
  testing::write_file(out, output);
  EXPECT_EQ(shape(out), shape(in));
  EXPECT_NE(shape(in).find("title=Hello"), std::string::npos) << shape(in);
  EXPECT_EQ(audio_hashes(out), audio_hashes(in));
  EXPECT_EQ(command_output("ffmpeg -nostdin -v error -i " + out.string() + " -f null - 2>&1"), "");
  const GateResult g = frame_gate(input, output, 50, 8, 20);
  EXPECT_TRUE(g.passes) << g.problem;
}

// An iPhone video: rotated by its display matrix, with two timed-metadata data streams.
TEST_F(Reencode, PhoneMovKeepsRotationAndDataStreams) {
  const fs::path in = testing::shared_dir() / "corpus" / "video" / "gps.mov";
  if (!fs::exists(in)) GTEST_SKIP() << "corpus/video/gps.mov is absent";
  const Bytes input = testing::read_file(in);
  // Its QuickTime keys come back with its own 'meta' box (as the optimiser puts it back).
  const Bytes output =
      with_metadata_of(input, reencode_video(input, *same_codec_encoder("h264", 24)));
  const fs::path out = dir_ / "out.mov";
  testing::write_file(out, output);
  EXPECT_NE(shape(in).find("rotation=-90"), std::string::npos) << shape(in);
  EXPECT_EQ(shape(out), shape(in));
  EXPECT_EQ(audio_hashes(out), audio_hashes(in));
  EXPECT_LT(output.size(), fs::file_size(in));
}

// Each container and file type (the ftyp's major brand, compared in shape()) stays as it was: an
// 'mp42' file came out 'isom', a 3GPP2 one ('3g2a') a 3GPP one.
TEST_F(Reencode, MovAnd3gpStayInTheirContainerAndFileType) {
  const fs::path mov = clip("in.mov", "-c:v libx264 -crf 8 -pix_fmt yuv420p -c:a aac");
  const fs::path gp = clip("in.3gp", "-c:v mpeg4 -q:v 2 -c:a aac -ar 16000 -ac 1");
  const fs::path gp2 = clip("in.3g2", "-c:v mpeg4 -q:v 2 -c:a aac -ar 16000 -ac 1");
  const fs::path mp42 =
      clip("mp42.mp4", "-c:v libx264 -crf 8 -pix_fmt yuv420p -c:a aac -brand mp42");
  ASSERT_FALSE(mov.empty() || gp.empty() || gp2.empty() || mp42.empty());
  ASSERT_NE(shape(gp2).find("major_brand=3g2a"), std::string::npos) << shape(gp2);
  ASSERT_NE(shape(mp42).find("major_brand=mp42"), std::string::npos) << shape(mp42);
  for (const auto& [in, codec, value] :
       {std::tuple{mov, "h264", 28}, std::tuple{gp, "mpeg4", 6}, std::tuple{gp2, "mpeg4", 6},
        std::tuple{mp42, "h264", 28}}) {
    SCOPED_TRACE(in.filename().string());
    const Bytes output = reencode_video(testing::read_file(in), *same_codec_encoder(codec, value));
    const fs::path out = dir_ / ("out" + in.extension().string());
    testing::write_file(out, output);
    EXPECT_EQ(shape(out), shape(in));
    EXPECT_EQ(audio_hashes(out), audio_hashes(in));
  }
}

TEST_F(Reencode, HevcMp4KeepsItsTagAndFrames) {
  const fs::path in = clip("hevc.mp4",
                           "-c:v libx265 -crf 8 -tag:v hvc1 -pix_fmt yuv420p -c:a aac "
                           "-x265-params log-level=none");
  if (in.empty()) GTEST_SKIP() << "this ffmpeg has no libx265";
  const Bytes output = reencode_video(testing::read_file(in), *same_codec_encoder("hevc", 28));
  const fs::path out = dir_ / "out.mp4";
  testing::write_file(out, output);
  EXPECT_EQ(shape(out), shape(in));
  EXPECT_LT(output.size(), fs::file_size(in));
  EXPECT_EQ(
      command_output("ffprobe -v error -select_streams v -show_entries stream=codec_tag_string -of "
                     "csv=p=0 " +
                     out.string()),
      "hvc1\n");
}

TEST_F(Reencode, Mpeg4AviKeepsItsFramesAndAudio) {
  const fs::path in = clip("in.avi", "-c:v mpeg4 -q:v 2 -c:a pcm_s16le");
  ASSERT_FALSE(in.empty());
  const Bytes output = reencode_video(testing::read_file(in), *same_codec_encoder("mpeg4", 5));
  const fs::path out = dir_ / "out.avi";
  testing::write_file(out, output);
  EXPECT_EQ(shape(out), shape(in));
  EXPECT_EQ(audio_hashes(out), audio_hashes(in));
}

// The marker of a re-encoded AVI rides in its software tag (the AVI muxer writes no other free
// text) after the tag the file had, and probe_video reads it back.
TEST_F(Reencode, AviMarkerFollowsTheSoftwareTag) {
  const fs::path in = clip("in.avi", "-c:v mpeg4 -q:v 2 -c:a pcm_s16le");
  ASSERT_FALSE(in.empty());
  const Bytes input = testing::read_file(in);
  EXPECT_EQ(probe_video(input).marker, "");
  EncoderChoice choice = *same_codec_encoder("mpeg4", 5);
  choice.marker = "mpeg4 qscale 5";
  const Bytes output = reencode_video(input, choice);
  EXPECT_EQ(probe_video(output).marker, "mpeg4 qscale 5");
  const fs::path out = dir_ / "out.avi";
  testing::write_file(out, output);
  const std::string before = command_output(
      "ffprobe -v error -show_entries format_tags=software -of csv=p=0 " + in.string());
  const std::string after = command_output(
      "ffprobe -v error -show_entries format_tags=software -of csv=p=0 " + out.string());
  ASSERT_FALSE(before.empty());
  EXPECT_EQ(after, before.substr(0, before.size() - 1) + "; lighten: mpeg4 qscale 5\n");
}

TEST_F(Reencode, Mpeg4AviBecomesH264InAvi) {
  const fs::path in = clip("in.avi", "-c:v mpeg4 -vtag XVID -q:v 2 -c:a pcm_s16le");
  ASSERT_FALSE(in.empty());
  const Bytes output = reencode_video(testing::read_file(in), *encoder_for("mpeg4", true, 23));
  const fs::path out = dir_ / "out.avi";
  testing::write_file(out, output);
  std::string expected = shape(in);
  expected.replace(expected.find("codec_name=mpeg4"), 16, "codec_name=h264");
  EXPECT_EQ(shape(out), expected);
  EXPECT_EQ(audio_hashes(out), audio_hashes(in));
  EXPECT_EQ(command_output("ffmpeg -nostdin -v error -i " + out.string() + " -f null - 2>&1"), "");
  EXPECT_LT(output.size(), fs::file_size(in));
}

TEST_F(Reencode, DivX3AviKeepsItsTag) {
  const fs::path in = clip("in.avi", "-c:v msmpeg4 -vtag DIV3 -q:v 2 -c:a pcm_s16le");
  ASSERT_FALSE(in.empty());
  const Bytes output = reencode_video(testing::read_file(in), *same_codec_encoder("msmpeg4v3", 6));
  const fs::path out = dir_ / "out.avi";
  testing::write_file(out, output);
  EXPECT_EQ(shape(out), shape(in));
  EXPECT_EQ(
      command_output("ffprobe -v error -select_streams v -show_entries stream=codec_tag_string -of "
                     "csv=p=0 " +
                     out.string()),
      "DIV3\n");
  EXPECT_LT(output.size(), fs::file_size(in));
}

// x264's AVX-512 code read memory it had not written: the same clip encoded to other bytes
// depending on what the heap held before (here made to hold other bytes by glibc's perturbation
// of freed and fresh blocks; under a sanitizer's allocator that does nothing).
TEST_F(Reencode, AnH264ReencodeIsTheSameWhateverTheHeapHeld) {
  // testsrc rather than clip()'s testsrc2: its second of frames meets the fault.
  const fs::path in = dir_ / "testsrc.mp4";
  ASSERT_EQ(std::system(("ffmpeg -nostdin -v error -y -f lavfi -i testsrc=size=320x240:rate=25 "
                         "-t 1 -c:v libx264 -crf 8 -pix_fmt yuv420p " +
                         in.string() + " 2>/dev/null")
                            .c_str()),
            0);
  const Bytes input = testing::read_file(in);
  std::vector<Bytes> outputs;
  struct Unperturb {
    ~Unperturb() { mallopt(M_PERTURB, 0); }
  } unperturb;
  for (const int perturb : {0x55, 0xAA, 0x0F}) {
    mallopt(M_PERTURB, perturb);
    outputs.push_back(reencode_video(input, *same_codec_encoder("h264", 32)));
  }
  EXPECT_EQ(outputs[1], outputs[0]);
  EXPECT_EQ(outputs[2], outputs[0]);
}

// MPEG-4 part 2 decoders tag each frame with its quantiser; the chosen qscale must win over it.
TEST_F(Reencode, QscaleSetsTheSize) {
  const fs::path in = clip("in.avi", "-c:v mpeg4 -q:v 2 -c:a pcm_s16le");
  ASSERT_FALSE(in.empty());
  const Bytes input = testing::read_file(in);
  const Bytes fine = reencode_video(input, *same_codec_encoder("mpeg4", 2));
  const Bytes coarse = reencode_video(input, *same_codec_encoder("mpeg4", 10));
  EXPECT_LT(double(coarse.size()), 0.6 * double(fine.size()));
}

// libav's return codes say little where a muxer fails (a bare -1 reads "Operation not
// permitted"); what a muxer logs as an error is kept, per thread, for the reason. Other
// components' messages are not: they would explain another failure.
TEST(ReencodeInput, AMuxersLoggedErrorIsKeptForTheReason) {
  silence_libav_log();
  AVFormatContext* muxer = nullptr;
  ASSERT_GE(avformat_alloc_output_context2(&muxer, nullptr, "mp4", nullptr), 0);
  AVCodecContext* decoder = avcodec_alloc_context3(avcodec_find_decoder(AV_CODEC_ID_H264));
  ASSERT_NE(decoder, nullptr);
  last_muxer_error().clear();
  av_log(decoder, AV_LOG_ERROR, "a decoder's complaint\n");
  EXPECT_EQ(last_muxer_error(), "");
  av_log(muxer, AV_LOG_WARNING, "a warning\n");
  EXPECT_EQ(last_muxer_error(), "");
  av_log(muxer, AV_LOG_ERROR, "fatal error, input is not a single packet\n");
  EXPECT_EQ(last_muxer_error(), "fatal error, input is not a single packet");
  std::thread([] { EXPECT_EQ(last_muxer_error(), ""); }).join();
  avcodec_free_context(&decoder);
  avformat_free_context(muxer);
  last_muxer_error().clear();
}

TEST(ReencodeInput, OnlyKnownCodecsHaveAnEncoder) {
  EXPECT_TRUE(same_codec_encoder("hevc", 24).has_value());
  EXPECT_EQ(same_codec_encoder("msmpeg4v3", 4)->encoder, "msmpeg4");
  EXPECT_FALSE(same_codec_encoder("mjpeg", 24).has_value());
  EXPECT_FALSE(same_codec_encoder("cinepak", 24).has_value());
}

TEST(ReencodeInput, TheH264PolicyConvertsOnlyOlderCodecs) {
  EXPECT_EQ(encoder_for("mpeg4", true, 23)->encoder, "libx264");
  EXPECT_EQ(encoder_for("msmpeg4v3", true, 23)->knob, "crf");
  EXPECT_EQ(encoder_for("mpeg4", false, 4)->encoder, "mpeg4");
  EXPECT_EQ(encoder_for("hevc", true, 23)->encoder, "libx265");  // never downgraded
  EXPECT_FALSE(encoder_for("cinepak", true, 23).has_value());    // RGB frames: see media_format
  EXPECT_FALSE(encoder_for("mjpeg", true, 23).has_value());      // formats/video's job
}

TEST(ReencodeInput, MalformedInputGetsAFormatError) {
  Bytes garbage(2048);
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = uint8_t(i * 2654435761u >> 24);
  EXPECT_THROW(reencode_video(garbage, *same_codec_encoder("h264", 23)), FormatError);
  const auto files = testing::corpus_files("video");
  for (const auto& file : files) {
    if (file.extension() != ".mp4") continue;
    const Bytes input = testing::read_file(file);
    const Bytes part(input.begin(), input.begin() + long(input.size() / 2));
    try {
      (void)reencode_video(part, *same_codec_encoder("h264", 23));
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()), "");
    }
  }
}

}  // namespace
}  // namespace lighten::media
