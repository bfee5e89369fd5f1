#include "formats/video/avi_frames.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/errors.h"
#include "formats/jpeg/perceptual.h"
#include "formats/video/mjpeg.h"

namespace lighten::video {
namespace {

// One way of writing a frame chunk, under one policy.
struct FrameAttempt {
  Bytes bytes;
  bool optimised = false;    // an image was written smaller
  bool differs = false;      // the bytes are not the chunk's
  bool requantised = false;  // an image's pixels changed
  bool rewritten = false;    // FrameTally::rewritten after this frame
  size_t no_dht = 0, tables_spelled_out = 0;
  std::map<Reason, size_t> kept;
  std::vector<QualityFigures> scores;  // of the images written smaller
};

// ffmpeg's MJPEG decoder (OpenCV, decord, torchvision) decodes an image that leaves Huffman
// tables out with the tables of the image it decoded before, where libjpeg assumes the K.3
// tables: once an image was rewritten with tables of its own, every later image kept as it was
// gets K.3 spelled out for those, or those readers would decode it with the wrong codes.
// `retry`: the images were handed over before, under another policy (not charged again against
// the expansion budget). `damaged`: every image is kept as it is (the readers find the frame
// damaged, see FrameSite).
FrameAttempt attempt_frame(ByteView chunk, const std::vector<JpegImageSpan>& images,
                           Context& context, const Policy& policy, const std::string& name,
                           bool rewritten, bool retry, bool damaged = false) {
  FrameAttempt a;
  a.rewritten = rewritten;
  size_t copied_to = 0;  // the chunk's bytes up to here are in `a.bytes` or stand for an image
  for (size_t k = 0; k < images.size(); ++k) {
    const JpegImageSpan& span = images[k];
    // An image written anew whose AVI1 records its field's sizes records its own.
    const bool sized = records_field_sizes(chunk, span);
    auto resize = [&](Bytes& image) {
      if (sized && !carry_field_sizes(chunk, images, k, image))
        throw FormatError(Reason::kUnsupportedVariant, 0,
                          name + ": the field sizes its AVI1 segment records could not be carried");
    };
    a.bytes.insert(a.bytes.end(), chunk.begin() + copied_to, chunk.begin() + span.begin);
    copied_to = span.end;
    const ByteView original = chunk.subspan(span.begin, span.end - span.begin);
    // Decoders use the K.3 tables for those a frame leaves out; the optimiser gets them spelled
    // out so that the frame it writes carries the tables it needs.
    const bool from_elsewhere = span.huffman_from_elsewhere != 0;
    Bytes completed;
    if (from_elsewhere) {
      completed = with_standard_huffman_tables(chunk, span);
      ++a.no_dht;
    }
    const ByteView candidate = from_elsewhere ? ByteView(completed) : original;
    // What the image would be written as if kept: after a rewritten image, one that leaves
    // tables out gets them spelled out, so an output smaller than that is the better choice, and
    // the one a second run, handed those spelled-out bytes, would make.
    const bool spelled_out_if_kept = from_elsewhere && a.rewritten;
    const size_t kept_size = spelled_out_if_kept ? completed.size() : original.size();
    Outcome item;
    if (damaged)
      item.reason = Reason::kCorrupt;
    else
      item = retry ? context.optimize_embedded_again(candidate, name, policy)
                   : context.optimize_embedded_under(candidate, name, policy);
    if (item.replaced() && item.bytes.size() < kept_size) {
      resize(item.bytes);
      a.scores.push_back(item.quality);
      a.requantised = a.requantised || !item.quality.pixels_identical;
      a.bytes.insert(a.bytes.end(), item.bytes.begin(), item.bytes.end());
      a.optimised = a.differs = a.rewritten = true;
      continue;
    }
    if (!item.replaced()) ++a.kept[item.reason];
    if (spelled_out_if_kept) {
      if (span.huffman_from_elsewhere & ~kStandardHuffmanTables)
        throw FormatError(Reason::kUnsupportedVariant, 0,
                          name +
                              " uses a Huffman table it does not define, in a slot the standard "
                              "tables leave empty, after a rewritten image: ffmpeg would decode "
                              "it with that image's table");
      resize(completed);
      a.bytes.insert(a.bytes.end(), completed.begin(), completed.end());
      ++a.tables_spelled_out;
      a.differs = true;
    } else {
      a.bytes.insert(a.bytes.end(), original.begin(), original.end());
    }
  }
  a.bytes.insert(a.bytes.end(), chunk.begin() + copied_to, chunk.end());
  return a;
}

// Rounds at a raised floor before a frame falls back to lossless treatment.
constexpr int kRaisedRounds = 2;
// Raised floors aim this far above what the readers' view lacked (scores move unevenly with
// the tables).
constexpr double kRaiseSlack = 0.5;
// Above this floor requantising saves too little to be worth another round.
constexpr double kHighestRaisedFloor = 97.0;

// How far a frame's readers' view falls short of the floor (<= 0: it passes).
double shortfall(const Ssimulacra2Result& s, double floor) {
  return std::max(floor - s.score, floor - jpeg::kWorstTileMargin - s.worst_tile_score);
}

// Checks a requantised attempt (made under `tried`) as libavcodec decodes it; tries raised
// floors, then lossless treatment, until one passes. Returns the attempt to write.
FrameAttempt gate_frame(ByteView chunk, const std::vector<JpegImageSpan>& images, Context& context,
                        const std::string& name, ReaderGate& gate, FrameTally& tally,
                        const Policy& tried, FrameAttempt first) {
  const double floor = quality_floor(context.policy());
  FrameAttempt a = std::move(first);
  Policy raised = tried;
  for (int round = 0; gate.has_reference(); ++round) {
    std::optional<Ssimulacra2Result> s;
    try {
      s = gate.score(a.bytes);
    } catch (const FormatError&) {
      // A candidate libavcodec cannot decode fails; the next round or lossless treatment follows.
    }
    const double short_by = s ? shortfall(*s, floor) : INFINITY;
    if (short_by <= 0) {
      std::optional<double> jpeg_view;
      for (const QualityFigures& q : a.scores)
        if (q.ssimulacra2) jpeg_view = std::min(jpeg_view.value_or(100.0), *q.ssimulacra2);
      if (jpeg_view) gate.note_gap(*jpeg_view, s->score);
      tally.reader_worst = std::min(tally.reader_worst.value_or(100.0), s->score);
      tally.reader_sum += s->score;
      ++tally.reader_scored;
      tally.raised += round > 0;
      return a;
    }
    if (round == kRaisedRounds || !std::isfinite(short_by)) break;
    raised.target_score = quality_floor(raised) + short_by + kRaiseSlack;
    if (raised.target_score > kHighestRaisedFloor) break;
    a = attempt_frame(chunk, images, context, raised, name, tally.rewritten, true);
    if (!a.requantised) {  // pixels kept: nothing left for the gate to judge
      gate.note_written(a.bytes);
      return a;
    }
  }
  ++tally.lossless;
  Policy lossless = context.policy();
  lossless.mode = Mode::kLossless;
  lossless.target_score = 0;
  FrameAttempt kept = attempt_frame(chunk, images, context, lossless, name, tally.rewritten, true);
  gate.note_written(kept.bytes);
  return kept;
}

}  // namespace

bool optimize_frame(ByteView chunk, const std::vector<JpegImageSpan>& images, const FrameSite& site,
                    Context& context, ReaderGate* gate, FrameTally& tally, Bytes& out) {
  const std::string& name = site.name;
  if (chunk.empty()) return false;  // a dropped frame: players show the one before again
  for (const JpegImageSpan& span : images) {
    if (span.huffman_from_elsewhere & tally.tables_not_standard)
      throw FormatError(Reason::kUnsupportedVariant, site.offset,
                        name +
                            " has an image that leaves Huffman tables out after images with "
                            "tables of their own: ffmpeg decodes it with those, libjpeg with the "
                            "standard ones, so what it shows is not settled");
    tally.tables_not_standard =
        uint8_t((tally.tables_not_standard & ~span.huffman_defined) | span.huffman_not_standard);
  }
  // A field lighten cannot walk to would be decoded with the tables of the image before it.
  const bool unwalked = holds_unwalked_scan(chunk, images, site.stream_height);
  if (unwalked && tally.rewritten)
    throw FormatError(Reason::kUnsupportedVariant, site.offset,
                      name +
                          " holds a JPEG scan outside the images lighten can read, after a "
                          "rewritten image: ffmpeg would decode it with that image's tables");
  if (images.empty()) {
    ++tally.not_jpeg;
    return false;
  }
  if (unwalked) {  // kept whole, so that field keeps the tables it had
    ++tally.kept_whole;
    return false;
  }
  // Field sizes recorded otherwise than lighten can follow stay right only in a frame kept whole.
  if (!recorded_field_sizes_hold(chunk, images)) {
    if (tally.rewritten && std::any_of(images.begin(), images.end(), [](const JpegImageSpan& s) {
          return s.huffman_from_elsewhere != 0;
        }))
      throw FormatError(Reason::kUnsupportedVariant, site.offset,
                        name +
                            " records its fields' sizes in a way lighten cannot follow and relies "
                            "on the standard tables after a rewritten image");
    ++tally.kept_whole;
    return false;
  }
  Policy start = context.policy();
  // Frames keep their sampling: a stream whose frames changed theirs one by one would make
  // decoders reconfigure mid-stream.
  start.jpeg_subsampling = SubsamplingPolicy::kKeep;
  if (site.lossless_only) {
    start.mode = Mode::kLossless;
    start.target_score = 0;
  }
  if (gate && start.mode != Mode::kLossless)
    start.target_score = gate->first_floor(quality_floor(start));
  FrameAttempt a = attempt_frame(chunk, images, context, start, name, tally.rewritten,
                                 site.handed_over_before, site.damaged_for_readers);
  if (gate && a.requantised)
    a = gate_frame(chunk, images, context, name, *gate, tally, start, std::move(a));
  tally.no_dht += a.no_dht;
  tally.tables_spelled_out += a.tables_spelled_out;
  for (const auto& [reason, n] : a.kept) tally.kept[reason] += n;
  for (const QualityFigures& q : a.scores) {
    if (q.pixels_identical) ++tally.pixels_kept;
    if (!q.ssimulacra2) continue;
    tally.worst_score = std::min(tally.worst_score.value_or(100.0), *q.ssimulacra2);
    tally.score_sum += *q.ssimulacra2;
    ++tally.scored;
  }
  tally.changed += a.optimised;
  tally.rewritten = a.rewritten;
  out = std::move(a.bytes);
  return a.differs;
}

}  // namespace lighten::video
