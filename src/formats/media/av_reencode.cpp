#include "formats/media/av_reencode.h"

extern "C" {
#include <libavutil/opt.h>
}

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/context.h"
#include "formats/media/av_enums.h"
#include "formats/media/av_io.h"
#include "formats/media/mp4_boxes.h"

namespace lighten::media {
namespace {

// libav's output into a growing buffer it may seek in (the MP4 muxer patches sizes at the end).
struct MemoryOutput {
  Bytes bytes;
  int64_t pos = 0;

  static int write(void* opaque, uint8_t* buf, int size) {
    auto* out = static_cast<MemoryOutput*>(opaque);
    const size_t end = size_t(out->pos) + size_t(size);
    if (end > out->bytes.size()) out->bytes.resize(end);
    std::memcpy(out->bytes.data() + out->pos, buf, size_t(size));
    out->pos = int64_t(end);
    return size;
  }

  static int64_t seek(void* opaque, int64_t offset, int whence) {
    auto* out = static_cast<MemoryOutput*>(opaque);
    const int64_t size = int64_t(out->bytes.size());
    if (whence & AVSEEK_SIZE) return size;
    whence &= ~AVSEEK_FORCE;
    const int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? out->pos : size;
    if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END) return AVERROR(EINVAL);
    if (base + offset < 0) return AVERROR(EINVAL);
    out->pos = base + offset;
    return out->pos;
  }
};

// libav's errors as reasons: data it cannot read is damage; anything else is a variant or a
// combination lighten does not handle.
void check(int rc, const std::string& what, const std::string& logged = {}) {
  if (rc >= 0) return;
  throw FormatError(rc == AVERROR_INVALIDDATA ? Reason::kCorrupt : Reason::kUnsupportedVariant, 0,
                    what + " (libav: " + (logged.empty() ? av_error_text(rc) : logged) + ")");
}

// A muxer call's result, checked with what the muxer logged during that call.
template <typename Call>
void check_muxer(Call call, const std::string& what) {
  last_muxer_error().clear();
  const int rc = call();
  check(rc, what, std::exchange(last_muxer_error(), {}));
}

// x264's AVX-512 code reads memory it has not written (with B-frames and macroblock-tree rate
// control, Debian 12's x264 0.164): the same input then encodes to other bytes from run to run,
// and the quality search goes other ways. Below AVX-512 it encodes alike every time (checked
// under glibc's MALLOC_PERTURB_), so on CPUs with it x264 is held to AVX2 and what comes with
// it, plus the 64-byte cache line x264 would have detected there.
const char* x264_cpu_flags() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") &&
      __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
      __builtin_cpu_supports("bmi2"))
    return "AVX2,Cache64";
#endif
  return nullptr;
}

// x264's name for an H.264 profile the input was coded in; nullptr for one it has no name for
// (Extended), which is left to the encoder.
const char* x264_profile(int profile) {
  switch (profile) {
    case FF_PROFILE_H264_BASELINE:
    case FF_PROFILE_H264_CONSTRAINED_BASELINE:
      return "baseline";
    case FF_PROFILE_H264_MAIN:
      return "main";
    case FF_PROFILE_H264_HIGH:
      return "high";
    case FF_PROFILE_H264_HIGH_10:
    case FF_PROFILE_H264_HIGH_10_INTRA:
      return "high10";
    case FF_PROFILE_H264_HIGH_422:
    case FF_PROFILE_H264_HIGH_422_INTRA:
      return "high422";
    case FF_PROFILE_H264_HIGH_444_PREDICTIVE:
    case FF_PROFILE_H264_HIGH_444_INTRA:
      return "high444";
    default:
      return nullptr;
  }
}

// The muxer that writes what the demuxer read: MOV, 3GP and MP4 share one demuxer and differ
// by brand.
const char* muxer_for(const AVFormatContext* in) {
  const std::string name = in->iformat->name;
  if (name == "avi") return "avi";
  if (name.find("mp4") == std::string::npos)
    throw FormatError(Reason::kUnsupportedVariant, 0,
                      "lighten re-encodes video in MP4, MOV, 3GP and AVI only, not " + name);
  const AVDictionaryEntry* brand = av_dict_get(in->metadata, "major_brand", nullptr, 0);
  const std::string b = brand ? brand->value : "";
  if (b.rfind("qt", 0) == 0) return "mov";
  if (b.rfind("3g2", 0) == 0) return "3g2";
  if (b.rfind("3g", 0) == 0) return "3gp";
  return "mp4";
}

// The muxer's context over a MemoryOutput; frees all on exit.
class Muxer {
 public:
  Muxer(const char* format_name, MemoryOutput& sink) {
    check(avformat_alloc_output_context2(&format_, nullptr, format_name, nullptr),
          "libavformat has no " + std::string(format_name) + " muxer");
    constexpr int kBufferSize = 1 << 16;
    auto* buffer = static_cast<uint8_t*>(av_malloc(kBufferSize));
    if (buffer) {
      io_ = avio_alloc_context(buffer, kBufferSize, 1, &sink, nullptr, &MemoryOutput::write,
                               &MemoryOutput::seek);
      if (!io_) av_free(buffer);
    }
    if (!io_) {
      avformat_free_context(format_);
      throw std::bad_alloc();
    }
    format_->pb = io_;
    format_->flags |= AVFMT_FLAG_CUSTOM_IO;
  }
  ~Muxer() {
    avformat_free_context(format_);
    if (io_) av_freep(&io_->buffer);
    avio_context_free(&io_);
  }
  Muxer(const Muxer&) = delete;
  Muxer& operator=(const Muxer&) = delete;
  AVFormatContext* format() const { return format_; }

 private:
  AVFormatContext* format_ = nullptr;
  AVIOContext* io_ = nullptr;
};

// ffmpeg's rule for stream copies: the source's tag stays when the muxer has no tag table, maps
// it to the same codec, or knows no tag for the codec at all (timed metadata such as 'mebx').
bool keeps_tag(const AVOutputFormat* muxer, const AVCodecParameters* p) {
  unsigned int tag = 0;
  return !muxer->codec_tag || av_codec_get_id(muxer->codec_tag, p->codec_tag) == p->codec_id ||
         !av_codec_get_tag2(muxer->codec_tag, p->codec_id, &tag);
}

void copy_stream_properties(const AVStream* in, AVStream* out) {
  out->time_base = in->time_base;
  out->disposition = in->disposition;
  out->avg_frame_rate = in->avg_frame_rate;
  out->r_frame_rate = in->r_frame_rate;
  out->sample_aspect_ratio = in->sample_aspect_ratio;
  check(av_dict_copy(&out->metadata, in->metadata, 0), "copying stream metadata");
  for (int k = 0; k < in->nb_side_data; ++k) {
    const AVPacketSideData& sd = in->side_data[k];
    uint8_t* data = av_stream_new_side_data(out, sd.type, sd.size);
    if (!data) throw std::bad_alloc();
    std::memcpy(data, sd.data, sd.size);
  }
}

}  // namespace

std::optional<EncoderChoice> same_codec_encoder(std::string_view codec, int value) {
  if (codec == "h264") return EncoderChoice{"libx264", "crf", value, {}};
  if (codec == "hevc") return EncoderChoice{"libx265", "crf", value, {}};
  if (codec == "mpeg4") return EncoderChoice{"mpeg4", "qscale", value, {}};
  // DivX 3 ("DIV3"), in AVI files of the early 2000s; libavcodec names its encoder "msmpeg4".
  if (codec == "msmpeg4v3") return EncoderChoice{"msmpeg4", "qscale", value, {}};
  if (codec == "msmpeg4v2") return EncoderChoice{"msmpeg4v2", "qscale", value, {}};
  return std::nullopt;
}

bool converts_to_h264(std::string_view codec) {
  return codec == "mpeg4" || codec == "msmpeg4v1" || codec == "msmpeg4v2" || codec == "msmpeg4v3" ||
         codec == "h263";
}

std::optional<EncoderChoice> encoder_for(std::string_view codec, bool to_h264, int value) {
  if (to_h264 && converts_to_h264(codec)) return EncoderChoice{"libx264", "crf", value, {}};
  return same_codec_encoder(codec, value);
}

Bytes reencode_video(ByteView input, const EncoderChoice& choice, const Context* context) {
  Demuxer demuxer(input);
  AVFormatContext* in = demuxer.format();
  if (in->nb_chapters > 0)
    throw FormatError(Reason::kUnsupportedVariant, 0, "chapters are not carried over yet");
  const int v = demuxer.video();
  const AVStream* in_video = in->streams[v];

  const AVCodec* decoder_codec = avcodec_find_decoder(in_video->codecpar->codec_id);
  const AVCodec* encoder_codec = avcodec_find_encoder_by_name(choice.encoder.c_str());
  if (!decoder_codec || !encoder_codec)
    throw FormatError(Reason::kModeNotAvailable, 0,
                      "this libavcodec lacks the decoder or the " + choice.encoder + " encoder");
  std::unique_ptr<AVCodecContext, CodecDeleter> dec(avcodec_alloc_context3(decoder_codec));
  std::unique_ptr<AVCodecContext, CodecDeleter> enc(avcodec_alloc_context3(encoder_codec));
  if (!dec || !enc) throw std::bad_alloc();
  check(avcodec_parameters_to_context(dec.get(), in_video->codecpar), "reading the video's codec");
  dec->thread_count = 1;
  check(avcodec_open2(dec.get(), decoder_codec, nullptr), "opening the video decoder");

  MemoryOutput sink;
  Muxer muxer(muxer_for(in), sink);
  AVFormatContext* out = muxer.format();
  check(av_dict_copy(&out->metadata, in->metadata, 0), "copying the file's metadata");

  const AVCodecParameters* p = in_video->codecpar;
  enc->width = p->width;
  enc->height = p->height;
  enc->pix_fmt = AVPixelFormat(p->format);
  enc->sample_aspect_ratio = p->sample_aspect_ratio;
  enc->color_range = named_or(p->color_range, AVCOL_RANGE_NB, AVCOL_RANGE_UNSPECIFIED);
  enc->color_primaries = named_or(p->color_primaries, AVCOL_PRI_NB, AVCOL_PRI_UNSPECIFIED);
  enc->color_trc = named_or(p->color_trc, AVCOL_TRC_NB, AVCOL_TRC_UNSPECIFIED);
  enc->colorspace = named_or(p->color_space, AVCOL_SPC_NB, AVCOL_SPC_UNSPECIFIED);
  enc->chroma_sample_location =
      named_or(p->chroma_location, AVCHROMA_LOC_NB, AVCHROMA_LOC_UNSPECIFIED);
  enc->field_order = named_or(p->field_order, AV_FIELD_BT + 1, AV_FIELD_UNKNOWN);
  enc->time_base = in_video->time_base;
  // MPEG-4 part 2 and its kin count time in 16 bits: a 90 kHz track is encoded on the finest
  // clock they take (each frame's time off by under 8 microseconds), and muxed on its own.
  const bool sixteen_bit_clock = choice.encoder == "mpeg4" || choice.encoder.starts_with("msmpeg4");
  if (sixteen_bit_clock && enc->time_base.den > 65535) enc->time_base = AVRational{1, 65535};
  enc->framerate = in_video->avg_frame_rate;
  enc->thread_count = 1;  // deterministic output, and the batch runs files on all cores
  if (choice.keyframe_interval > 0) enc->gop_size = choice.keyframe_interval;
  if (out->oformat->flags & AVFMT_GLOBALHEADER) enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  // AVI stores no presentation times, only the order of the frames: readers show each frame
  // as many frames late as the decoder holds it back for reordering. The input's delay (one
  // frame for Xvid with B-frames, two for x264's B-pyramid) is kept, so that every frame shows
  // when it did (the gate checks every frame's time).
  if (std::string(out->oformat->name) == "avi")
    enc->max_b_frames = std::clamp(in_video->codecpar->video_delay, 0, 2);
  AVDictionary* options = nullptr;
  // H.264 stays in its profile and level: a Baseline video (no B-frames, no CABAC) is what
  // hardware and embedded players that decode nothing else can play.
  if (choice.encoder == "libx264" && p->codec_id == AV_CODEC_ID_H264) {
    if (const char* profile = x264_profile(p->profile))
      av_dict_set(&options, "profile", profile, 0);
    if (p->level > 0) enc->level = p->level;
  }
  if (choice.encoder == "libx264")
    if (const char* flags = x264_cpu_flags())
      av_dict_set(&options, "x264-params", (std::string("asm=") + flags).c_str(), 0);
  if (choice.knob == "qscale") {
    enc->flags |= AV_CODEC_FLAG_QSCALE;
    enc->global_quality = choice.value * FF_QP2LAMBDA;
  } else {
    av_dict_set_int(&options, choice.knob.c_str(), choice.value, 0);
    // libx265 logs to stderr by itself, past libav's log level.
    if (choice.encoder == "libx265") av_dict_set(&options, "x265-params", "log-level=none", 0);
  }
  const int opened = avcodec_open2(enc.get(), encoder_codec, &options);
  av_dict_free(&options);
  check(opened, "opening the " + choice.encoder + " encoder");

  for (unsigned i = 0; i < in->nb_streams; ++i) {
    AVStream* os = avformat_new_stream(out, nullptr);
    if (!os) throw std::bad_alloc();
    if (int(i) == v) {
      check(avcodec_parameters_from_context(os->codecpar, enc.get()), "describing the video");
      // The input's tag (hvc1 rather than hev1: Apple players take only hvc1) when it names
      // the same codec in this container.
      const uint32_t tag = in_video->codecpar->codec_tag;
      if (tag && out->oformat->codec_tag &&
          av_codec_get_id(out->oformat->codec_tag, tag) == os->codecpar->codec_id)
        os->codecpar->codec_tag = tag;
    } else {
      check(avcodec_parameters_copy(os->codecpar, in->streams[i]->codecpar), "copying a stream");
      // As ffmpeg's stream copy does: the AVI demuxer reports a VBR MP3 stream's frame size
      // as its block alignment, which the muxer would write as a CBR header, its length then
      // unknown to readers.
      AVCodecParameters* q = os->codecpar;
      if (q->codec_id == AV_CODEC_ID_MP3 &&
          (q->block_align == 1 || q->block_align == 1152 || q->block_align == 576))
        q->block_align = 0;
      if (!keeps_tag(out->oformat, os->codecpar))
        os->codecpar->codec_tag = 0;  // the muxer picks its own tag for the same codec
    }
    copy_stream_properties(in->streams[i], os);
  }
  // The MOV/MP4 muxers write metadata in a style of their own; the input's 'meta' boxes are put
  // back byte for byte afterwards (with_metadata_of), and lighten's marker goes into a user data
  // box of its own, which they keep.
  AVDictionary* mux_options = nullptr;
  const bool avi = std::string(out->oformat->name) == "avi";
  // A full-range video whose codec has no range flag of its own (MPEG-4 part 2) keeps the
  // range only in MP4's colr atom, which the muxer writes when asked.
  const bool full_range = named_or(in_video->codecpar->color_range, AVCOL_RANGE_NB,
                                   AVCOL_RANGE_UNSPECIFIED) == AVCOL_RANGE_JPEG;
  if (!avi && full_range) av_dict_set(&mux_options, "movflags", "write_colr", 0);
  // The file type stays what it was (an 'mp42' file is not made 'isom', a '3g2a' one '3gp4').
  if (const AVDictionaryEntry* brand = av_dict_get(in->metadata, "major_brand", nullptr, 0);
      brand && !avi)
    av_dict_set(&mux_options, "brand", brand->value, 0);
  last_muxer_error().clear();
  int header = avformat_init_output(out, &mux_options);
  if (header >= 0) {
    // libavformat names itself the file's encoder: the file keeps the tag it had, or none.
    // (The AVI demuxer reads ISFT as "software", its muxer writes "encoder" as ISFT.)
    const AVDictionaryEntry* encoder_tag = av_dict_get(in->metadata, "encoder", nullptr, 0);
    if (!encoder_tag) encoder_tag = av_dict_get(in->metadata, "software", nullptr, 0);
    std::string software = encoder_tag ? encoder_tag->value : "";
    if (!choice.marker.empty() && avi) {
      if (!software.empty()) software += "; ";
      software += kAviMarkerPrefix + choice.marker;
    }
    av_dict_set(&out->metadata, "encoder", software.empty() ? nullptr : software.c_str(), 0);
    header = avformat_write_header(out, &mux_options);
  }
  av_dict_free(&mux_options);
  check(header, "writing the container header", std::exchange(last_muxer_error(), {}));

  std::unique_ptr<AVPacket, PacketDeleter> packet(av_packet_alloc());
  std::unique_ptr<AVPacket, PacketDeleter> encoded(av_packet_alloc());
  std::unique_ptr<AVFrame, FrameDeleter> frame(av_frame_alloc());
  if (!packet || !encoded || !frame) throw std::bad_alloc();
  // Each source frame's duration, by its time, for the packet the encoder makes of it: encoders
  // that hold frames back leave packets without one, and the muxer would then give the last
  // frame of a variable-rate video the duration of the one before it.
  std::map<int64_t, int64_t> frame_durations;
  auto write_encoded = [&](const AVFrame* f) {
    check(avcodec_send_frame(enc.get(), f), "encoding a frame");
    int rc;
    while ((rc = avcodec_receive_packet(enc.get(), encoded.get())) >= 0) {
      encoded->stream_index = v;
      if (const auto it = frame_durations.find(encoded->pts); it != frame_durations.end()) {
        if (encoded->duration <= 0) encoded->duration = it->second;
        frame_durations.erase(it);
      }
      // Frames shown before this packet is decoded have had their packets (bounded memory).
      if (encoded->dts != AV_NOPTS_VALUE)
        frame_durations.erase(frame_durations.begin(), frame_durations.lower_bound(encoded->dts));
      av_packet_rescale_ts(encoded.get(), enc->time_base, out->streams[v]->time_base);
      check_muxer([&] { return av_interleaved_write_frame(out, encoded.get()); },
                  std::string("the ") + out->oformat->name + " muxer refused a packet");
    }
    if (rc != AVERROR(EAGAIN) && rc != AVERROR_EOF) check(rc, "encoding a frame");
  };
  auto decode_and_encode = [&](const AVPacket* pkt) {
    check(avcodec_send_packet(dec.get(), pkt), "decoding a video packet");
    int rc;
    while ((rc = avcodec_receive_frame(dec.get(), frame.get())) >= 0) {
      if (decoded_with_damage(frame.get()))
        throw FormatError(Reason::kCorrupt, 0,
                          "a video frame is damaged (its decoder found errors it would have "
                          "concealed)");
      frame->pts = frame->best_effort_timestamp;  // every frame keeps its own time
      int64_t duration = frame->pkt_duration;
      if (frame->pts != AV_NOPTS_VALUE && av_cmp_q(in_video->time_base, enc->time_base) != 0) {
        frame->pts = av_rescale_q(frame->pts, in_video->time_base, enc->time_base);
        duration = av_rescale_q(duration, in_video->time_base, enc->time_base);
      }
      if (frame->pts != AV_NOPTS_VALUE && duration > 0) frame_durations[frame->pts] = duration;
      frame->pict_type = AV_PICTURE_TYPE_NONE;  // the encoder chooses frame types afresh
      // MPEG-4 part 2 decoders set each frame's quantiser, which a qscale encoder would reuse
      // in place of the chosen one (as ffmpeg does, the chosen one is set on every frame).
      frame->quality = enc->global_quality;
      write_encoded(frame.get());
      av_frame_unref(frame.get());
    }
    if (rc != AVERROR(EAGAIN) && rc != AVERROR_EOF) check(rc, "decoding a video frame");
  };
  int rc;
  while ((rc = av_read_frame(in, packet.get())) >= 0) {
    if (context && context->out_of_time())
      throw FormatError(Reason::kLimitExceeded, 0, "the time budget ran out while re-encoding");
    const int s = packet->stream_index;
    if (s == v) {
      decode_and_encode(packet.get());
    } else {
      av_packet_rescale_ts(packet.get(), in->streams[s]->time_base, out->streams[s]->time_base);
      packet->pos = -1;
      check_muxer([&] { return av_interleaved_write_frame(out, packet.get()); },
                  std::string("the ") + out->oformat->name + " muxer refused a packet");
    }
    av_packet_unref(packet.get());
  }
  if (rc != AVERROR_EOF) check(rc, "reading the input");
  decode_and_encode(nullptr);
  write_encoded(nullptr);
  check_muxer([&] { return av_write_trailer(out); }, "finishing the container");
  if (!choice.marker.empty() && !avi) return with_marker_box(std::move(sink.bytes), choice.marker);
  return std::move(sink.bytes);
}

}  // namespace lighten::media
