// The readers' view of Motion-JPEG frames: libavcodec's MJPEG decoder fed chunk by chunk shows
// the frames ffmpeg's demuxer and decoder show for the whole file; damaged chunks are refused
// with a FormatError, not a crash; the gap between the two decoders' views carries to the next
// frame's floor.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "formats/media/frame_gate.h"
#include "formats/media/mjpeg_decoder.h"
#include "formats/video/avi_file.h"
#include "formats/video/reader_gate.h"
#include "lighten/lighten.h"
#include "video/avi_checks.h"
#include "video/avi_maker.h"

namespace lighten {
namespace {

using namespace video;
using testing::AviRecipe;
using testing::make_avi;

TEST(ReaderGate, ChunksDecodeAsTheWholeFileDoes) {
  for (const bool fields : {false, true}) {
    AviRecipe r;
    r.frames = 4;
    r.width = 160, r.height = 120;
    r.strip_dht = true;
    r.two_fields = fields;
    const Bytes avi = make_avi(r);
    std::vector<SampleBuffer> whole;
    media::decode_frames(avi, 1, 99, [&](int64_t, const ImageRgb8& f) {
      EXPECT_EQ(f.width, 160u);
      EXPECT_EQ(f.height, 120u);
      whole.push_back(f.samples);
    });
    const AviFile a = parse_avi(avi);
    media::MjpegChunkDecoder decoder(a.streams[0].width, a.streams[0].height,
                                     a.streams[0].compression);
    const std::vector<Bytes> chunks = frame_chunks(avi);
    ASSERT_EQ(chunks.size(), whole.size());
    for (size_t k = 0; k < chunks.size(); ++k)
      EXPECT_TRUE(decoder.decode(chunks[k]).samples == whole[k]) << "frame " << k;
  }
}

TEST(ReaderGate, DamagedChunksAreRefused) {
  AviRecipe r;
  const Bytes avi = make_avi(r);
  const AviFile a = parse_avi(avi);
  ReaderGate gate(a.streams[0]);
  const Bytes garbage(300, 0x5A);
  EXPECT_FALSE(gate.take_reference(garbage));
  EXPECT_FALSE(gate.has_reference());
  EXPECT_THROW(gate.score(garbage), FormatError);
  const Bytes frame = frame_chunks(avi)[0];
  ASSERT_TRUE(gate.take_reference(frame));
  EXPECT_DOUBLE_EQ(gate.score(frame).score, 100.0);
  EXPECT_THROW(gate.score(garbage), FormatError);
  const Bytes truncated(frame.begin(), frame.begin() + 40);
  EXPECT_THROW(gate.score(truncated), FormatError);
}

// A candidate the gate turned down leaves its tables in the candidates' decoder; the frame written
// instead (here with optimal tables of its own) is what the readers decoded, and a next frame
// without tables decodes with those.
TEST(ReaderGate, TheFrameWrittenSetsTheTablesTheNextFrameDecodesWith) {
  AviRecipe r;
  r.frames = 1;
  r.width = 160, r.height = 120;
  const Bytes avi = make_avi(r);
  const AviFile a = parse_avi(avi);
  const Bytes standard = frame_chunks(avi)[0];  // libjpeg's K.3 tables
  const Outcome optimal = optimize(standard, Policy{});
  ASSERT_TRUE(optimal.replaced()) << optimal.message;
  const Bytes tableless = testing::without_dht(optimal.bytes);
  for (const bool noted : {true, false}) {
    ReaderGate gate(a.streams[0]);
    ASSERT_TRUE(gate.take_reference(optimal.bytes));
    (void)gate.score(standard);  // turned down
    if (noted) gate.note_written(optimal.bytes);
    ASSERT_TRUE(gate.take_reference(tableless));
    if (noted) {
      EXPECT_DOUBLE_EQ(gate.score(tableless).score, 100.0);
    } else {  // decoded with the turned-down candidate's tables
      double score = 0;
      try {
        score = gate.score(tableless).score;
      } catch (const FormatError&) {
      }
      EXPECT_LT(score, 100.0);
    }
  }
}

TEST(ReaderGate, TheGapRaisesTheNextFloor) {
  const AviFile a = parse_avi(make_avi(AviRecipe{}));
  ReaderGate gate(a.streams[0]);
  EXPECT_DOUBLE_EQ(gate.first_floor(80), 80);  // nothing learnt yet
  gate.note_gap(84.0, 81.0);                   // the readers see 3 points less
  EXPECT_GT(gate.first_floor(80), 83);
  EXPECT_LT(gate.first_floor(80), 84);
  gate.note_gap(81.0, 82.0);  // they see more: the JPEG gate's own floor stands
  EXPECT_DOUBLE_EQ(gate.first_floor(80), 80);
}

}  // namespace
}  // namespace lighten
