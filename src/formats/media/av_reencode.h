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
  // When set, written as the container tag "lighten" (MP4/MOV/3GP), so that a second run can
  // tell the file was re-encoded already and leave it alone.
  std::string marker;
};

// The same-codec encoder for a decoded codec name at `value`; nullopt when lighten has none.
std::optional<EncoderChoice> same_codec_encoder(std::string_view codec, int value);

// The re-encoded file, in the container it came in (MP4, MOV and 3GP by their brand, AVI).
// Throws FormatError when libav cannot read, decode, encode or write it, when the file has
// chapters, or when `context` runs out of time.
Bytes reencode_video(ByteView input, const EncoderChoice& choice, const Context* context = nullptr);

}  // namespace lighten::media
