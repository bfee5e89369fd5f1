// AVI optimiser on files the tests write by hand: frames smaller and pixel-identical, every other
// chunk unchanged, indexes pointing at the right chunks; damaged files left alone with a reason.
#include <gtest/gtest.h>

#include <algorithm>

#include "formats/media/frame_gate.h"
#include "formats/media/mjpeg_decoder.h"
#include "formats/video/avi_file.h"
#include "formats/video/avi_format.h"
#include "formats/video/avi_index.h"
#include "formats/video/mjpeg.h"
#include "lighten/lighten.h"
#include "support/direct_context.h"
#include "video/avi_checks.h"
#include "video/avi_maker.h"

namespace lighten {
namespace {

using namespace video;
using testing::AviRecipe;
using testing::make_avi;

Outcome run(const Bytes& avi) { return optimize(avi, Policy{}); }

TEST(AviFormat, OptimisesMjpegFramesAndKeepsEverythingElse) {
  const Bytes in = make_avi(AviRecipe{});
  const Outcome o = run(in);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(o.kind, Kind::kAvi);
  EXPECT_LT(o.bytes.size(), in.size());
  EXPECT_TRUE(o.quality.pixels_identical);
  EXPECT_TRUE(o.warnings.empty());
  expect_same_frames(in, o.bytes);
  // An empty chunk is a dropped frame (ffmpeg's muxer writes one for a gap in time), not a
  // frame that is not JPEG: nothing to warn of.
  AviRecipe dropped;
  dropped.dropped_frame = 1;
  const Outcome gap = run(make_avi(dropped));
  ASSERT_TRUE(gap.replaced()) << gap.message;
  EXPECT_TRUE(gap.warnings.empty()) << gap.warnings.front();
}

TEST(AviFormat, FramesWithoutHuffmanTablesGetTheStandardOnes) {
  AviRecipe r;
  r.strip_dht = true;
  r.frames = 3;
  r.width = 320, r.height = 240;  // large enough for optimal tables to pay for themselves
  const Bytes in = make_avi(r);
  const Outcome o = run(in);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_NE(o.detail.find("standard Huffman"), std::string::npos) << o.detail;
  expect_same_frames(in, o.bytes);
}

// The frames of `avi` as libavcodec decodes the whole file, frame after frame.
std::vector<SampleBuffer> decoded_frames(const Bytes& avi) {
  std::vector<SampleBuffer> frames;
  media::decode_frames(avi, 1, 99,
                       [&](int64_t, const ImageRgb8& f) { frames.push_back(f.samples); });
  return frames;
}

// `out` keeps every frame's pixels as libjpeg decodes each and as libavcodec decodes the whole
// file (where tables carry over from frame to frame), and passes the verifier.
void expect_same_pixels_everywhere(const Bytes& in, const Bytes& out, size_t frames) {
  expect_same_frames(in, out);
  testing::DirectContext context;
  const Verdict v = verify_avi(in, out, context);
  EXPECT_TRUE(v.ok) << v.problem;
  const std::vector<SampleBuffer> before = decoded_frames(in);
  EXPECT_EQ(before.size(), frames);
  EXPECT_TRUE(before == decoded_frames(out));
}

// ffmpeg's MJPEG decoder (OpenCV, decord) decodes an image without DHT with the tables of the
// image before it, not with K.3's: once a frame was rewritten with tables of its own, a later
// frame must carry tables (expect_same_frames checks every frame has a DHT). Frames that gain
// less than optimal tables cost get them anyway, as they are smaller than with K.3 spelled out,
// and a second run, handed the frames with tables, changes nothing.
TEST(AviFormat, FramesWithoutTablesAfterARewrittenOneGetTablesOfTheirOwn) {
  AviRecipe r;
  r.strip_dht = true;
  r.frames = 4;
  r.width = 160, r.height = 120;
  r.quality = 60;
  r.fine_frame = 0;
  const Bytes in = make_avi(r);
  const AviFile a = parse_avi(in);
  std::vector<Bytes> frames;
  for (const RiffChunk& c : a.tree.chunks)
    if (!c.is_list && a.is_mjpeg_frame(c)) frames.push_back(chunk_data(in, c));
  ASSERT_EQ(frames.size(), 4u);
  // Frame 2 alone gains less than tables of its own cost.
  const auto spans = split_mjpeg_chunk(frames[2]);
  ASSERT_EQ(spans.size(), 1u);
  const Bytes completed = with_standard_huffman_tables(frames[2], spans[0]);
  const Outcome alone = optimize(completed, Policy{});
  ASSERT_TRUE(alone.replaced()) << alone.message;
  ASSERT_GE(alone.bytes.size(), frames[2].size());
  ASSERT_LT(alone.bytes.size(), completed.size());

  const Outcome o = run(in);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(o.detail.find("carry the standard tables"), std::string::npos) << o.detail;
  expect_same_pixels_everywhere(in, o.bytes, 4);
  const Outcome again = run(o.bytes);
  EXPECT_FALSE(again.replaced()) << again.detail;
  Policy high;
  high.mode = Mode::kHigh;
  const Outcome requantised = optimize(in, high);
  ASSERT_TRUE(requantised.replaced()) << requantised.message;
  const Outcome requantised_again = optimize(requantised.bytes, high);
  EXPECT_TRUE(!requantised_again.replaced() || requantised_again.quality.pixels_identical)
      << requantised_again.detail;

  // Frames before the first rewritten one need no tables: they stay as they were.
  r.fine_frame = 2;
  const Bytes later = make_avi(r);
  const Outcome o2 = run(later);
  ASSERT_TRUE(o2.replaced()) << o2.message;
  const std::vector<Bytes> before = frame_chunks(later), after = frame_chunks(o2.bytes);
  ASSERT_EQ(after.size(), 4u);
  EXPECT_EQ(after[0], before[0]);
  EXPECT_EQ(after[1], before[1]);
  EXPECT_NE(after[2], before[2]);
}

// A frame the JPEG optimiser keeps (here: its gain is under --min-gain) gets the K.3 tables
// spelled out once an earlier frame was rewritten. So does one whose DHT defines only some of
// the tables it uses, for those it leaves out (ffmpeg decoded such frames with the rewritten
// frame's chroma tables).
TEST(AviFormat, KeptFramesAfterARewrittenOneCarryTheStandardTables) {
  for (bool luma_only : {false, true}) {
    SCOPED_TRACE(luma_only ? "luma tables only" : "no tables");
    AviRecipe r;
    r.strip_dht = !luma_only;
    r.luma_tables_only = luma_only;
    r.dht_kept_frame = luma_only ? 0 : -1;
    r.frames = 4;
    r.width = 320, r.height = 240;
    r.quality = 60;
    r.fine_frame = 0;
    const Bytes in = make_avi(r);
    const std::vector<Bytes> frames = frame_chunks(in);
    ASSERT_EQ(frames.size(), 4u);
    EXPECT_EQ(split_mjpeg_chunk(frames[1]).at(0).huffman_from_elsewhere,
              luma_only ? 0x22 : 0x33);  // DC 1 and AC 1, or all four
    Policy p;
    p.min_gain_bytes = 1000;
    const Outcome o = optimize(in, p);
    ASSERT_TRUE(o.replaced()) << o.message;
    EXPECT_NE(o.detail.find("3 kept images carry the standard tables"), std::string::npos)
        << o.detail;
    expect_same_pixels_everywhere(in, o.bytes, 4);
  }
}

// Frames without DQT are decoded by ffmpeg with the quantisation tables of the frame before:
// requantising that frame would change theirs unseen, so such a file is optimised losslessly
// only, also when the frame is found after frames this run requantised.
TEST(AviFormat, FramesWithoutQuantisationTablesKeepEveryFrameLossless) {
  for (int from : {1, 2}) {
    SCOPED_TRACE(from);
    AviRecipe r;
    r.frames = 4;
    r.width = 160, r.height = 120;
    r.quality = 90;
    r.dqt_left_out_from = from;
    const Bytes in = make_avi(r);
    EXPECT_TRUE(
        split_mjpeg_chunk(frame_chunks(in).at(size_t(from))).at(0).quantisation_from_elsewhere);
    EXPECT_FALSE(split_mjpeg_chunk(frame_chunks(in).at(0)).at(0).quantisation_from_elsewhere);
    Policy high;
    high.mode = Mode::kHigh;
    const Outcome o = optimize(in, high);
    ASSERT_TRUE(o.replaced()) << o.message;
    EXPECT_TRUE(o.quality.pixels_identical);
    EXPECT_NE(o.detail.find("frame " + std::to_string(from + 1) +
                            " has no quantisation table of its own"),
              std::string::npos)
        << o.detail;
    const std::vector<SampleBuffer> before = decoded_frames(in);
    ASSERT_EQ(before.size(), 4u);
    EXPECT_TRUE(before == decoded_frames(o.bytes));
  }
}

// ffmpeg stops at the EOI of a frame that is not interlaced: what follows in its chunk, an SOS
// marker included, is never decoded, so it keeps no frame from being optimised.
TEST(AviFormat, BytesAfterAWholeFrameAreNeverDecoded) {
  AviRecipe r;
  r.strip_dht = true;
  r.frames = 3;
  r.width = 160, r.height = 120;
  r.fine_frame = 0;
  r.frame_tail = {0xFF, 0xDA, 0x00, 0x04, 0x01, 0x02};
  const Bytes in = make_avi(r);
  const Outcome o = run(in);
  ASSERT_TRUE(o.replaced()) << o.message;
  expect_same_pixels_everywhere(in, o.bytes, 3);
  for (const Bytes& frame : frame_chunks(o.bytes))
    EXPECT_TRUE(std::equal(r.frame_tail.rbegin(), r.frame_tail.rend(), frame.rbegin()));
}

// Interlaced frames may pad their first field with zero bytes: the second field, past the
// padding, is optimised and given tables like the first, and the padding stays.
TEST(AviFormat, FieldsAfterPaddingFollowTheTablesRule) {
  AviRecipe r;
  r.strip_dht = true;
  r.two_fields = true;
  r.field_padding = 6;
  r.frames = 3;
  r.width = 160, r.height = 240;
  r.fine_frame = 0;
  const Bytes in = make_avi(r);
  const AviFile a = parse_avi(in);
  for (const RiffChunk& c : a.tree.chunks) {
    if (!c.is_list && a.is_mjpeg_frame(c)) {
      ASSERT_EQ(split_mjpeg_chunk(chunk_data(in, c)).size(), 2u);
    }
  }
  const Outcome o = run(in);
  ASSERT_TRUE(o.replaced()) << o.message;
  expect_same_pixels_everywhere(in, o.bytes, 3);
  const AviFile b = parse_avi(o.bytes);
  for (const RiffChunk& c : b.tree.chunks) {
    if (c.is_list || !b.is_mjpeg_frame(c)) continue;
    const Bytes frame = chunk_data(o.bytes, c);
    const auto fields = split_mjpeg_chunk(frame);
    ASSERT_EQ(fields.size(), 2u);
    EXPECT_EQ(fields[1].begin - fields[0].end, r.field_padding);
    EXPECT_EQ(fields[0].huffman_from_elsewhere | fields[1].huffman_from_elsewhere, 0);
  }
  // 0xFF padding is read the same way; padding changed in the output is refused.
  r.padding_byte = 0xFF;
  const Bytes ff_padded = make_avi(r);
  const Outcome ff = run(ff_padded);
  ASSERT_TRUE(ff.replaced()) << ff.message;
  expect_same_pixels_everywhere(ff_padded, ff.bytes, 3);
  Bytes changed = ff.bytes;
  const AviFile c = parse_avi(changed);
  for (const RiffChunk& chunk : c.tree.chunks) {
    if (chunk.is_list || !c.is_mjpeg_frame(chunk)) continue;
    const auto fields = split_mjpeg_chunk(chunk_data(changed, chunk));
    changed[chunk.data_offset() + fields[0].end] = 0x00;
    break;
  }
  testing::DirectContext context;
  const Verdict v = verify_avi(ff_padded, changed, context);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.problem.find("padding"), std::string::npos) << v.problem;
}

// (FieldSize, FieldSizeLessPadding) of every image of a frame chunk that records them.
std::vector<std::pair<uint32_t, uint32_t>> recorded_sizes(const Bytes& frame, bool big_endian) {
  std::vector<std::pair<uint32_t, uint32_t>> sizes;
  for (const JpegImageSpan& s : split_mjpeg_chunk(frame)) {
    const auto at = std::search(frame.begin() + long(s.begin), frame.begin() + long(s.end),
                                std::begin("AVI1"), std::end("AVI1") - 1);
    if (at == frame.begin() + long(s.end)) continue;
    auto read32 = [&](long off) {
      uint32_t v = 0;
      for (int i = 0; i < 4; ++i) v |= uint32_t(at[off + (big_endian ? 3 - i : i)]) << (8 * i);
      return v;
    };
    sizes.emplace_back(read32(6), read32(10));
  }
  return sizes;
}

// Capture cards that pad fields record each field's sizes in AVI1, and a reader may find the
// second field by them: a field written anew records its own, in the byte order and layout
// (FieldSize with the padding or without) the original used. Sizes that fit no layout keep
// their frames whole; the verifier refuses stale sizes, and sizes where there were none.
TEST(AviFormat, FieldSizesRecordedInAvi1FollowTheImages) {
  for (const bool little_endian : {false, true}) {
    for (const bool count_padding : {true, false}) {
      SCOPED_TRACE(std::to_string(little_endian) + std::to_string(count_padding));
      AviRecipe r;
      r.strip_dht = true;
      r.two_fields = true;
      r.field_padding = 4;
      r.field_sizes = true;
      r.field_sizes_little_endian = little_endian;
      r.field_sizes_count_padding = count_padding;
      r.frames = 3;
      r.width = 160, r.height = 240;
      r.fine_frame = 0;
      const Bytes in = make_avi(r);
      const Outcome o = run(in);
      ASSERT_TRUE(o.replaced()) << o.message;
      expect_same_pixels_everywhere(in, o.bytes, 3);
      for (const Bytes& frame : frame_chunks(o.bytes)) {
        const auto fields = split_mjpeg_chunk(frame);
        const auto sizes = recorded_sizes(frame, !little_endian);
        ASSERT_EQ(sizes.size(), 2u);
        EXPECT_EQ(sizes[0].second, fields[0].end - fields[0].begin);
        EXPECT_EQ(sizes[0].first,
                  (count_padding ? fields[1].begin : fields[0].end) - fields[0].begin);
        EXPECT_EQ(sizes[1].second, fields[1].end - fields[1].begin);
        EXPECT_EQ(sizes[1].first, sizes[1].second);
      }
      // One field's FieldSizeLessPadding off by one: refused.
      Bytes stale = o.bytes;
      const AviFile b = parse_avi(stale);
      for (const RiffChunk& c : b.tree.chunks) {
        if (c.is_list || !b.is_mjpeg_frame(c)) continue;
        const auto at = std::search(stale.begin() + long(c.data_offset()), stale.end(),
                                    std::begin("AVI1"), std::end("AVI1") - 1);
        at[little_endian ? 10 : 13] = uint8_t(at[little_endian ? 10 : 13] + 1);
        break;
      }
      testing::DirectContext context;
      const Verdict v = verify_avi(in, stale, context);
      EXPECT_FALSE(v.ok);
      EXPECT_NE(v.problem.find("field sizes"), std::string::npos) << v.problem;
    }
  }

  AviRecipe r;
  r.strip_dht = true;
  r.two_fields = true;
  r.field_padding = 4;
  r.field_sizes = true;
  r.field_sizes_off = true;
  r.frames = 3;
  r.width = 160, r.height = 240;
  r.fine_frame = 0;
  const Outcome kept = run(make_avi(r));
  EXPECT_FALSE(kept.replaced()) << kept.detail;
  EXPECT_NE(kept.reason, Reason::kUnsupportedVariant) << kept.message;

  // Sizes written into an AVI1 that recorded none: refused.
  r.field_sizes_off = false;
  const Bytes recorded = make_avi(r);
  Bytes zeros = recorded;
  for (auto at = zeros.begin();
       (at = std::search(at, zeros.end(), std::begin("AVI1"), std::end("AVI1") - 1)) != zeros.end();
       ++at)
    std::fill(at + 6, at + 14, uint8_t(0));
  const Outcome from_zeros = run(zeros);
  ASSERT_TRUE(from_zeros.replaced()) << from_zeros.message;
  testing::DirectContext context;
  EXPECT_TRUE(verify_avi(zeros, from_zeros.bytes, context).ok);
  const Outcome from_recorded = run(recorded);
  ASSERT_TRUE(from_recorded.replaced());
  ASSERT_EQ(from_recorded.bytes.size(), from_zeros.bytes.size());
  const Verdict v = verify_avi(zeros, from_recorded.bytes, context);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.problem.find("field sizes"), std::string::npos) << v.problem;
}

// Overwrites the padding between the fields of frame `which` with bytes that are not padding:
// lighten then reads the first field only, ffmpeg both.
Bytes with_junk_between_fields(Bytes avi, size_t which) {
  const AviFile a = parse_avi(avi);
  size_t frame = 0;
  for (const RiffChunk& c : a.tree.chunks) {
    if (c.is_list || !a.is_mjpeg_frame(c) || frame++ != which) continue;
    const auto fields = split_mjpeg_chunk(chunk_data(avi, c));
    EXPECT_EQ(fields.size(), 2u);
    for (size_t k = fields[0].end; k < fields[1].begin; ++k) avi[c.data_offset() + k] = 'A';
  }
  return avi;
}

// A field lighten cannot walk to, after a rewritten image, would decode with that image's
// tables: the file is left alone with the reason, and the verifier refuses such an output.
TEST(AviFormat, UnreadableFieldsAfterARewrittenImageKeepTheFile) {
  AviRecipe r;
  r.strip_dht = true;
  r.two_fields = true;
  r.field_padding = 2;
  r.frames = 3;
  r.width = 160, r.height = 240;
  r.quality = 60;
  r.fine_frame = 1;
  r.dht_kept_frame = 2;  // its own (unoptimised) tables: it shrinks too
  const Bytes padded = make_avi(r);
  const Bytes in = with_junk_between_fields(padded, 2);
  const Outcome o = run(in);
  EXPECT_FALSE(o.replaced());
  EXPECT_EQ(o.reason, Reason::kUnsupportedVariant);
  EXPECT_NE(o.message.find("outside the images lighten can read"), std::string::npos) << o.message;
  // Before any image was rewritten such a frame is kept whole, even one whose own first field
  // would shrink (frame 1 here), and the rest of the file is optimised.
  for (size_t which : {0, 1}) {
    const Bytes junk = with_junk_between_fields(padded, which);
    const Outcome kept = run(junk);
    ASSERT_TRUE(kept.replaced()) << kept.message;
    EXPECT_EQ(frame_chunks(kept.bytes)[which], frame_chunks(junk)[which]);
    ASSERT_FALSE(kept.warnings.empty());
    EXPECT_NE(kept.warnings.back().find("kept whole"), std::string::npos);
    testing::DirectContext check;
    EXPECT_TRUE(verify_avi(junk, kept.bytes, check).ok);
  }

  const Outcome good = run(padded);
  ASSERT_TRUE(good.replaced()) << good.message;
  testing::DirectContext context;
  const Verdict v = verify_avi(in, with_junk_between_fields(good.bytes, 2), context);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.problem.find("outside its readable images"), std::string::npos) << v.problem;
}

// The verifier refuses an output in which a frame without DHT follows a rewritten image: that is
// the first frame given tables of its own while the rest rely on the standard ones.
TEST(AviFormat, VerifierRefusesFramesThatRelyOnCarriedOverTables) {
  AviRecipe r;
  r.strip_dht = true;
  r.frames = 3;
  const Bytes in = make_avi(r);
  r.dht_kept_frame = 0;
  const Bytes out = make_avi(r);
  ASSERT_NE(in, out);
  testing::DirectContext context;
  const Verdict v = verify_avi(in, out, context);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.problem.find("tables of the image before it"), std::string::npos) << v.problem;
  // The same change in the last frame is sound: no frame follows it.
  AviRecipe last = r;
  last.dht_kept_frame = 2;
  EXPECT_TRUE(verify_avi(in, make_avi(last), context).ok);
}

// An image without DHT after one with tables of its own decodes with those tables in ffmpeg and
// with the standard ones in libjpeg: such a file is left alone with that reason, where it used to
// end as a verification failure that asked for a bug report. Tables that are the standard ones,
// spelled out, change nothing.
TEST(AviFormat, ImagesThatRelyOnAnEarlierImagesOwnTablesLeaveTheFileAlone) {
  AviRecipe r;
  r.strip_dht = true;
  r.frames = 3;
  const Outcome tuned = optimize(testing::make_jpeg({.width = 64, .height = 48, .quality = 85}),
                                 Policy{});  // Huffman tables of its own
  ASSERT_TRUE(tuned.replaced()) << tuned.message;
  r.given_frames = {tuned.bytes};
  const Outcome o = run(make_avi(r));
  EXPECT_EQ(o.reason, Reason::kUnsupportedVariant) << o.message;
  EXPECT_NE(o.message.find("leaves Huffman tables out after images with tables"), std::string::npos)
      << o.message;
  AviRecipe standard;
  standard.strip_dht = true;
  standard.frames = 3;
  standard.dht_kept_frame = 0;
  const Outcome fine = run(make_avi(standard));
  EXPECT_TRUE(fine.replaced()) << fine.message;
  // Tables of its own only for luma, and later images that leave only chroma out: every reader
  // takes K.3 for chroma, so nothing is unsettled (the file used to be refused all the same).
  AviRecipe luma;
  luma.luma_tables_only = true;
  luma.frames = 3;
  luma.given_frames = {testing::with_tables_left_out(tuned.bytes, {0x00, 0x10}, true)};
  const Bytes in = make_avi(luma);
  const Outcome settled = run(in);
  ASSERT_TRUE(settled.replaced()) << settled.message;
  testing::DirectContext context;
  const Verdict v = verify_avi(in, settled.bytes, context);
  EXPECT_TRUE(v.ok) << v.problem;
  const std::vector<SampleBuffer> before = decoded_frames(in);
  EXPECT_EQ(before.size(), 3u);
  EXPECT_TRUE(before == decoded_frames(settled.bytes));
}

// A video larger than Limits::large_output_bytes is written to a file-backed buffer (and read
// back from it by the verifier): the same bytes as in memory.
TEST(AviFormat, LongVideosAreWrittenToAFileBackedBuffer) {
  AviRecipe r;
  r.open_dml = true;
  r.frames = 6;
  const Bytes in = make_avi(r);
  const Outcome memory = run(in);
  ASSERT_TRUE(memory.replaced()) << memory.message;
  EXPECT_FALSE(memory.large_output);
  Policy p;
  p.limits.large_output_bytes = in.size() / 2;
  const Outcome large = optimize(in, p);
  ASSERT_TRUE(large.replaced()) << large.message;
  ASSERT_TRUE(large.large_output);
  EXPECT_TRUE(large.bytes.empty());
  EXPECT_EQ(large.bytes_out, large.output().size());
  const Bytes written(large.output().begin(), large.output().end());
  EXPECT_EQ(written, memory.bytes);
}

TEST(AviFormat, TwoFieldFramesAreOptimisedFieldByField) {
  AviRecipe r;
  r.two_fields = true;
  const Bytes in = make_avi(r);
  const Outcome o = run(in);
  ASSERT_TRUE(o.replaced()) << o.message;
  expect_same_frames(in, o.bytes);
}

TEST(AviFormat, OpenDmlIndexesAreRewritten) {
  AviRecipe r;
  r.open_dml = true;
  r.frames = 5;
  const Bytes in = make_avi(r);
  const AviFile a = parse_avi(in);
  size_t indexes = 0;
  for (size_t i = 0; i < a.tree.chunks.size(); ++i)
    if (index_kind(in, a.tree.chunks[i]) != IndexKind::kNone) ++indexes;
  EXPECT_EQ(indexes, 3u);  // indx, ix00, idx1
  const Outcome o = run(in);
  ASSERT_TRUE(o.replaced()) << o.message;
  expect_same_frames(in, o.bytes);
}

TEST(AviFormat, AbsoluteIdx1OffsetsStayAbsolute) {
  AviRecipe r;
  r.absolute_idx1 = true;
  r.audio = false;
  const Bytes in = make_avi(r);
  const Outcome o = run(in);
  ASSERT_TRUE(o.replaced()) << o.message;
  const AviFile b = parse_avi(o.bytes);
  for (size_t i = 0; i < b.tree.chunks.size(); ++i)
    if (b.tree.chunks[i].id == fourcc("idx1")) {
      EXPECT_FALSE(resolve_index(o.bytes, b, i).relative);
    }
  expect_same_frames(in, o.bytes);
}

TEST(AviFormat, NoIndexIsFine) {
  AviRecipe r;
  r.idx1 = false;
  const Bytes in = make_avi(r);
  const Outcome o = run(in);
  ASSERT_TRUE(o.replaced()) << o.message;
  expect_same_frames(in, o.bytes);
}

TEST(AviFormat, DamagedIndexIsLeftAlone) {
  Bytes in = make_avi(AviRecipe{});
  const AviFile a = parse_avi(in);
  for (const RiffChunk& c : a.tree.chunks)
    if (c.id == fourcc("idx1")) store_le32(in.data() + c.data_offset() + 8, 3);  // bad offset
  const Outcome o = run(in);
  EXPECT_FALSE(o.replaced());
  EXPECT_EQ(o.reason, Reason::kCorrupt);
  EXPECT_NE(o.message.find("damaged index"), std::string::npos) << o.message;
}

// A muxer that leaves idx1 out of the RIFF size puts it among the bytes after the RIFF chunk,
// which are kept as they are: ffmpeg still reads it there, so its offsets would miss the
// rewritten frames (1 of 12 frames and no audio read back). Other bytes after it are fine.
TEST(AviFormat, AnIndexAfterTheRiffChunkIsLeftAlone) {
  Bytes in = make_avi(AviRecipe{});
  const AviFile a = parse_avi(in);
  for (const RiffChunk& c : a.tree.chunks)
    if (c.id == fourcc("idx1")) {
      ASSERT_EQ(c.offset + 8 + c.size + (c.size & 1), in.size());
      store_le32(in.data() + 4, uint32_t(c.offset - 8));  // the RIFF chunk ends before it
    }
  ASSERT_LT(parse_avi(in).tree.trailing_offset, in.size());
  const Outcome o = run(in);
  EXPECT_EQ(o.reason, Reason::kUnsupportedVariant) << o.message;
  EXPECT_NE(o.message.find("idx1"), std::string::npos) << o.message;
  Bytes zeros_after = make_avi(AviRecipe{});
  zeros_after.resize(zeros_after.size() + 100, 0);
  const Outcome kept = run(zeros_after);
  ASSERT_TRUE(kept.replaced()) << kept.message;
  EXPECT_TRUE(std::equal(zeros_after.end() - 100, zeros_after.end(), kept.bytes.end() - 100));
}

// Camera Motion-JPEG whose RIFF (or movi) size stops short of its last frames: ffmpeg still
// reads them, and those that leave their Huffman tables out were decoded with the tables of
// the rewritten frame before them (16 of 31 frames of a camera clip, "error dc"). Such files
// are left alone, with where the frames lie.
TEST(AviFormat, FramesOutsideTheMoviListAreLeftAlone) {
  AviRecipe r;
  r.frames = 6;
  r.strip_dht = true;
  r.idx1 = false;
  r.audio = false;
  for (const bool riff_too : {true, false}) {
    Bytes in = make_avi(r);
    const AviFile a = parse_avi(in);
    uint64_t movi = 0, fourth = 0;
    int frames = 0;
    for (const RiffChunk& c : a.tree.chunks) {
      if (c.is_list && c.list_type == fourcc("movi")) movi = c.offset;
      if (a.is_mjpeg_frame(c) && ++frames == 4) fourth = c.offset;
    }
    ASSERT_GT(fourth, movi);
    store_le32(in.data() + movi + 4, uint32_t(fourth - movi - 8));  // movi ends at frame 4
    if (riff_too) store_le32(in.data() + 4, uint32_t(fourth - 8));  // and so does the RIFF
    const Outcome o = run(in);
    EXPECT_FALSE(o.replaced());
    EXPECT_EQ(o.reason, Reason::kUnsupportedVariant) << o.message;
    EXPECT_NE(o.message.find(riff_too ? "after the RIFF chunk" : "outside the movi list"),
              std::string::npos)
        << o.message;
  }
}

// ffmpeg looks for chunks at any byte after the RIFF chunk: a frame there behind one stray byte
// was read and decoded with the rewritten frame's tables ("error count: 64"), while a walk by
// chunk sizes missed it. Text that merely starts with digits is not a chunk of the file's
// streams, and stays as it is.
TEST(AviFormat, BytesAfterTheRiffChunkAreSearchedAsPlayersSearchThem) {
  const Bytes avi = make_avi(AviRecipe{});
  const Bytes frame = frame_chunks(avi).back();
  Bytes shifted = avi;
  for (const char c : std::string("X00dc")) shifted.push_back(uint8_t(c));
  for (int i = 0; i < 4; ++i) shifted.push_back(uint8_t(frame.size() >> (8 * i)));
  shifted.insert(shifted.end(), frame.begin(), frame.end());
  const Outcome refused = run(shifted);
  EXPECT_FALSE(refused.replaced());
  EXPECT_EQ(refused.reason, Reason::kUnsupportedVariant) << refused.message;
  EXPECT_NE(refused.message.find("after the RIFF chunk"), std::string::npos) << refused.message;
  Bytes text = avi;
  for (const char c : std::string("20240501 recorder log: 10 frames\n")) text.push_back(uint8_t(c));
  const Outcome kept = run(text);
  ASSERT_TRUE(kept.replaced()) << kept.message;
  EXPECT_TRUE(std::equal(text.end() - 33, text.end(), kept.bytes.end() - 33));
}

// A frame whose coded data libjpeg reads without a word (a run of zeros past a block's end,
// say) where libavcodec finds it damaged and shows another picture (ffmpeg: "error count: 64";
// OpenCV, decord and torchvision read frames through it): written anew from libjpeg's reading,
// the frame changed what those readers show. Such a frame is kept as it is; the others are
// optimised.
TEST(AviFormat, AFrameTheReadersFindDamagedIsKeptAsItIs) {
  const Bytes good = testing::make_jpeg(testing::JpegRecipe{});
  size_t scan = 0;
  for (size_t i = 0; i + 1 < good.size(); ++i)
    if (good[i] == 0xFF && good[i + 1] == 0xDA) scan = i + 2 + (good[i + 2] << 8 | good[i + 3]);
  ASSERT_GT(scan, 0u);
  // The first change of one byte of the scan that does that (the input is made the same way
  // every time, so the search is too).
  Bytes bad;
  for (size_t pos = scan; pos + 2 < good.size() && bad.empty(); ++pos)
    for (const uint8_t value : {0x66, 0xF0, 0x0F, 0x3C}) {
      Bytes changed = good;
      if (changed[pos] == value) continue;
      changed[pos] = value;
      if (testing::decode_jpeg_pixels(changed).empty()) continue;  // libjpeg says so
      media::MjpegChunkDecoder strict(64, 48, fourcc("MJPG"), true);
      try {
        strict.check(changed);
      } catch (const FormatError&) {
        bad = changed;
        break;
      }
    }
  ASSERT_FALSE(bad.empty()) << "no such change found";
  AviRecipe r;
  r.frames = 3;
  r.audio = false;
  r.given_frames = {good, bad, good};
  const Bytes in = make_avi(r);
  const Outcome o = run(in);
  ASSERT_TRUE(o.replaced()) << o.message;
  const std::vector<Bytes> before = frame_chunks(in), after = frame_chunks(o.bytes);
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after[1], before[1]);
  EXPECT_LT(after[0].size(), before[0].size());
  EXPECT_LT(after[2].size(), before[2].size());
}

TEST(AviFormat, OtherCodecsAreLeftAloneWithAReason) {
  Bytes in = make_avi(AviRecipe{});
  const AviFile a = parse_avi(in);
  for (const RiffChunk& c : a.tree.chunks)
    if (c.id == fourcc("strf") && c.size == 40)
      std::copy_n("XVID", 4, in.begin() + long(c.data_offset() + 16));
  const Outcome o = run(in);
  EXPECT_FALSE(o.replaced());
  EXPECT_EQ(o.reason, Reason::kUnsupportedVariant);
  EXPECT_NE(o.message.find("XVID"), std::string::npos) << o.message;
}

TEST(AviFormat, AlreadyOptimisedFramesGiveNoGain) {
  const Outcome first = run(make_avi(AviRecipe{}));
  ASSERT_TRUE(first.replaced());
  const Outcome second = run(first.bytes);
  EXPECT_FALSE(second.replaced());
}

TEST(AviFormat, TruncatedAndCorruptedFilesNeverCrash) {
  AviRecipe r;
  r.open_dml = true;
  r.frames = 2;
  const Bytes in = make_avi(r);
  for (size_t cut = 0; cut < in.size(); cut += 7) {
    const Bytes part(in.begin(), in.begin() + long(cut));
    const Outcome o = run(part);
    EXPECT_FALSE(o.replaced() && o.bytes.size() >= part.size());
    if (!o.replaced()) {
      EXPECT_FALSE(o.message.empty()) << cut;
    }
  }
  uint32_t seed = 7;
  for (int round = 0; round < 300; ++round) {
    Bytes bad = in;
    for (int k = 0; k < 4; ++k) {
      seed = seed * 1103515245u + 12345u;
      bad[12 + (seed >> 8) % (bad.size() - 12)] ^= uint8_t(1u << (seed % 8));
    }
    const Outcome o = run(bad);
    if (!o.replaced()) {
      EXPECT_FALSE(o.message.empty());
    }
    (void)describe(bad);
  }
}

TEST(AviFormat, DescribeNamesStreams) {
  const FileInfo info = describe(make_avi(AviRecipe{}));
  EXPECT_EQ(info.kind, Kind::kAvi);
  EXPECT_TRUE(info.supported);
  EXPECT_TRUE(info.problem.empty()) << info.problem;
  bool found = false;
  for (const auto& [name, value] : info.properties)
    if (name == "stream 0") found = value.find("MJPG 64x48") != std::string::npos;
  EXPECT_TRUE(found);
}

TEST(Riff, RejectsOverrunsAndDeepNesting) {
  testing::RiffBuilder b;
  const size_t riff = b.open("RIFF", "AVI ");
  std::vector<size_t> lists;
  for (int i = 0; i < 20; ++i) lists.push_back(b.open("LIST", "deep"));
  for (auto it = lists.rbegin(); it != lists.rend(); ++it) b.close(*it);
  b.close(riff);
  EXPECT_THROW(parse_riff(b.bytes), FormatError);
  Bytes overrun = make_avi(AviRecipe{});
  store_le32(overrun.data() + 16, 0xFFFFFF00u);  // hdrl's size
  EXPECT_THROW(parse_riff(overrun), FormatError);
}

// Inside the file, a 'RIFF' chunk is data, as ffmpeg reads it: a stream list spelt so is no
// stream, and the chunks of the stream after it are not taken for Motion-JPEG frames.
TEST(Riff, ARiffChunkInsideTheFileHoldsNoList) {
  Bytes in = make_avi(AviRecipe{});
  const AviFile plain = parse_avi(in);
  ASSERT_EQ(plain.streams.size(), 2u);
  size_t strl = 0;
  for (const RiffChunk& c : plain.tree.chunks)
    if (c.is_list && c.list_type == fourcc("strl")) {
      strl = c.offset;
      break;
    }
  ASSERT_NE(strl, 0u);
  std::copy_n("RIFF", 4, in.begin() + long(strl));  // the video's stream list
  const AviFile read = parse_avi(in);
  ASSERT_EQ(read.streams.size(), 1u);
  EXPECT_EQ(read.streams[0].type, fourcc("auds"));
  EXPECT_FALSE(run(in).replaced());
}

}  // namespace
}  // namespace lighten
