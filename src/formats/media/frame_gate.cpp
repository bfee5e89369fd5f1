#include "formats/media/frame_gate.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "core/context.h"
#include "core/errors.h"
#include "core/policy_names.h"
#include "formats/media/av_enums.h"
#include "formats/media/av_io.h"
#include "formats/media/mp4_boxes.h"
#include "formats/media/rgb_converter.h"
#include "quality/floor_score.h"

namespace lighten::media {
namespace {

std::string fmt_score(const char* what, int64_t frame, double score, double floor) {
  return fmt::format("{} {} scores SSIMULACRA2 {:.2f}, under {}", what, frame, score,
                     floor_text(floor));
}

// What the re-encode of `s` would lose, or score on a scale it was not made for; "" for nothing.
// The muxer copies data tracks it has a sample entry for (timecode, GoPro metadata) and writes
// an empty one for the rest (Apple's 'mebx'). Stereo 3D, 360-degree projection and Dolby Vision
// configuration are side data the MP4 muxer does not write by default, and HDR frames carry
// mastering metadata the encoder is not given; SSIMULACRA2 reads PQ or HLG codes as SDR.
std::string uncarried_by_reencode(const AVStream* s, bool is_the_video) {
  const AVCodecParameters* q = s->codecpar;
  if (q->codec_type == AVMEDIA_TYPE_DATA && q->codec_tag != MKTAG('t', 'm', 'c', 'd') &&
      q->codec_tag != MKTAG('g', 'p', 'm', 'd')) {
    char tag[AV_FOURCC_MAX_STRING_SIZE] = {};
    av_fourcc_make_string(tag, q->codec_tag);
    return fmt::format("a data track ('{}': timed metadata, chapters or hints)", tag);
  }
  if (!is_the_video) return {};
  for (int k = 0; k < s->nb_side_data; ++k) {
    const AVPacketSideDataType type = s->side_data[k].type;
    if (type == AV_PKT_DATA_STEREO3D) return "stereo 3D signalling";
    if (type == AV_PKT_DATA_SPHERICAL) return "360-degree projection signalling";
    if (type == AV_PKT_DATA_DOVI_CONF) return "Dolby Vision signalling";
  }
  // The encoder writes the video's own pixel aspect ratio; a container's 'pasp' that says
  // otherwise would then disagree with it, which the muxer refuses.
  const AVRational container = s->sample_aspect_ratio, coded = q->sample_aspect_ratio;
  if (container.num > 0 && container.den > 0 && coded.num > 0 && coded.den > 0 &&
      av_cmp_q(container, coded) != 0)
    return fmt::format("a container pixel aspect ratio ({}:{}) other than the video's own ({}:{})",
                       container.num, container.den, coded.num, coded.den);
  // The encoders lighten drives write progressive frames: players would stop deinterlacing
  // and show combs.
  if (interlaced(q->field_order))
    return "interlaced video (fields a re-encode would weave into progressive frames)";
  if (q->color_trc == AVCOL_TRC_SMPTE2084) return "HDR video (PQ transfer)";
  if (q->color_trc == AVCOL_TRC_ARIB_STD_B67) return "HDR video (HLG transfer)";
  return {};
}

void describe(const Demuxer& demuxer, VideoFrames& out) {
  const AVFormatContext* f = demuxer.format();
  for (unsigned i = 0; i < f->nb_streams; ++i) {
    const AVStream* s = f->streams[i];
    const AVCodecParameters* q = s->codecpar;
    const char* type = av_get_media_type_string(q->codec_type);
    // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on chained operator+.
    std::string text = type ? type : "unknown";
    text.append(" ").append(avcodec_get_name(q->codec_id));
    if (q->codec_type == AVMEDIA_TYPE_VIDEO)
      text.append(" ")
          .append(std::to_string(q->width))
          .append("x")
          .append(std::to_string(q->height));
    if (s->disposition & AV_DISPOSITION_ATTACHED_PIC) text.append(" (cover art)");
    out.streams.push_back(text);
    out.lengths.push_back(
        {s->duration != AV_NOPTS_VALUE ? double(s->duration) * av_q2d(s->time_base) : -1.0, 0});
    for (int k = 0; k < s->nb_side_data; ++k)
      out.encrypted = out.encrypted || s->side_data[k].type == AV_PKT_DATA_ENCRYPTION_INIT_INFO;
    if (out.uncarried.empty()) out.uncarried = uncarried_by_reencode(s, int(i) == demuxer.video());
  }
  if (f->nb_chapters > 0) out.uncarried = "chapters";
  out.video_stream = demuxer.video();
  for (const AVDictionaryEntry* t = nullptr;
       (t = av_dict_get(f->metadata, "", t, AV_DICT_IGNORE_SUFFIX)) != nullptr;)
    out.tags.emplace_back(t->key, t->value);
  if (f->duration != AV_NOPTS_VALUE) out.duration_s = double(f->duration) / AV_TIME_BASE;
  out.marker = marker_of(f);
  const AVCodecParameters* p = demuxer.parameters();
  out.codec = avcodec_get_name(p->codec_id);
  out.width = uint32_t(std::max(p->width, 0));
  out.height = uint32_t(std::max(p->height, 0));
  out.field_order = p->field_order;
  const char* name = av_get_pix_fmt_name(AVPixelFormat(p->format));
  out.pixel_format = name ? name : "unknown";
  // Decoders say yuvj420p for a full-range stream that another file tags as yuv420p + pc.
  out.full_range =
      named_or(p->color_range, AVCOL_RANGE_NB, AVCOL_RANGE_UNSPECIFIED) == AVCOL_RANGE_JPEG;
  if (out.pixel_format.rfind("yuvj", 0) == 0) {
    out.pixel_format.erase(3, 1);
    out.full_range = true;
  }
}

}  // namespace

bool interlaced(int field_order) {
  return field_order == AV_FIELD_TT || field_order == AV_FIELD_BB || field_order == AV_FIELD_TB ||
         field_order == AV_FIELD_BT;
}

VideoFrames probe_video(ByteView file) {
  Demuxer demuxer(file);
  VideoFrames out;
  describe(demuxer, out);
  // A 3GP file carries the marker in a box of its own (with_marker_box).
  if (out.marker.empty() && !starts_with(file, "RIFF")) {
    try {
      out.marker = marker_box(file);
    } catch (const FormatError&) {
      // Boxes libavformat read past: no marker there; the optimiser names what is wrong.
    }
  }
  std::unique_ptr<AVPacket, PacketDeleter> packet(av_packet_alloc());
  if (!packet) throw std::bad_alloc();
  int64_t since_keyframe = 0;
  while (av_read_frame(demuxer.format(), packet.get()) >= 0) {
    if (packet->stream_index == demuxer.video()) {
      if ((packet->flags & AV_PKT_FLAG_KEY) && since_keyframe > 0) {
        out.longest_gop = std::max(out.longest_gop, since_keyframe);
        since_keyframe = 0;
      }
      ++since_keyframe;
    }
    out.packets += packet->stream_index == demuxer.video();
    if (size_t(packet->stream_index) < out.lengths.size())
      ++out.lengths[size_t(packet->stream_index)].packets;
    av_packet_unref(packet.get());
  }
  out.longest_gop = std::max(out.longest_gop, since_keyframe);
  return out;
}

namespace {

// A frame of the candidate may show this much earlier or later than the reference's (rounding
// to the muxer's time scale), never more.
constexpr double kTimeTolerance_s = 0.0015;

// Decoded frames of the first video stream, pulled one at a time in presentation order: two
// readers walk a reference and a candidate side by side with one frame each in memory.
class FrameReader {
 public:
  FrameReader(ByteView file, const Context* context) : demuxer_(file), context_(context) {
    describe(demuxer_, info_);
    const AVCodec* codec = avcodec_find_decoder(demuxer_.parameters()->codec_id);
    if (!codec)
      throw FormatError(Reason::kUnsupportedVariant, 0,
                        "this libavcodec has no decoder for " + info_.codec);
    decoder_.reset(avcodec_alloc_context3(codec));
    packet_.reset(av_packet_alloc());
    frame_.reset(av_frame_alloc());
    if (!decoder_ || !packet_ || !frame_) throw std::bad_alloc();
    int rc = avcodec_parameters_to_context(decoder_.get(), demuxer_.parameters());
    decoder_->thread_count = 1;  // the batch runs files on all cores already
    if (rc >= 0) rc = avcodec_open2(decoder_.get(), codec, nullptr);
    if (rc < 0)
      throw FormatError(
          Reason::kUnsupportedVariant, 0,
          "libavcodec cannot open the " + info_.codec + " decoder: " + av_error_text(rc));
    time_base_ = demuxer_.format()->streams[demuxer_.video()]->time_base;
  }

  // The next frame (valid until the next call), or nullptr after the last.
  const AVFrame* next() {
    av_frame_unref(frame_.get());
    for (;;) {
      const int rc = avcodec_receive_frame(decoder_.get(), frame_.get());
      if (rc >= 0) {
        if (decoded_with_damage(frame_.get()))
          throw FormatError(Reason::kCorrupt, 0,
                            "frame " + std::to_string(info_.frames) +
                                " is damaged (its decoder found errors it would have concealed)");
        ++info_.frames;
        const int64_t pts = frame_->best_effort_timestamp;
        info_.times.push_back(pts == AV_NOPTS_VALUE ? -1.0 : double(pts) * av_q2d(time_base_));
        return frame_.get();
      }
      if (rc == AVERROR_EOF || (rc == AVERROR(EAGAIN) && flushed_)) return nullptr;
      if (rc != AVERROR(EAGAIN))
        throw FormatError(
            Reason::kCorrupt, 0,
            "frame " + std::to_string(info_.frames) + " does not decode: " + av_error_text(rc));
      feed();
    }
  }

  ImageRgb8 rgb(const AVFrame* frame) { return rgb_.convert(frame); }
  const VideoFrames& info() const { return info_; }

 private:
  // Sends the decoder the next video packet, or the end of the stream.
  void feed() {
    for (;;) {
      if (context_ && context_->out_of_time())
        throw FormatError(Reason::kLimitExceeded, 0, "the time budget ran out while decoding");
      int rc = av_read_frame(demuxer_.format(), packet_.get());
      if (rc == AVERROR_EOF) {
        avcodec_send_packet(decoder_.get(), nullptr);  // flush the frames it still holds
        flushed_ = true;
        return;
      }
      if (rc < 0)
        throw FormatError(Reason::kCorrupt, 0, "libav stopped reading: " + av_error_text(rc));
      const bool video = packet_->stream_index == demuxer_.video();
      if (video) {
        ++info_.packets;
        rc = avcodec_send_packet(decoder_.get(), packet_.get());
      }
      av_packet_unref(packet_.get());
      if (rc < 0)
        throw FormatError(Reason::kCorrupt, 0,
                          "video packet " + std::to_string(info_.packets) +
                              " does not decode: " + av_error_text(rc));
      if (video) return;
    }
  }

  Demuxer demuxer_;
  const Context* context_;
  VideoFrames info_;
  std::unique_ptr<AVCodecContext, CodecDeleter> decoder_;
  std::unique_ptr<AVPacket, PacketDeleter> packet_;
  std::unique_ptr<AVFrame, FrameDeleter> frame_;
  RgbConverter rgb_;
  AVRational time_base_{1, 1};
  bool flushed_ = false;
};

}  // namespace

VideoFrames decode_frames(ByteView file, uint32_t step, uint32_t max_samples,
                          const std::function<void(int64_t number, const ImageRgb8&)>& sample,
                          const Context* context) {
  step = std::max(step, 1u);
  FrameReader reader(file, context);
  uint32_t sampled = 0;
  for (int64_t n = 0; const AVFrame* frame = reader.next(); ++n)
    if (n % step == 0 && sampled < max_samples) {
      sample(n, reader.rgb(frame));
      ++sampled;
    }
  return reader.info();
}

GateResult frame_gate(ByteView reference, ByteView candidate, double floor, uint32_t samples,
                      double tile_margin, const Context* context) {
  GateResult result;
  const int64_t packets = probe_video(reference).packets;
  const int64_t step = samples == 0 ? 1 : std::max<int64_t>(1, (packets + samples - 1) / samples);
  FrameReader ref(reference, context), cand(candidate, context);
  int64_t worst_tile_frame = -1;
  double score_sum = 0;
  std::string problem;
  for (int64_t n = 0;; ++n) {
    const AVFrame* a = ref.next();
    const AVFrame* b = cand.next();
    if (!a || !b) {
      while (a && ref.next()) {
      }
      while (b && cand.next()) {
      }
      if (a || b)
        problem = "the frame count changed from " + std::to_string(ref.info().frames) + " to " +
                  std::to_string(cand.info().frames);
      break;
    }
    const double ta = ref.info().times.back(), tb = cand.info().times.back();
    if (std::abs(ta - tb) > kTimeTolerance_s) {
      problem = fmt::format("frame {} shows at {:.4f} s instead of {:.4f} s", n, tb, ta);
      break;
    }
    if (n % step != 0 || (samples != 0 && result.compared >= samples)) continue;
    if (a->width != b->width || a->height != b->height) {
      problem = "frame " + std::to_string(n) + " differs in size from the reference's";
      break;
    }
    const Ssimulacra2Result s = floor_score(ref.rgb(a), cand.rgb(b));
    ++result.compared;
    score_sum += s.score;
    if (s.score < result.worst || result.worst_frame < 0)
      result.worst = s.score, result.worst_frame = n;
    if (s.worst_tile_score < result.worst_tile)
      result.worst_tile = s.worst_tile_score, worst_tile_frame = n;
  }
  if (problem.empty() && result.compared == 0) problem = "no frame to compare";
  if (result.compared) result.mean = score_sum / double(result.compared);
  // Every sampled frame is measured, so that the figures name the worst one, not the first.
  if (problem.empty() && result.worst < floor)
    problem = fmt_score("frame", result.worst_frame, result.worst, floor);
  if (problem.empty() && result.worst_tile < floor - tile_margin)
    problem =
        fmt_score("a tile of frame", worst_tile_frame, result.worst_tile, floor - tile_margin);
  result.problem = problem;
  result.passes = problem.empty();
  return result;
}

}  // namespace lighten::media
