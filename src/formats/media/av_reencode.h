// One re-encode of a video file's first video stream with the same codec at one quality setting,
// everything else carried over: every other stream's packets untouched, container and stream
// metadata, dispositions, stream side data (the display matrix that rotates phone videos), and
// every decoded frame encoded with its own timestamp. The quality search and the gate are the
// caller's (frame_gate.h); this is one candidate.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/bytes.h"

namespace lighten {
class Context;
}

namespace lighten::media {

struct EncoderChoice {
  std::string encoder;  // libavcodec encoder name: "libx264", "libx265", "mpeg4"
  std::string knob;     // "crf" (x264/x265) or "qscale" (MPEG-4 part 2)
  int value = 0;        // higher is coarser for both
  // When set, written as the container tag "lighten" (MP4/MOV/3GP) or appended to the software
  // tag (AVI INFO ISFT, the only free text the AVI muxer writes), so that a second run can tell
  // the file was re-encoded already and leave it alone (av_io.h reads it back).
  std::string marker;
  // The most frames from one keyframe to the next the input has (0: the encoder's default):
  // readers that seek, and loaders that pick frames at random, decode no further than before.
  int keyframe_interval = 0;
};

// The same-codec encoder for a decoded codec name at `value`; nullopt when lighten has none.
std::optional<EncoderChoice> same_codec_encoder(std::string_view codec, int value);

// Whether --video-codec h264 turns this codec into H.264: the older block-DCT codecs whose
// frames are YUV 4:2:0 like H.264's (MPEG-4 part 2, MS-MPEG4, H.263).
bool converts_to_h264(std::string_view codec);

// The encoder the policy asks for: libx264 for a codec that converts_to_h264 when `to_h264`,
// the same codec otherwise; nullopt when lighten re-encodes the codec in neither way.
std::optional<EncoderChoice> encoder_for(std::string_view codec, bool to_h264, int value);

// The re-encoded file, in the container it came in (MP4, MOV and 3GP by their brand, AVI).
// Throws FormatError when libav cannot read, decode, encode or write it, when the file has
// chapters, or when `context` runs out of time.
Bytes reencode_video(ByteView input, const EncoderChoice& choice, const Context* context = nullptr);

}  // namespace lighten::media
