// Motion-JPEG frames as ffmpeg-based readers (OpenCV, decord, torchvision) see them: each AVI
// chunk handed to libavcodec's MJPEG decoder as the AVI demuxer hands it (both fields of an
// interlaced frame in one packet), converted to RGB as frame_gate.h does. The decoder keeps
// what the stream's earlier chunks defined (Huffman tables, for one), as theirs does.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/bytes.h"
#include "formats/media/av_io.h"
#include "formats/media/rgb_converter.h"
#include "quality/image.h"

namespace lighten::media {

class MjpegChunkDecoder {
 public:
  // The stream's size and fourcc as its AVI header states them (the demuxer passes both on).
  // `strict`: damage the decoder would conceal (an error in a scan, which it skips, showing what
  // it decoded before) is an error here, as the readers then show another picture than libjpeg.
  MjpegChunkDecoder(uint32_t width, uint32_t height, uint32_t codec_tag, bool strict = false);
  // Throws FormatError when libavcodec cannot decode the chunk to a picture.
  ImageRgb8 decode(ByteView chunk);
  // The same without the picture: whether it decodes (throws as decode does).
  void check(ByteView chunk) { (void)decode_picture(chunk); }

 private:
  const AVFrame* decode_picture(ByteView chunk);

  std::unique_ptr<AVCodecContext, CodecDeleter> decoder_;
  std::unique_ptr<AVPacket, PacketDeleter> packet_;
  std::unique_ptr<AVFrame, FrameDeleter> frame_;
  std::vector<uint8_t> buffer_;  // the chunk with the zero padding libavcodec reads past its end
  RgbConverter rgb_;
};

}  // namespace lighten::media
