// libav over lighten's buffers: an opened demuxer reading from memory, libav errors as text,
// and owners for libav's objects. Shared by the frame gate and the re-encoder.
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libswscale/swscale.h>
}

#include <algorithm>
#include <cstdarg>
#include <cstring>
#include <mutex>
#include <new>
#include <string>

#include "core/bytes.h"
#include "core/errors.h"

namespace lighten::media {

// The last error a muxer logged on this thread: libav's return codes say little there (the MP4
// muxer returns a bare -1, which reads "Operation not permitted", for several AMR frames in one
// packet), its log says what went wrong.
inline std::string& last_muxer_error() {
  thread_local std::string message;
  return message;
}

inline void keep_muxer_errors(void* object, int level, const char* format, va_list args) {
  if (level > AV_LOG_ERROR || !object) return;
  const AVClass* c = *static_cast<AVClass**>(object);
  if (!c) return;
  const AVClassCategory category = c->get_category ? c->get_category(object) : c->category;
  if (category != AV_CLASS_CATEGORY_MUXER) return;
  char line[512];
  int prefix = 0;
  av_log_format_line2(nullptr, level, format, args, line, sizeof line, &prefix);
  std::string& kept = last_muxer_error();
  kept = line;
  while (!kept.empty() && (kept.back() == '\n' || kept.back() == ' ')) kept.pop_back();
}

// libav writes its messages (and libx264 its statistics) to stderr by default; lighten reports
// through Outcomes, so they are silenced once for the process (libav's log is global), all but
// muxers' errors, kept for the reasons they explain.
inline void silence_libav_log() {
  static std::once_flag once;
  std::call_once(once, [] { av_log_set_callback(keep_muxer_errors); });
}

inline std::string av_error_text(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, text, sizeof text);
  return text;
}

// The file's bytes as libav's input: reads and seeks within the buffer, never past it.
struct MemoryInput {
  ByteView bytes;
  int64_t pos = 0;

  static int read(void* opaque, uint8_t* buf, int size) {
    auto* in = static_cast<MemoryInput*>(opaque);
    const int64_t left = int64_t(in->bytes.size()) - in->pos;
    if (left <= 0) return AVERROR_EOF;
    const int n = int(std::min<int64_t>(left, size));
    std::memcpy(buf, in->bytes.data() + in->pos, size_t(n));
    in->pos += n;
    return n;
  }

  static int64_t seek(void* opaque, int64_t offset, int whence) {
    auto* in = static_cast<MemoryInput*>(opaque);
    const int64_t size = int64_t(in->bytes.size());
    if (whence & AVSEEK_SIZE) return size;
    whence &= ~AVSEEK_FORCE;
    const int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? in->pos : size;
    if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END) return AVERROR(EINVAL);
    if (offset < -base || offset > size - base) return AVERROR(EINVAL);
    in->pos = base + offset;
    return in->pos;
  }
};

// Where lighten marks a file it re-encoded (av_reencode.h): the container tag "lighten" in
// MP4/MOV/3GP; in AVI, whose muxer writes only the RIFF INFO tags it knows, appended to the
// software tag (ISFT, which the AVI demuxer reads as "software") after this prefix.
inline constexpr const char* kMarkerKey = "lighten";
inline constexpr const char* kAviMarkerPrefix = "lighten: ";

// The marker of an earlier re-encode, or "" when the file has none.
inline std::string marker_of(const AVFormatContext* format) {
  if (const AVDictionaryEntry* e = av_dict_get(format->metadata, kMarkerKey, nullptr, 0))
    return e->value;
  for (const char* key : {"software", "encoder"}) {
    const AVDictionaryEntry* e = av_dict_get(format->metadata, key, nullptr, 0);
    const std::string text = e ? e->value : "";
    const size_t at = text.find(kAviMarkerPrefix);
    if (at != std::string::npos) return text.substr(at + std::strlen(kAviMarkerPrefix));
  }
  return "";
}

// An opened demuxer over a buffer and the index of its first video stream; frees all on exit.
class Demuxer {
 public:
  explicit Demuxer(ByteView file) : input_{file} {
    silence_libav_log();
    try {
      open();
    } catch (...) {
      release();
      throw;
    }
  }
  ~Demuxer() { release(); }
  Demuxer(const Demuxer&) = delete;
  Demuxer& operator=(const Demuxer&) = delete;

  AVFormatContext* format() const { return format_; }
  int video() const { return video_; }
  const AVCodecParameters* parameters() const { return format_->streams[video_]->codecpar; }

 private:
  void open() {
    constexpr int kBufferSize = 1 << 16;
    auto* buffer = static_cast<uint8_t*>(av_malloc(kBufferSize));
    if (!buffer) throw std::bad_alloc();
    io_ = avio_alloc_context(buffer, kBufferSize, 0, &input_, &MemoryInput::read, nullptr,
                             &MemoryInput::seek);
    if (!io_) {
      av_free(buffer);
      throw std::bad_alloc();
    }
    format_ = avformat_alloc_context();
    if (!format_) throw std::bad_alloc();
    format_->pb = io_;
    format_->flags |= AVFMT_FLAG_CUSTOM_IO;
    int rc = avformat_open_input(&format_, nullptr, nullptr, nullptr);  // frees format_ on error
    if (rc < 0)
      throw FormatError(Reason::kCorrupt, 0, "libav cannot open the file: " + av_error_text(rc));
    rc = avformat_find_stream_info(format_, nullptr);
    if (rc < 0)
      throw FormatError(Reason::kCorrupt, 0,
                        "libav cannot read the file's streams: " + av_error_text(rc));
    video_ = av_find_best_stream(format_, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
    if (video_ < 0) throw FormatError(Reason::kUnsupportedVariant, 0, "the file has no video");
  }

  // With AVFMT_FLAG_CUSTOM_IO libavformat leaves the I/O context to its owner.
  void release() {
    avformat_close_input(&format_);
    if (io_) av_freep(&io_->buffer);
    avio_context_free(&io_);
  }

  MemoryInput input_;
  AVIOContext* io_ = nullptr;
  AVFormatContext* format_ = nullptr;
  int video_ = -1;
};

// A decoder hides damage (a macroblock it cannot decode is concealed from its neighbours) and
// flags the frame: re-encoded, the concealed frame would decode cleanly, the damage made
// permanent and no longer detectable. Such a frame is damage.
inline bool decoded_with_damage(const AVFrame* frame) {
  return frame->decode_error_flags != 0 || (frame->flags & AV_FRAME_FLAG_CORRUPT) != 0;
}

struct PacketDeleter {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct FrameDeleter {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct CodecDeleter {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct ScaleDeleter {
  void operator()(SwsContext* s) const { sws_freeContext(s); }
};

}  // namespace lighten::media
