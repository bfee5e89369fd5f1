// MP4/MOV/3GP through the public optimize(): perceptual modes re-encode H.264 when a setting
// keeps every sampled frame at the floor and saves bytes, and the engine's verify_media passes;
// lossless mode, other codecs and bad input are left alone with a reason; a second run does no
// further lossy work it cannot justify.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/bytes.h"
#include "formats/media/frame_gate.h"
#include "formats/media/mp4_boxes.h"
#include "formats/media/mp4_header_times.h"
#include "formats/media/mp4_metadata.h"
#include "lighten/lighten.h"
#include "support/command.h"
#include "support/corpus.h"

namespace lighten {
namespace {

namespace fs = std::filesystem;

class MediaFormat : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("ffmpeg -version > /dev/null 2>&1") != 0) GTEST_SKIP() << "ffmpeg is absent";
    dir_ = fs::temp_directory_path() / ("lighten_media_format_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A high-bitrate H.264 clip with AAC audio, as phones write them.
  Bytes phone_clip(const std::string& name) {
    const fs::path out = dir_ / name;
    const std::string cmd =
        "ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=640x360:rate=30 -f lavfi -i "
        "sine=f=440:r=44100 -t 1 -map 0 -map 1 -c:v libx264 -crf 4 -pix_fmt yuv420p -c:a aac " +
        out.string();
    return std::system(cmd.c_str()) == 0 ? testing::read_file(out) : Bytes{};
  }

  fs::path dir_;
};

Policy mode(Mode m) {
  Policy p;
  p.mode = m;
  return p;
}

TEST_F(MediaFormat, CompactModeReencodesH264AtTheFloor) {
  const Bytes in = phone_clip("phone.mp4");
  ASSERT_FALSE(in.empty());
  EXPECT_EQ(sniff(in), Kind::kMp4);
  const Outcome o = optimize(in, mode(Mode::kCompact));
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(sniff(o.bytes), Kind::kMp4);
  EXPECT_LT(o.bytes.size(), in.size());
  ASSERT_TRUE(o.quality.ssimulacra2.has_value());
  EXPECT_GE(*o.quality.ssimulacra2, 70.0);
  EXPECT_NE(o.detail.find("libx264 crf"), std::string::npos) << o.detail;
  // A second run does no further lossy work: the container tag says it was re-encoded.
  const Outcome again = optimize(o.bytes, mode(Mode::kCompact));
  EXPECT_FALSE(again.replaced());
  EXPECT_EQ(again.reason, Reason::kAlreadyOptimized) << again.message;
}

// A full-range MPEG-4 part 2 clip (as mpeg4.mp4 of the corpus): libavcodec's MPEG-4 encoder
// cannot say "full range" in the bitstream, so the MP4 says it in its colr atom, or readers
// would show the output with other colours; H.264 says it in its own headers.
TEST_F(MediaFormat, FullRangeVideoKeepsItsRange) {
  const fs::path path = dir_ / "full.mp4";
  const std::string cmd =
      "ffmpeg -nostdin -v error -y -f lavfi -i mandelbrot=size=192x144:rate=25 -t 1 -c:v mpeg4 "
      "-q:v 2 -pix_fmt yuv420p -color_range pc -colorspace smpte170m -movflags +write_colr " +
      path.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const Bytes in = testing::read_file(path);
  ASSERT_EQ(media::probe_video(in).full_range, true);
  // MPEG-4 part 2 has no range flag: the MP4's colr atom carries it.
  const Outcome own = optimize(in, mode(Mode::kCompact));
  ASSERT_TRUE(own.replaced()) << own.message;
  const media::VideoFrames kept = media::probe_video(own.bytes);
  EXPECT_EQ(kept.codec, "mpeg4");
  EXPECT_TRUE(kept.full_range);
  Policy h264 = mode(Mode::kCompact);
  h264.video_codec = VideoCodecPolicy::kH264;
  const Outcome o = optimize(in, h264);
  ASSERT_TRUE(o.replaced()) << o.message;
  const media::VideoFrames out = media::probe_video(o.bytes);
  EXPECT_EQ(out.codec, "h264");
  EXPECT_TRUE(out.full_range);
  EXPECT_EQ(out.pixel_format, "yuv420p");
}

TEST_F(MediaFormat, LosslessModeLeavesLossyVideoAlone) {
  const Bytes in = phone_clip("phone.mp4");
  ASSERT_FALSE(in.empty());
  const Outcome o = optimize(in, Policy{});
  EXPECT_FALSE(o.replaced());
  EXPECT_EQ(o.reason, Reason::kUnsupportedVariant);
  EXPECT_NE(o.message.find("lossless mode does not re-encode"), std::string::npos) << o.message;
}

// An audio-only file (.m4a) is told that no mode re-encodes it, not to try a perceptual one.
TEST_F(MediaFormat, AudioAloneIsLeftAloneInEveryModeAndSaysSo) {
  const fs::path path = dir_ / "tone.m4a";
  const std::string cmd =
      "ffmpeg -nostdin -v error -y -f lavfi -i sine=frequency=440:duration=1 "
      "-c:a aac '" +
      path.string() + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const Bytes in = testing::read_file(path);
  for (const Mode m : {Mode::kLossless, Mode::kCompact}) {
    const Outcome o = optimize(in, mode(m));
    EXPECT_FALSE(o.replaced());
    EXPECT_EQ(o.reason, Reason::kUnsupportedVariant);
    EXPECT_NE(o.message.find("no video"), std::string::npos) << o.message;
    EXPECT_EQ(o.message.find("perceptual"), std::string::npos) << o.message;
  }
  // A clip with video still hears that a perceptual mode would re-encode it.
  EXPECT_NE(optimize(phone_clip("phone.mp4"), Policy{}).message.find("perceptual --mode"),
            std::string::npos);
}

// A variable-rate video keeps every frame's duration, the last one's too (the muxer used to give
// it the one before's: 100 ms became 33).
TEST_F(MediaFormat, AVariableRateVideoKeepsItsLength) {
  const fs::path in_path = dir_ / "vfr.mp4";
  const std::string cmd =
      "ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=320x240:rate=30 -t 2 -vf "
      "\"setpts='if(lt(N,30),N/30,1+(N-30)/10)/TB'\" -fps_mode passthrough -c:v libx264 -crf 4 "
      "-pix_fmt yuv420p " +
      in_path.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const Bytes in = testing::read_file(in_path);
  const Outcome o = optimize(in, mode(Mode::kCompact));
  ASSERT_TRUE(o.replaced()) << o.message;
  const media::VideoFrames before = media::probe_video(in), after = media::probe_video(o.bytes);
  EXPECT_NEAR(after.duration_s, before.duration_s, 0.002);
  ASSERT_GE(before.video_stream, 0);
  EXPECT_NEAR(after.lengths.at(size_t(after.video_stream)).seconds,
              before.lengths.at(size_t(before.video_stream)).seconds, 0.002);
}

// Only the marker tells a later run that a video was re-encoded. The 3GP muxer drops the tag
// (it writes only the 3GPP asset tags), so a 3GP output carries it in a box of its own, and a
// second run leaves it alone; a run asked for no marker leaves every video as it is rather than
// let each run re-encode the last one's output.
TEST_F(MediaFormat, EveryReencodedVideoCarriesTheMarker) {
  const Bytes phone_3gp = phone_clip("phone.3gp");
  ASSERT_FALSE(phone_3gp.empty());
  EXPECT_EQ(sniff(phone_3gp), Kind::kMp4);
  const Outcome first = optimize(phone_3gp, mode(Mode::kCompact));
  ASSERT_TRUE(first.replaced()) << first.message;
  EXPECT_FALSE(media::marker_box(first.bytes).empty());
  const Outcome second = optimize(first.bytes, mode(Mode::kCompact));
  EXPECT_FALSE(second.replaced());
  EXPECT_EQ(second.reason, Reason::kAlreadyOptimized) << second.message;
  Policy omit = mode(Mode::kCompact);
  omit.quality_marker = QualityMarker::kOmit;
  const Outcome unmarked = optimize(phone_clip("phone.mp4"), omit);
  EXPECT_FALSE(unmarked.replaced());
  EXPECT_EQ(unmarked.reason, Reason::kUnsupportedVariant);
  EXPECT_NE(unmarked.message.find("--quality-marker write"), std::string::npos) << unmarked.message;
}

// Each track keeps its own creation and modification times (the muxer wrote the file's creation
// time into every track and media header, and the modification time equal to it).
TEST_F(MediaFormat, TrackTimesAreKept) {
  Bytes in = phone_clip("phone.mp4");
  ASSERT_FALSE(in.empty());
  // Version 0 headers: creation at body + 4, modification at body + 8.
  const auto times_at = [&](const media::Mp4Box& box) { return box.body + 4; };
  const auto set32 = [](Bytes& b, size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) b[at + size_t(i)] = uint8_t(v >> (24 - 8 * i));
  };
  uint32_t stamp = 3'700'000'000u;
  for (const media::Mp4Box& trak : media::tracks_of(in))
    for (const auto& path : {std::initializer_list<std::string_view>{"tkhd"},
                             std::initializer_list<std::string_view>{"mdia", "mdhd"}}) {
      const std::optional<media::Mp4Box> header = media::box_below(in, trak, path);
      ASSERT_TRUE(header.has_value());
      ASSERT_EQ(in[header->body], 0) << "version 0";
      set32(in, times_at(*header), stamp++);
      set32(in, times_at(*header) + 4, stamp++);
    }
  const Outcome o = optimize(in, mode(Mode::kCompact));
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(media::header_times_changed(in, o.bytes), std::nullopt);
  const std::vector<media::Mp4Box> tracks = media::tracks_of(o.bytes);
  ASSERT_FALSE(tracks.empty());
  const std::optional<media::Mp4Box> tkhd = media::box_below(o.bytes, tracks[0], {"tkhd"});
  ASSERT_TRUE(tkhd.has_value());
  const size_t field = o.bytes[tkhd->body] == 1 ? 8 : 4;
  EXPECT_EQ(media::be32(o.bytes, tkhd->body + 4 + field - 4), 3'700'000'000u);
}

// An iTunes-style file keeps its style: its title, artist and cover art come out as the same
// 'ilst' items (written as QuickTime keys, players that read only iTunes items lost them), and
// lighten's marker goes into a user data box of its own.
TEST_F(MediaFormat, ITunesTagsAndCoverArtAreKeptAsTheyAre) {
  ASSERT_FALSE(phone_clip("plain.mp4").empty());
  const fs::path cover = dir_ / "cover.png", out = dir_ / "covered.mp4";
  ASSERT_EQ(
      std::system(("ffmpeg -nostdin -v error -y -f lavfi -i color=red:size=64x64 -frames:v 1 " +
                   cover.string() + " && ffmpeg -nostdin -v error -y -i " +
                   (dir_ / "plain.mp4").string() + " -i " + cover.string() +
                   " -map 0 -map 1 -c copy -disposition:v:1 attached_pic -metadata "
                   "title=\"My Title\" -metadata artist=Someone " +
                   out.string())
                      .c_str()),
      0);
  const Bytes input = testing::read_file(out);
  const std::vector<media::MetadataItem> items = media::metadata_items(input);
  ASSERT_GE(items.size(), 3u);
  const Outcome o = optimize(input, mode(Mode::kCompact));
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_TRUE(media::metadata_lost(input, o.bytes).empty());
  for (const char* name : {"'\\xA9nam'", "'\\xA9ART'", "'covr'"})
    EXPECT_TRUE(std::any_of(items.begin(), items.end(), [&](const media::MetadataItem& m) {
      return m.name == name;
    })) << name;
  const media::VideoFrames written = media::probe_video(o.bytes);
  EXPECT_FALSE(written.marker.empty());
  EXPECT_NE(written.streams.back().find("(cover art)"), std::string::npos);
  EXPECT_EQ(optimize(o.bytes, mode(Mode::kCompact)).reason, Reason::kAlreadyOptimized);
}

// QuickTime keys keep their values' types: libavformat reads an integer or a float (Android's
// capture rate) as text and would write it back as text, so the input's 'meta' boxes are put
// back byte for byte, and so is a 'meta' box that holds no item list (an ID3 tag).
TEST_F(MediaFormat, MetadataBoxesArePutBackByteForByte) {
  const fs::path out = dir_ / "keys.mov";
  ASSERT_EQ(std::system(("ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=320x240:rate=30 "
                         "-t 1 -c:v libx264 -crf 4 -movflags use_metadata_tags -metadata "
                         "com.apple.quicktime.make=Apple -metadata "
                         "com.apple.quicktime.live-photo.auto=7 " +
                         out.string())
                            .c_str()),
            0);
  // The value "7" (UTF-8, type 1) as a one-byte signed integer (type 21) instead.
  Bytes input = testing::read_file(out);
  const std::string utf8 = std::string("data\0\0\0\x01\0\0\0\0", 12) + "7";
  const auto at = std::search(input.begin(), input.end(), utf8.begin(), utf8.end());
  ASSERT_NE(at, input.end());
  at[7] = 21;
  // And an ID3 tag in a 'meta' box of its own at the end of the moov (its last box).
  const std::string id3 = "ID3 tag: Hello Tag!";
  Bytes meta = {0, 0, 0, 0, 'm', 'e', 't', 'a', 0, 0, 0, 0, 0, 0, 0, 0, 'I', 'D', '3', '2'};
  meta.insert(meta.end(), id3.begin(), id3.end());
  meta[3] = uint8_t(meta.size());
  meta[11] = uint8_t(meta.size() - 8);
  const std::vector<media::Mp4Box> top = media::read_mp4_layout(input).boxes;
  ASSERT_EQ(top.back().type, "moov");
  input.insert(input.end(), meta.begin(), meta.end());
  const uint32_t moov_size = uint32_t(input.size() - top.back().begin);
  for (int i = 0; i < 4; ++i)
    input[top.back().begin + size_t(i)] = uint8_t(moov_size >> (24 - 8 * i));

  const Outcome o = optimize(input, mode(Mode::kCompact));
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_TRUE(media::metadata_lost(input, o.bytes).empty());
  const std::vector<media::MetadataItem> items = media::metadata_items(o.bytes);
  EXPECT_TRUE(std::any_of(items.begin(), items.end(), [](const media::MetadataItem& m) {
    return m.name == "'com.apple.quicktime.live-photo.auto'" &&
           m.values.find('\x15') != std::string::npos;
  }));
  EXPECT_NE(std::search(o.bytes.begin(), o.bytes.end(), id3.begin(), id3.end()), o.bytes.end());
  EXPECT_EQ(optimize(o.bytes, mode(Mode::kCompact)).reason, Reason::kAlreadyOptimized);
}

// `file` (the moov its last box) with `box` appended to its first track's first sample entry,
// every box around it grown to match; no chunk offset moves.
Bytes with_sample_entry_box(Bytes file, const Bytes& box) {
  std::vector<media::Mp4Box> path;
  size_t begin = 0, end = file.size();
  for (const char* type : {"moov", "trak", "mdia", "minf", "stbl", "stsd", ""}) {
    const std::vector<media::Mp4Box> boxes = media::read_boxes(file, begin, end);
    const auto it = std::find_if(boxes.begin(), boxes.end(), [&](const media::Mp4Box& b) {
      return *type == '\0' || b.type == type;
    });
    if (it == boxes.end()) return {};
    path.push_back(*it);
    // A sample description's entries follow its version, flags and entry count.
    begin = it->body + (it->type == "stsd" ? 8 : 0);
    end = it->end;
  }
  file.insert(file.begin() + ptrdiff_t(path.back().end), box.begin(), box.end());
  for (const media::Mp4Box& b : path) {
    const uint32_t size = uint32_t(b.end - b.begin + box.size());
    for (int i = 0; i < 4; ++i) file[b.begin + size_t(i)] = uint8_t(size >> (24 - 8 * i));
  }
  return file;
}

// Where the fields after the times, reserved bytes, layer and group of track `n`'s header (from
// 1) begin in `file`, which the test changes in place; 0 when there is no such track.
size_t track_header_fields(const Bytes& file, int n) {
  const std::string_view text(reinterpret_cast<const char*>(file.data()), file.size());
  size_t tkhd = std::string_view::npos;
  for (int k = 0; k < n; ++k) {
    tkhd = text.find("tkhd", tkhd == std::string_view::npos ? 0 : tkhd + 4);
    if (tkhd == std::string_view::npos) return 0;
  }
  return tkhd + 4 + 4 + (file[tkhd + 4] == 1 ? 32 : 20) + 8;
}

// What a re-encode would drop, or score on a scale not made for it, leaves the video alone:
// HDR transfer functions, stereo 3D signalling, interlaced fields, Apple's timed metadata
// tracks; and what the muxer would write otherwise in a track header.
TEST_F(MediaFormat, WhatAReencodeWouldNotCarryLeavesTheVideoAlone) {
  const fs::path hdr = dir_ / "hdr.mp4", plain = dir_ / "plain.mp4", woven = dir_ / "tff.mp4";
  ASSERT_EQ(std::system(("ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=160x120:rate=10 "
                         "-t 1 -vf setfield=tff -c:v libx264 -crf 4 -flags +ildct+ilme "
                         "-x264opts tff=1 " +
                         woven.string() +
                         " && ffmpeg -nostdin -v error -y -f lavfi -i "
                         "testsrc2=size=160x120:rate=10 "
                         "-t 1 -c:v libx264 -crf 4 -color_trc smpte2084 -color_primaries bt2020 "
                         "-colorspace bt2020nc " +
                         hdr.string() +
                         " && ffmpeg -nostdin -v error -y -f lavfi -i "
                         "testsrc2=size=160x120:rate=10 -f lavfi -i sine=f=440:r=16000 -t 1 "
                         "-map 0 -map 1 -c:v libx264 -crf 4 -c:a aac " +
                         plain.string() + " && ffmpeg -nostdin -v error -y -i " + plain.string() +
                         " -c copy -aspect 16:9 " + (dir_ / "anamorphic.mp4").string())
                            .c_str()),
            0);
  const Bytes plain_bytes = testing::read_file(plain);
  EXPECT_TRUE(optimize(plain_bytes, mode(Mode::kCompact)).replaced());
  // A top-and-bottom stereo video's 'st3d' box.
  const Bytes st3d = {0, 0, 0, 13, 's', 't', '3', 'd', 0, 0, 0, 0, 1};
  const Bytes stereo = with_sample_entry_box(plain_bytes, st3d);
  ASSERT_FALSE(stereo.empty());
  // A muted sound track, and a video shown twice as wide as it is coded: the muxer would
  // write full volume and the coded size. A video track's volume is no sound's (QuickTime
  // writes 1.0 there): the muxer's 0 changes nothing.
  Bytes muted = plain_bytes, wide = plain_bytes, video_volume = plain_bytes;
  const size_t video = track_header_fields(plain_bytes, 1);
  const size_t sound = track_header_fields(plain_bytes, 2);
  ASSERT_GT(video, 0u);
  ASSERT_GT(sound, 0u);
  ASSERT_EQ(plain_bytes[sound + 4], 1);
  muted[sound + 4] = 0;
  video_volume[video + 4] = 1;
  EXPECT_TRUE(optimize(video_volume, mode(Mode::kCompact)).replaced());
  wide[video + 44] = uint8_t(wide[video + 44] * 2 + (wide[video + 45] >> 7));
  wide[video + 45] = uint8_t(wide[video + 45] << 1);
  for (const auto& [bytes, what] :
       {std::pair{testing::read_file(hdr), "HDR video (PQ transfer)"},
        std::pair{stereo, "stereo 3D signalling"},
        std::pair{testing::read_file(woven), "interlaced video"},
        std::pair{testing::read_file(dir_ / "anamorphic.mp4"),
                  "a container pixel aspect ratio (4:3) other than the video's own (1:1)"},
        std::pair{muted, "track 2's volume would change"},
        std::pair{wide, "track 1's display size would change"}}) {
    const Outcome o = optimize(bytes, mode(Mode::kCompact));
    EXPECT_EQ(o.reason, Reason::kUnsupportedVariant) << what << ": " << o.message;
    EXPECT_NE(o.message.find(what), std::string::npos) << o.message;
  }
  const fs::path phone = testing::shared_dir() / "corpus" / "video" / "gps.mov";
  if (!fs::exists(phone)) GTEST_SKIP() << "corpus/video/gps.mov is absent";
  const Outcome o = optimize(testing::read_file(phone), mode(Mode::kCompact));
  EXPECT_EQ(o.reason, Reason::kUnsupportedVariant) << o.message;
  EXPECT_NE(o.message.find("a data track ('mebx'"), std::string::npos) << o.message;
}

// An H.264 Baseline video stays Baseline (players that decode nothing else), and frames stay
// as few decodes away from a keyframe as they were (loaders that seek to random frames).
TEST_F(MediaFormat, H264KeepsItsProfileAndKeyframeSpacing) {
  const fs::path clip = dir_ / "baseline.mp4";
  ASSERT_EQ(std::system(("ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=320x240:rate=25 "
                         "-t 2 -c:v libx264 -crf 4 -profile:v baseline -g 10 -pix_fmt yuv420p " +
                         clip.string())
                            .c_str()),
            0);
  const Outcome o = optimize(testing::read_file(clip), mode(Mode::kCompact));
  ASSERT_TRUE(o.replaced()) << o.message;
  const fs::path out = dir_ / "out.mp4";
  testing::write_file(out, o.bytes);
  auto probe = [](const fs::path& file, const std::string& entries, const std::string& then) {
    return testing::command_output("ffprobe -v error -select_streams v -show_entries " + entries +
                                   " -of csv=p=0 " + file.string() + then);
  };
  EXPECT_EQ(probe(out, "stream=profile,has_b_frames", ""), "Constrained Baseline,0\n");
  const auto keyframes = [&](const fs::path& file) {
    return probe(file, "packet=flags", " | grep -c K");
  };
  EXPECT_EQ(keyframes(clip), "5\n");
  EXPECT_EQ(keyframes(out), keyframes(clip));
}

// MPEG-4 part 2 counts time in 16 bits: a track on a 90 kHz clock is encoded on the finest
// clock it takes, every frame still at its time (its encoder refused the track's own clock).
TEST_F(MediaFormat, Mpeg4OnANinetyKilohertzClockIsReencoded) {
  const fs::path out = dir_ / "m4v.mp4";
  ASSERT_EQ(std::system(("ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=320x240:rate=25 "
                         "-t 2 -c:v mpeg4 -q:v 2 -video_track_timescale 90000 " +
                         out.string())
                            .c_str()),
            0);
  const Outcome o = optimize(testing::read_file(out), mode(Mode::kCompact));
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_NE(o.detail.find("mpeg4 re-encoded"), std::string::npos) << o.detail;
}

TEST_F(MediaFormat, MotionJpegInMovIsLeftAloneWithAReason) {
  const fs::path out = dir_ / "mjpeg.mov";
  ASSERT_EQ(std::system(("ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=160x120:rate=10 "
                         "-t 1 -c:v mjpeg " +
                         out.string())
                            .c_str()),
            0);
  const Outcome o = optimize(testing::read_file(out), mode(Mode::kHigh));
  EXPECT_FALSE(o.replaced());
  EXPECT_EQ(o.reason, Reason::kUnsupportedVariant);
  EXPECT_NE(o.message.find("mjpeg video is not re-encoded"), std::string::npos) << o.message;
}

// Damaged H.264 decodes with the damage concealed; re-encoded, the concealed frames would decode
// cleanly and the damage could no longer be found. Such a file is damaged, left as it is.
TEST_F(MediaFormat, DamagedVideoIsNotReencoded) {
  Bytes in = phone_clip("phone.mp4");
  ASSERT_FALSE(in.empty());
  const auto mdat = std::search(in.begin(), in.end(), std::begin("mdat"), std::end("mdat") - 1);
  ASSERT_NE(mdat, in.end());
  const size_t at = size_t(mdat - in.begin()) + size_t(in.end() - mdat) * 3 / 10;
  for (size_t i = at; i < at + 80; ++i) in[i] ^= 0x55;
  const fs::path damaged = dir_ / "damaged.mp4";
  testing::write_file(damaged, in);
  ASSERT_NE(testing::command_output("ffmpeg -nostdin -v error -i " + damaged.string() +
                                    " -map 0:v -f null - 2>&1"),
            "")
      << "the damage must reach the video";
  const Outcome o = optimize(in, mode(Mode::kHigh));
  EXPECT_FALSE(o.replaced()) << o.detail;
  EXPECT_EQ(o.reason, Reason::kCorrupt) << o.message;
}

// A damaged sequence parameter set left no picture format: the encoder then failed to open and
// the file was told as an unsupported variant, and `lighten info` found nothing wrong.
TEST_F(MediaFormat, ParametersThatDoNotDecodeAreDamage) {
  Bytes in = phone_clip("phone.mp4");
  ASSERT_FALSE(in.empty());
  const auto avcc = std::search(in.begin(), in.end(), std::begin("avcC"), std::end("avcC") - 1);
  ASSERT_NE(avcc, in.end());
  // Configuration version, profile, compatibility, level, lengths, SPS count, then the first
  // SPS's 2-byte length and bytes: all but its first four become 0xFF.
  const size_t sps = size_t(avcc - in.begin()) + 4 + 8;
  const size_t length = size_t(in[sps - 2]) << 8 | in[sps - 1];
  ASSERT_GT(length, 4u);
  std::fill(in.begin() + long(sps + 4), in.begin() + long(sps + length), uint8_t{0xFF});
  const Outcome o = optimize(in, mode(Mode::kCompact));
  EXPECT_FALSE(o.replaced()) << o.detail;
  EXPECT_EQ(o.reason, Reason::kCorrupt) << o.message;
  EXPECT_NE(o.message.find("do not decode to a picture format"), std::string::npos) << o.message;
  const FileInfo info = describe(in);
  EXPECT_NE(info.problem.find("picture format"), std::string::npos) << info.problem;
}

// A movie header stating another length than its longest track's (a damaged duration field):
// the whole re-encode ran, then its verification found the length "changed" and asked for a
// report.
TEST_F(MediaFormat, AMovieHeaderDurationItsTracksDoNotHaveIsDamage) {
  Bytes in = phone_clip("phone.mp4");
  ASSERT_FALSE(in.empty());
  const auto mvhd = std::search(in.begin(), in.end(), std::begin("mvhd"), std::end("mvhd") - 1);
  ASSERT_NE(mvhd, in.end());
  const size_t body = size_t(mvhd - in.begin()) + 4;
  ASSERT_EQ(in[body], 0);  // version 0: 32-bit times, timescale, duration
  const size_t duration = body + 4 + 8 + 4;
  auto be32_at = [&](size_t at) {
    return uint32_t(in[at]) << 24 | uint32_t(in[at + 1]) << 16 | uint32_t(in[at + 2]) << 8 |
           in[at + 3];
  };
  const uint32_t scale = be32_at(body + 4 + 8), stated = be32_at(duration);
  Bytes damaged = in;
  damaged[duration] = 0x7F;  // the top byte: years, not one second
  const Outcome o = optimize(damaged, mode(Mode::kCompact));
  EXPECT_EQ(o.reason, Reason::kCorrupt) << o.message;
  EXPECT_NE(o.message.find("the movie header says"), std::string::npos) << o.message;
  EXPECT_NE(describe(damaged).problem.find("longest track"), std::string::npos);
  // Half a second more: no damage to tell, but more than the verifier lets the length move
  // (it refused the output after the whole re-encode, asking for a report).
  Bytes longer = in;
  const uint32_t half_more = stated + scale / 2;
  for (int i = 0; i < 4; ++i) longer[duration + size_t(i)] = uint8_t(half_more >> (24 - 8 * i));
  const Outcome l = optimize(longer, mode(Mode::kCompact));
  EXPECT_EQ(l.reason, Reason::kUnsupportedVariant) << l.message;
  EXPECT_NE(l.message.find("would state the track's length"), std::string::npos) << l.message;
  EXPECT_TRUE(describe(longer).problem.empty()) << describe(longer).problem;
}

TEST(MediaFormatInput, BrokenAndCutFilesAreLeftAloneWithAReason) {
  const auto files = testing::corpus_files("video");
  LIGHTEN_REQUIRE_CORPUS(files, "video");
  for (const auto& file : files) {
    const Bytes input = testing::read_file(file);
    if (sniff(input) != Kind::kMp4 && sniff(input) != Kind::kMov) continue;
    for (const double share : {0.02, 0.5}) {
      SCOPED_TRACE(file.filename().string() + " cut at " + std::to_string(share));
      const Bytes part(input.begin(), input.begin() + long(double(input.size()) * share));
      const Outcome o = optimize(part, mode(Mode::kCompact));
      if (!o.replaced()) {
        EXPECT_FALSE(o.message.empty());
      }
      EXPECT_NE(o.reason, Reason::kInternalError) << o.message;
    }
  }
}

// The corpus in compact mode: the H.264 phone videos shrink, verified; the others get a reason.
TEST(MediaFormatCorpus, CompactModeOnTheCorpus) {
  const auto files = testing::corpus_files("video");
  LIGHTEN_REQUIRE_CORPUS(files, "video");
  for (const auto& file : files) {
    const Bytes input = testing::read_file(file);
    if (sniff(input) != Kind::kMp4 && sniff(input) != Kind::kMov) continue;
    SCOPED_TRACE(file.filename().string());
    const Outcome o = optimize(input, mode(Mode::kCompact));
    std::printf("%s: %s %zu -> %zu bytes: %s\n", file.filename().c_str(),
                std::string(reason_name(o.reason)).c_str(), input.size(),
                o.replaced() ? o.bytes.size() : input.size(),
                o.replaced() ? o.detail.c_str() : o.message.c_str());
    EXPECT_NE(o.reason, Reason::kVerifyFailed) << o.message;
    EXPECT_NE(o.reason, Reason::kInternalError) << o.message;
    // One user data box in the moov, as the standard allows: put-back items and 'meta' boxes
    // (gps.mp4 has a moov-level one) join the muxer's.
    if (o.replaced()) {
      const std::vector<media::Mp4Box> top = media::read_mp4_layout(o.bytes).boxes;
      const auto moov = std::find_if(top.begin(), top.end(),
                                     [](const media::Mp4Box& b) { return b.type == "moov"; });
      ASSERT_NE(moov, top.end());
      const std::vector<media::Mp4Box> kids = media::read_boxes(o.bytes, moov->body, moov->end);
      EXPECT_LE(std::count_if(kids.begin(), kids.end(),
                              [](const media::Mp4Box& b) { return b.type == "udta"; }),
                1);
    }
    if (file.filename() == "gps.mp4") {
      EXPECT_TRUE(o.replaced()) << o.message;
    }
    // Several AMR frames to a packet, which the 3GP muxer refuses with a bare -1 ("Operation
    // not permitted"): the reason gives what the muxer logged instead.
    if (file.filename() == "sample.3gp") {
      EXPECT_NE(o.message.find("not a single packet"), std::string::npos) << o.message;
    }
    // Its Apple timed metadata tracks ('mebx') would come out with empty sample descriptions.
    if (file.filename() == "gps.mov") {
      EXPECT_NE(o.message.find("data track ('mebx'"), std::string::npos) << o.message;
    }
  }
}

}  // namespace
}  // namespace lighten
