#include "formats/media/mjpeg_decoder.h"

#include <limits>

#include "core/errors.h"

namespace lighten::media {

MjpegChunkDecoder::MjpegChunkDecoder(uint32_t width, uint32_t height, uint32_t codec_tag,
                                     bool strict) {
  silence_libav_log();
  const AVCodec* codec = avcodec_find_decoder(AV_CODEC_ID_MJPEG);
  if (!codec)
    throw FormatError(Reason::kUnsupportedVariant, 0, "this libavcodec has no MJPEG decoder");
  decoder_.reset(avcodec_alloc_context3(codec));
  packet_.reset(av_packet_alloc());
  frame_.reset(av_frame_alloc());
  if (!decoder_ || !packet_ || !frame_) throw std::bad_alloc();
  constexpr uint32_t kIntMax = uint32_t(std::numeric_limits<int>::max());
  decoder_->width = int(std::min(width, kIntMax));
  decoder_->height = int(std::min(height, kIntMax));
  decoder_->codec_tag = codec_tag;
  decoder_->thread_count = 1;  // the batch runs files on all cores already
  if (strict) decoder_->err_recognition |= AV_EF_EXPLODE;
  const int rc = avcodec_open2(decoder_.get(), codec, nullptr);
  if (rc < 0)
    throw FormatError(Reason::kUnsupportedVariant, 0,
                      "libavcodec cannot open its MJPEG decoder: " + av_error_text(rc));
}

ImageRgb8 MjpegChunkDecoder::decode(ByteView chunk) { return rgb_.convert(decode_picture(chunk)); }

const AVFrame* MjpegChunkDecoder::decode_picture(ByteView chunk) {
  if (chunk.size() > size_t(std::numeric_limits<int>::max()) - AV_INPUT_BUFFER_PADDING_SIZE)
    throw FormatError(Reason::kLimitExceeded, 0, "the frame is too large for libavcodec");
  buffer_.assign(chunk.begin(), chunk.end());
  buffer_.resize(chunk.size() + AV_INPUT_BUFFER_PADDING_SIZE, 0);
  av_packet_unref(packet_.get());
  packet_->data = buffer_.data();
  packet_->size = int(chunk.size());
  packet_->flags = AV_PKT_FLAG_KEY;
  int rc = avcodec_send_packet(decoder_.get(), packet_.get());
  packet_->data = nullptr;
  packet_->size = 0;
  if (rc < 0)
    throw FormatError(Reason::kCorrupt, 0,
                      "libavcodec cannot decode the frame: " + av_error_text(rc));
  av_frame_unref(frame_.get());
  rc = avcodec_receive_frame(decoder_.get(), frame_.get());
  if (rc < 0)
    throw FormatError(Reason::kCorrupt, 0,
                      "libavcodec made no picture of the frame: " + av_error_text(rc));
  if (decoder_->err_recognition & AV_EF_EXPLODE && decoded_with_damage(frame_.get()))
    throw FormatError(Reason::kCorrupt, 0, "libavcodec finds the frame damaged");
  return frame_.get();
}

}  // namespace lighten::media
