// Frames of a video as ffmpeg-based readers (OpenCV, decord, torchvision) see them: decoded by
// libavcodec and converted to 8-bit RGB by libswscale; and the per-frame SSIMULACRA2 gate of a
// candidate video against its reference. The measuring half of lighten's video re-encodes (issue
// 7), usable on any video libav reads, Motion-JPEG AVI included.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/bytes.h"
#include "quality/image.h"

namespace lighten {
class Context;
}

namespace lighten::media {

struct VideoFrames {
  std::string codec;  // libavcodec's name: "h264", "mjpeg", ...
  uint32_t width = 0, height = 0;
  std::string pixel_format;  // "yuv420p", ... ("yuvj420p" reads as "yuv420p" at full range)
  bool full_range = false;   // samples use 0..255, not 16..235 (tagged, or a yuvj format)
  int field_order = 0;       // the video's AVFieldOrder: progressive, top or bottom field first
  int64_t packets = 0;       // of the first video stream, as demuxed
  int64_t frames = 0;        // decoded
  int64_t longest_gop = 0;   // the most video packets from a keyframe up to the next, or the end
  // Every stream of the file, "video h264 568x320" / "audio aac" / "data none", in order.
  std::vector<std::string> streams;
  // How long each stream says it is (negative: not stated) and how many packets the demuxer
  // reads of it, in the order of `streams`; and which of them is the video probed.
  struct StreamLength {
    double seconds = -1;
    int64_t packets = 0;
  };
  std::vector<StreamLength> lengths;
  int video_stream = -1;
  // The container's tags (libavformat's metadata dictionary), in its order.
  std::vector<std::pair<std::string, std::string>> tags;
  double duration_s = 0;   // of the file, as the container states it
  bool encrypted = false;  // a stream carries encryption (CENC) information
  std::string marker;      // an earlier re-encode's container tag "lighten" (or 3GP box), if any
  // What a re-encode would lose or misjudge, "" when nothing: "HDR video (PQ transfer)",
  // "stereo 3D signalling", "chapters", "a data track ('mebx': ...)", ...
  std::string uncarried;
  // decode_frames only: every decoded frame's presentation time in seconds, in output order.
  std::vector<double> times;
};

// Whether a stream's AVFieldOrder says its frames are two fields (top or bottom first).
bool interlaced(int field_order);

// Demuxes only (no decoding): the first video stream's codec, size and packet count.
VideoFrames probe_video(ByteView file);

// Decodes every frame of the first video stream of `file` (an AVI, MP4, MOV, ... in memory),
// packet by packet with one decoded frame held at a time, and hands frames 0, step, 2 step, ...
// as RGB to `sample`, at most `max_samples` of them. Throws FormatError when libav cannot open
// or decode the file, or when `context` runs out of time.
VideoFrames decode_frames(ByteView file, uint32_t step, uint32_t max_samples,
                          const std::function<void(int64_t number, const ImageRgb8&)>& sample,
                          const Context* context = nullptr);

struct GateResult {
  bool passes = false;
  double worst = 100;  // lowest whole-frame SSIMULACRA2 of the compared frames
  double mean = 100;   // their mean
  double worst_tile = 100;
  int64_t worst_frame = -1;
  size_t compared = 0;
  std::string problem;  // why not, when !passes
};

// Walks `reference` and `candidate` side by side, one decoded frame of each in memory: the frame
// counts must match, every frame must show at the same time (within 1.5 ms), and up to
// `samples` evenly spaced frames (every frame when 0) are scored: each must reach `floor` over
// the whole frame and `floor - tile_margin` on its worst 256-pixel tile. Throws FormatError as
// decode_frames does.
GateResult frame_gate(ByteView reference, ByteView candidate, double floor, uint32_t samples,
                      double tile_margin, const Context* context = nullptr);

}  // namespace lighten::media
