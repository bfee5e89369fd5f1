#include "formats/video/avi_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/file_backed_buffer.h"
#include "formats/media/media_format.h"
#include "formats/video/avi_file.h"
#include "formats/video/avi_frames.h"
#include "formats/video/avi_index.h"
#include "formats/video/mjpeg.h"
#include "formats/video/reader_gate.h"

namespace lighten {
namespace {

using namespace video;

// Where the writer puts the output: memory, or for a long video a file-backed buffer.
class OutputSink {
 public:
  explicit OutputSink(Bytes& memory) : memory_(&memory) {}
  explicit OutputSink(FileBackedBuffer& file) : file_(&file) {}
  void append(ByteView b) {
    if (memory_)
      memory_->insert(memory_->end(), b.begin(), b.end());
    else
      file_->append(b);
  }
  size_t size() const { return memory_ ? memory_->size() : file_->size(); }
  std::span<uint8_t> span() {
    return memory_ ? std::span<uint8_t>(*memory_) : std::span<uint8_t>(file_->data(), size());
  }

 private:
  Bytes* memory_ = nullptr;
  FileBackedBuffer* file_ = nullptr;
};

// Thrown by the writer where a frame asks for lossless treatment after this run requantised an
// earlier frame: the file is written again with every frame optimised losslessly only.
struct LosslessFromTheStart {
  size_t frames_handed_over;  // frames before that one, their images already charged
  std::string why;            // for the outcome's detail
};

constexpr std::string_view kMarkedBefore =
    "lighten requantised frames of this file before: the others are optimised losslessly only";

// Copies the tree into `out`, frames optimised, sizes of lists recomputed; fills the moves.
// A file with any frame that carries lighten's quality marker was requantised by an earlier run,
// which left its other frames as they are on purpose (a frame's search depends on the frames
// before it): from the first marked frame on, frames are optimised losslessly only, and a marked
// frame found after this run requantised one throws LosslessFromTheStart. So does a frame that
// takes its quantisation table from the frame before (ffmpeg decodes it so), which requantising
// that frame would change. Found as the frames are read, so a first run reads nothing twice.
class AviWriter {
 public:
  // `handed_over`: frames an earlier attempt handed over (lossless_only follows from that), and
  // `why` it ended.
  AviWriter(ByteView in, const AviFile& avi, Context& context, OutputSink& out, size_t handed_over,
            std::string why)
      : in_(in),
        avi_(avi),
        context_(context),
        out_(out),
        start_(Clock::now()),
        lossless_only_(handed_over > 0),
        lossless_why_(std::move(why)),
        handed_over_(handed_over) {
    offset_.resize(avi.tree.chunks.size());
    size_.resize(avi.tree.chunks.size());
    for (const RiffChunk& c : avi.tree.chunks) frames_total_ += !c.is_list && avi.is_mjpeg_frame(c);
  }

  // Why frames were optimised losslessly only in a perceptual mode ("" where they were not).
  const std::string& lossless_why() const { return lossless_why_; }

  void write() {
    const auto& chunks = avi_.tree.chunks;
    for (size_t i = 0; i < chunks.size(); i = chunks[i].end) write_chunk(i, false);
    out_.append(in_.subspan(avi_.tree.trailing_offset));
  }

  ChunkMoves moves() const { return {offset_, size_, avi_.movi}; }
  const FrameTally& tally() const { return tally_; }

 private:
  void put32(uint32_t v) {
    uint8_t b[4];
    store_le32(b, v);
    out_.append(ByteView(b, 4));
  }

  void write_chunk(size_t i, bool in_movi) {
    const RiffChunk& c = avi_.tree.chunks[i];
    offset_[i] = out_.size();
    if (c.is_list) {
      put32(c.id);
      put32(0);  // patched below, once the children are written
      put32(c.list_type);
      const bool movi = in_movi || c.list_type == fourcc("movi");
      for (size_t j = i + 1; j < c.end; j = avi_.tree.chunks[j].end) write_chunk(j, movi);
      const uint64_t size = out_.size() - offset_[i] - 8;
      store_le32(out_.span().data() + offset_[i] + 4, uint32_t(size));
      size_[i] = uint32_t(size);
      if (size % 2 == 1 && (c.has_pad || c.size % 2 == 0)) out_.append(kPad);
      return;
    }
    const ByteView data = in_.subspan(c.data_offset(), c.size);
    if (in_movi && avi_.is_mjpeg_frame(c)) {
      give_up_early_if_too_slow(c.offset);
      if (context_.out_of_time())
        throw FormatError(Reason::kLimitExceeded, c.offset, "the time budget ran out");
      ++tally_.frames;
      const std::vector<JpegImageSpan> images = split_mjpeg_chunk(data);
      if (!lossless_only_ && context_.policy().mode != Mode::kLossless) {
        std::string why;
        if (carries_quality_marker(data)) why = kMarkedBefore;
        // An image that takes a quantisation table from the image before it.
        else if (std::any_of(images.begin(), images.end(),
                             [](const JpegImageSpan& s) { return s.quantisation_from_elsewhere; }))
          why = fmt::format(
              "frame {} has no quantisation table of its own (ffmpeg decodes it with that of the "
              "frame before, which requantising would change): frames are optimised losslessly "
              "only",
              tally_.frames);
        if (!why.empty()) {
          if (tally_.scored > 0) throw LosslessFromTheStart{tally_.frames - 1, why};
          lossless_only_ = true;
          lossless_why_ = std::move(why);
        }
      }
      const FrameSite site{c.offset,
                           avi_.frame_height(c),
                           "frame " + std::to_string(tally_.frames) + " (" + fourcc_text(c.id) +
                               " at byte " + std::to_string(c.offset) + ")",
                           lossless_only_,
                           tally_.frames <= handed_over_,
                           !readers_decode(c, data)};
      if (optimize_frame(data, images, site, context_, reader_gate(c, data), tally_, frame_)) {
        put32(c.id);
        put32(uint32_t(frame_.size()));
        out_.append(frame_);
        if (frame_.size() % 2 == 1) out_.append(kPad);
        size_[i] = uint32_t(frame_.size());
        return;
      }
    }
    out_.append(in_.subspan(c.offset, c.total_size()));
    size_[i] = c.size;
  }

  // Perceptual modes: the stream's gate, having taken this chunk as its reference; nullptr in
  // lossless mode.
  ReaderGate* reader_gate(const RiffChunk& c, ByteView data) {
    if (context_.policy().mode == Mode::kLossless || lossless_only_) return nullptr;
    const int stream = avi_.stream_of(c);
    auto [it, added] = gates_.try_emplace(stream);
    if (added) it->second = std::make_unique<ReaderGate>(avi_.streams[size_t(stream)]);
    it->second->take_reference(data);
    return it->second.get();
  }

  // Whether libavcodec, which ffmpeg-based readers use, decodes the original chunk without
  // finding damage (FrameSite::damaged_for_readers). Every original frame of a stream goes
  // through its strict decoder in file order, as the readers' carries tables from frame to frame.
  bool readers_decode(const RiffChunk& c, ByteView data) {
    if (data.empty()) return true;  // a dropped frame
    const int stream = avi_.stream_of(c);
    auto [it, added] = readers_.try_emplace(stream);
    if (added) {
      const AviStream& st = avi_.streams[size_t(stream)];
      try {
        it->second =
            std::make_unique<media::MjpegChunkDecoder>(st.width, st.height, st.compression, true);
      } catch (const FormatError&) {  // no MJPEG decoder in this libavcodec: nothing to check
      }
    }
    if (!it->second) return true;
    try {
      it->second->check(data);
    } catch (const FormatError&) {
      return false;
    }
    return true;
  }

  // Perceptual frames cost a search each: a long video that cannot finish within the time
  // budget is given up after a few seconds, not after the whole budget has been spent. The pace
  // is judged after a few frames, or after fewer once half the budget is gone, so that a slow
  // machine still gives the projection rather than a bare "ran out".
  void give_up_early_if_too_slow(size_t offset) const {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const double budget = context_.policy().limits.time_budget_s;
    const bool enough_frames =
        tally_.frames >= kFramesBeforeProjecting && elapsed >= kSecondsBeforeProjecting;
    const bool half_the_budget = tally_.frames >= 1 && elapsed >= budget / 2;
    if (!enough_frames && !half_the_budget) return;
    const double projected = elapsed * double(frames_total_) / double(tally_.frames);
    if (projected <= budget) return;
    throw FormatError(Reason::kLimitExceeded, offset,
                      fmt::format("{} frames would take about {:.0f} s at the pace of the first "
                                  "{}, over the time budget of {:.0f} s (--time-budget)",
                                  frames_total_, projected, tally_.frames, budget));
  }

  static constexpr uint8_t kPadByte[1] = {0};
  static constexpr ByteView kPad{kPadByte, 1};
  static constexpr size_t kFramesBeforeProjecting = 8;
  static constexpr double kSecondsBeforeProjecting = 2.0;
  using Clock = std::chrono::steady_clock;

  ByteView in_;
  const AviFile& avi_;
  Context& context_;
  OutputSink& out_;
  Clock::time_point start_;
  size_t frames_total_ = 0;
  bool lossless_only_;
  std::string lossless_why_;
  size_t handed_over_;
  Bytes frame_;  // reused for every frame
  std::vector<uint64_t> offset_;
  std::vector<uint32_t> size_;
  FrameTally tally_;
  std::map<int, std::unique_ptr<ReaderGate>> gates_;                  // by stream number
  std::map<int, std::unique_ptr<media::MjpegChunkDecoder>> readers_;  // strict, by stream number
};

// Every index of the file, resolved; throws when one is damaged.
std::vector<ResolvedIndex> resolve_all(ByteView in, const AviFile& avi) {
  std::vector<ResolvedIndex> all;
  const auto& chunks = avi.tree.chunks;
  for (size_t i = 0; i < chunks.size(); ++i)
    if (index_kind(in, chunks[i]) != IndexKind::kNone) all.push_back(resolve_index(in, avi, i));
  return all;
}

std::string describe_streams(const AviFile& avi) {
  std::string s;
  for (const AviStream& st : avi.streams) {
    if (!s.empty()) s += ", ";
    s += fourcc_text(st.type) + " " + st.codec();
  }
  return s;
}

// Bytes after the RIFF chunks are kept as they are. ffmpeg looks through them for chunks, at
// any byte (avi_sync): it reads an idx1 there (a muxer that did not count it in the RIFF size),
// and, where no index covers the file, frames as well (a RIFF size that stops short of the last
// frames). An index's offsets would point beside the rewritten frames, and a Motion-JPEG frame
// that leaves its Huffman tables out would be decoded with those of the rewritten frame before
// it. Frames inside the RIFF chunk but outside movi (a movi size that stops short) are kept as
// they are too, for the same end.
void refuse_what_players_read_outside_movi(ByteView in, const AviFile& avi) {
  // A chunk of one of the file's streams, as ffmpeg takes one: its number, a known type and a
  // size that fits in the file.
  const auto stream_chunk_at = [&](uint64_t pos) {
    const uint8_t* p = in.data() + pos;
    const auto digit = [](uint8_t c) { return c >= '0' && c <= '9'; };
    if (!digit(p[0]) || !digit(p[1]) ||
        size_t((p[0] - '0') * 10 + (p[1] - '0')) >= avi.streams.size())
      return false;
    const uint16_t type = uint16_t(p[2] | p[3] << 8);
    bool known = false;
    for (const char* t : {"dc", "db", "wb", "tx", "pc"})
      known |= type == uint16_t(t[0] | t[1] << 8);
    return known && load_le32(p + 4) <= in.size() - pos - 8;
  };
  for (uint64_t pos = avi.tree.trailing_offset; pos + 8 <= in.size(); ++pos) {
    if (load_le32(in.data() + pos) == fourcc("idx1"))
      throw FormatError(Reason::kUnsupportedVariant, pos,
                        "an idx1 index lies after the RIFF chunk, where players still read it; "
                        "its offsets would not follow rewritten frames");
    if (stream_chunk_at(pos))
      throw FormatError(Reason::kUnsupportedVariant, pos,
                        "a chunk of stream data (" + fourcc_text(load_le32(in.data() + pos)) +
                            ") lies after the RIFF chunk, where players may read it (ffmpeg "
                            "does where no index covers it), beside frames that would be "
                            "rewritten");
  }
  std::vector<size_t> movi_ends;  // of the movi lists open around chunk i
  for (size_t i = 0; i < avi.tree.chunks.size(); ++i) {
    while (!movi_ends.empty() && i >= movi_ends.back()) movi_ends.pop_back();
    const RiffChunk& c = avi.tree.chunks[i];
    if (c.is_list && c.list_type == fourcc("movi")) movi_ends.push_back(c.end);
    if (!c.is_list && movi_ends.empty() && avi.is_mjpeg_frame(c))
      throw FormatError(Reason::kUnsupportedVariant, c.offset,
                        "a video frame (" + fourcc_text(c.id) +
                            ") lies outside the movi list, where players still read it; "
                            "rewriting the frames before it could change how it decodes");
  }
}

// Whether libav's AVI muxer writes back what a chunk of this id holds (`list`: the list type of
// the chunk's parent): the headers and indexes it makes anew, stream names, video properties
// and the INFO items (the metadata check compares those), the frames and JUNK.
bool muxer_carries(uint32_t id, uint32_t parent) {
  const auto digit = [](uint32_t c) { return c >= '0' && c <= '9'; };
  if (parent == fourcc("movi") || parent == fourcc("rec "))
    return (digit(id & 0xFF) && digit(id >> 8 & 0xFF)) || id == fourcc("JUNK") ||
           ((id & 0xFFFF) == ('i' | 'x' << 8));
  if (parent == fourcc("INFO")) return true;
  for (const uint32_t known :
       {fourcc("avih"), fourcc("strh"), fourcc("strf"), fourcc("strn"), fourcc("indx"),
        fourcc("dmlh"), fourcc("vprp"), fourcc("JUNK"), fourcc("idx1"), fourcc("IDIT")})
    if (id == known) return true;
  return false;
}

// A re-encode writes a new file through libav's muxer, which writes no chunk it does not know:
// a vendor's chunk (a camera's LIST Tdat, a top-level maker chunk) or a stream's strd would be
// lost without a word. Such files are left alone.
void refuse_chunks_a_reencode_drops(const AviFile& avi) {
  const auto& chunks = avi.tree.chunks;
  std::vector<uint32_t> parents;  // list types of the lists open around chunk i
  std::vector<size_t> ends;
  for (size_t i = 0; i < chunks.size(); ++i) {
    while (!ends.empty() && i >= ends.back()) ends.pop_back(), parents.pop_back();
    const RiffChunk& c = chunks[i];
    const uint32_t parent = parents.empty() ? 0 : parents.back();
    if (c.is_list) {
      const bool known = c.id == fourcc("RIFF") ||
                         (c.list_type == fourcc("hdrl") || c.list_type == fourcc("strl") ||
                          c.list_type == fourcc("odml") || c.list_type == fourcc("movi") ||
                          c.list_type == fourcc("INFO") || c.list_type == fourcc("rec "));
      if (!known)
        throw FormatError(Reason::kUnsupportedVariant, c.offset,
                          "a re-encode would drop its LIST " + fourcc_text(c.list_type) +
                              " (libav's muxer writes no list it does not know)");
      parents.push_back(c.list_type);
      ends.push_back(c.end);
    } else if (!muxer_carries(c.id, parent)) {
      throw FormatError(Reason::kUnsupportedVariant, c.offset,
                        "a re-encode would drop its " + fourcc_text(c.id) +
                            " chunk (libav's muxer writes no chunk it does not know)");
    }
  }
}

bool has_mjpeg(const AviFile& avi) {
  return std::any_of(avi.streams.begin(), avi.streams.end(),
                     [](const AviStream& s) { return s.mjpeg; });
}

}  // namespace

Outcome optimize_avi(ByteView input, Context& context) {
  const AviFile avi = parse_avi(input);
  const std::vector<ResolvedIndex> indexes = resolve_all(input, avi);  // throws when damaged
  refuse_what_players_read_outside_movi(input, avi);
  if (!has_mjpeg(avi)) {
    if (context.policy().mode == Mode::kLossless)
      throw FormatError(Reason::kUnsupportedVariant, 0,
                        "no Motion-JPEG stream (" + describe_streams(avi) +
                            "); lossless mode does not re-encode lossy video");
    // Other codecs are re-encoded whole through libav (formats/media), once this parser has
    // found the chunk tree and every index sound, and libav's muxer would write back each kind
    // of chunk.
    refuse_chunks_a_reencode_drops(avi);
    Outcome outcome = optimize_media(input, context);
    outcome.kind = Kind::kAvi;
    // Bytes after the RIFF chunks follow the muxer's, as the Motion-JPEG path keeps them.
    if (outcome.replaced()) {
      const ByteView trailing = input.subspan(size_t(avi.tree.trailing_offset));
      outcome.bytes.insert(outcome.bytes.end(), trailing.begin(), trailing.end());
      outcome.bytes_out = outcome.bytes.size();
    }
    return outcome;
  }

  Outcome outcome;
  outcome.kind = Kind::kAvi;
  outcome.bytes_in = input.size();
  // A long video's output goes to a file-backed buffer; only a file on disk may hand one back
  // (containers read their items' `bytes`).
  Bytes out;
  std::shared_ptr<FileBackedBuffer> large;
  std::optional<OutputSink> sink;
  std::optional<AviWriter> writer;
  std::string lossless_why;
  for (size_t handed_over = 0;;) {
    // The first attempt's buffers go before the next one's are made (a long video's are files).
    writer.reset();
    sink.reset();
    large.reset();
    out = Bytes();
    if (context.depth() == 0 && input.size() > context.policy().limits.large_output_bytes)
      large = std::make_shared<FileBackedBuffer>(input.size() + input.size() / 16);
    if (large) {
      sink.emplace(*large);
    } else {
      out.reserve(input.size());
      sink.emplace(out);
    }
    writer.emplace(input, avi, context, *sink, handed_over, lossless_why);
    try {
      writer->write();
      break;
    } catch (const LosslessFromTheStart& restart) {
      // Written again from the start, every frame lossless (which never throws this).
      handed_over = std::max<size_t>(restart.frames_handed_over, 1);
      lossless_why = restart.why;
    }
  }
  const FrameTally& tally = writer->tally();
  const std::string before = writer->lossless_why().empty() ? "" : "; " + writer->lossless_why();
  if (tally.changed == 0) {
    outcome.action = Action::kKept;
    outcome.reason = Reason::kNoGain;
    outcome.message = "no Motion-JPEG frame could be made smaller (" +
                      std::to_string(tally.frames) + " frames)" + before;
    return outcome;
  }
  for (const ResolvedIndex& index : indexes) patch_index(avi, index, writer->moves(), sink->span());
  outcome.bytes_out = sink->size();
  if (large)
    outcome.large_output = std::move(large);
  else
    outcome.bytes = std::move(out);
  outcome.action = Action::kReplaced;
  outcome.detail = std::to_string(tally.changed) + " of " + std::to_string(tally.frames) +
                   " MJPEG frames optimised";
  if (tally.scored)
    outcome.detail +=
        fmt::format(", {} images requantised: SSIMULACRA2 min {:.1f}, mean {:.1f}", tally.scored,
                    *tally.worst_score, tally.score_sum / double(tally.scored));
  if (tally.scored && tally.pixels_kept)
    outcome.detail += fmt::format(", {} images optimised losslessly only", tally.pixels_kept);
  if (tally.reader_scored) {
    outcome.detail +=
        fmt::format("; requantised frames as ffmpeg decodes them: min {:.1f}, mean {:.1f}",
                    *tally.reader_worst, tally.reader_sum / double(tally.reader_scored));
    // The engine keeps the lower of this and what its verification measures (libjpeg's view).
    outcome.quality.ssimulacra2 = *tally.reader_worst;
  }
  if (tally.raised)
    outcome.detail += fmt::format(", {} of them done again at a raised floor", tally.raised);
  if (tally.lossless)
    outcome.detail += fmt::format(
        "; {} frames optimised losslessly only (under the floor as ffmpeg decodes them)",
        tally.lossless);
  if (tally.no_dht)
    outcome.detail += fmt::format(
        ", {} image{} relied on the standard Huffman tables (each one written carries tables)",
        tally.no_dht, tally.no_dht == 1 ? "" : "s");
  if (tally.tables_spelled_out)
    outcome.detail += fmt::format(
        ", {} kept image{} the standard tables (ffmpeg would decode {} "
        "with the tables of the image before)",
        tally.tables_spelled_out, tally.tables_spelled_out == 1 ? " carries" : "s carry",
        tally.tables_spelled_out == 1 ? "it" : "them");
  if (!indexes.empty())
    outcome.detail.append(", ").append(std::to_string(indexes.size())).append(" indexes rewritten");
  outcome.detail += before;
  if (tally.not_jpeg)
    outcome.warnings.push_back(std::to_string(tally.not_jpeg) +
                               " video chunks are not well-formed JPEG and were kept as they are");
  if (tally.kept_whole)
    outcome.warnings.push_back(std::to_string(tally.kept_whole) +
                               " frames hold a field lighten cannot read, or record field sizes "
                               "it cannot follow, and were kept whole");
  for (const auto& [reason, n] : tally.kept)
    outcome.warnings.push_back(std::to_string(n) +
                               " frames kept: " + std::string(reason_name(reason)));
  return outcome;
}

Verdict verify_avi(ByteView input, ByteView output, Context& context) {
  const AviFile a = parse_avi(input);
  const AviFile b = parse_avi(output);
  if (!has_mjpeg(a)) {  // re-encoded through libav: checked by frames, not by chunks
    if (has_mjpeg(b)) return {false, "a stream became Motion-JPEG", {}};
    (void)resolve_all(output, b);  // the muxer's indexes must be sound too
    if (!same_bytes(input.subspan(size_t(a.tree.trailing_offset)),
                    output.subspan(size_t(b.tree.trailing_offset))))
      return {false, "the bytes after the RIFF chunks changed", {}};
    return verify_media(input, output, context);
  }
  const auto& x = a.tree.chunks;
  const auto& y = b.tree.chunks;
  if (x.size() != y.size()) return {false, "the chunk count changed", {}};
  if (!same_bytes(input.subspan(a.tree.trailing_offset), output.subspan(b.tree.trailing_offset)))
    return {false, "the bytes after the RIFF chunks changed", {}};
  bool pixels_identical = true;
  std::optional<double> worst_score;  // the lowest SSIMULACRA2 of any changed frame image
  bool rewritten = false;  // an earlier frame image was written differently (see optimize_frame)
  for (size_t i = 0; i < x.size(); ++i) {
    const RiffChunk& p = x[i];
    const RiffChunk& q = y[i];
    const std::string where = "chunk " + std::to_string(i) + " (" + fourcc_text(p.id) + ")";
    if (p.id != q.id || p.is_list != q.is_list || p.list_type != q.list_type ||
        p.depth != q.depth || p.end != q.end)
      return {false, where + " changed its place in the chunk tree", {}};
    if (p.is_list) continue;
    const ByteView before = input.subspan(p.data_offset(), p.size);
    const ByteView after = output.subspan(q.data_offset(), q.size);
    const IndexKind kind = index_kind(input, p);
    if (kind != IndexKind::kNone) {
      if (index_kind(output, q) != kind ||
          index_without_positions(input, p, kind) != index_without_positions(output, q, kind))
        return {false, where + ": index fields other than positions changed", {}};
      if (resolve_index(input, a, i).targets != resolve_index(output, b, i).targets)
        return {false, where + ": an index entry points at another chunk", {}};
      continue;
    }
    const bool frame = a.is_mjpeg_frame(p);
    if (same_bytes(before, after) && !(frame && rewritten)) continue;
    if (!frame) return {false, where + " changed", {}};
    const auto from = split_mjpeg_chunk(before);
    const auto to = split_mjpeg_chunk(after);
    if (rewritten &&
        std::any_of(to.begin(), to.end(), [](auto& s) { return s.huffman_from_elsewhere != 0; }))
      return {false,
              where +
                  " leaves Huffman tables out after a rewritten image: ffmpeg would "
                  "decode it with the tables of the image before it",
              {}};
    if (!pixels_identical &&
        std::any_of(to.begin(), to.end(), [](auto& s) { return s.quantisation_from_elsewhere; }))
      return {false,
              where + " takes its quantisation table from the image before, which was requantised",
              {}};
    auto unwalked_after_rewrite = [&]() -> Verdict {
      return {false,
              where +
                  " holds a JPEG scan outside its readable images after a rewritten image: "
                  "ffmpeg would decode it with the tables of the image before it",
              {}};
    };
    if (rewritten && holds_unwalked_scan(after, to, a.frame_height(p)))
      return unwalked_after_rewrite();
    if (same_bytes(before, after)) continue;
    if (from.empty() || from.size() != to.size())
      return {false, where + ": the frame's JPEG images differ in number", {}};
    if (!same_bytes(before.subspan(from.back().end), after.subspan(to.back().end)))
      return {false, where + ": the bytes after the frame's last image changed", {}};
    for (size_t k = 1; k < from.size(); ++k)
      if (!same_bytes(before.subspan(from[k - 1].end, from[k].begin - from[k - 1].end),
                      after.subspan(to[k - 1].end, to[k].begin - to[k - 1].end)))
        return {false, where + ": the padding between the frame's images changed", {}};
    for (size_t k = 0; k < from.size(); ++k) {
      const ByteView u = before.subspan(from[k].begin, from[k].end - from[k].begin);
      const ByteView v = after.subspan(to[k].begin, to[k].end - to[k].begin);
      if (same_bytes(u, v)) continue;
      rewritten = true;
      // Checked against the frame as stored: libjpeg supplies the K.3 tables itself when a
      // frame has none, so this does not rely on the tables the optimiser was handed.
      // Field sizes in AVI1 record the new image as the original's recorded it (the padding
      // and the tail are the input's, checked above); the rest of its metadata stays.
      const bool sized = records_field_sizes(before, from[k]);
      bool sizes_right = same_field_sizes(u, v);
      if (sized) {
        Bytes expected(v.begin(), v.end());
        sizes_right = carry_field_sizes(before, from, k, expected) && same_bytes(expected, v);
      }
      if (!sizes_right)
        return {
            false, where + ": the field sizes its AVI1 segment records do not fit its image", {}};
      // Copied only where the sizes differ from the original's.
      const Verdict item = sized ? context.verify_embedded(u, with_original_field_sizes(u, v))
                                 : context.verify_embedded(u, v);
      if (!item.ok) return {false, where + ": " + item.problem, {}};
      pixels_identical = pixels_identical && item.quality.pixels_identical;
      if (item.quality.ssimulacra2)
        worst_score = std::min(worst_score.value_or(100.0), *item.quality.ssimulacra2);
    }
    if (rewritten && holds_unwalked_scan(after, to, a.frame_height(p)))
      return unwalked_after_rewrite();
  }
  for (size_t s = 0; s < a.streams.size() && s < b.streams.size(); ++s)
    if (a.streams[s].mjpeg != b.streams[s].mjpeg) return {false, "a stream header changed", {}};
  Verdict v;
  v.ok = true;
  v.quality.pixels_identical = pixels_identical;
  v.quality.ssimulacra2 = worst_score;  // a video is as good as its worst frame
  return v;
}

void describe_avi(ByteView input, FileInfo& info) {
  const AviFile avi = parse_avi(input);
  for (size_t s = 0; s < avi.streams.size(); ++s) {
    const AviStream& st = avi.streams[s];
    std::string text = fourcc_text(st.type) + " " + st.codec();
    if (st.type == fourcc("vids")) {
      // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on chained operator+.
      text.append(" ").append(std::to_string(st.width)).append("x");
      text.append(std::to_string(st.height)).append(", ").append(std::to_string(st.length));
      text.append(" frames");
    }
    if (st.mjpeg) text += " (Motion-JPEG: every frame optimised as a JPEG image)";
    if (st.type == fourcc("vids") && !st.mjpeg)
      text += " (perceptual modes re-encode it through libav when its codec allows)";
    info.properties.emplace_back("stream " + std::to_string(s), text);
  }
  info.properties.emplace_back("chunks", std::to_string(avi.tree.chunks.size()));
  info.properties.emplace_back("OpenDML", avi.open_dml ? "yes" : "no");
  try {
    info.properties.emplace_back("indexes", std::to_string(resolve_all(input, avi).size()));
  } catch (const FormatError& e) {
    info.properties.emplace_back("indexes", e.what());
  }
}

}  // namespace lighten
