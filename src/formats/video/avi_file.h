// The AVI layer over a RIFF tree: streams from hdrl, where movi is, which chunks are frames and
// which are indexes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/video/riff.h"

namespace lighten::video {

struct AviStream {
  uint32_t type = 0;         // strh fccType: vids, auds, txts, ...
  uint32_t handler = 0;      // strh fccHandler
  uint32_t compression = 0;  // strf biCompression, for video
  uint32_t width = 0, height = 0;
  uint32_t length = 0;  // strh dwLength: frames (video) or samples
  bool mjpeg = false;
  std::string codec() const;  // the fourcc that names the codec, printable
};

enum class IndexKind { kNone, kIdx1, kStandard, kSuper };

struct AviFile {
  RiffTree tree;
  std::vector<AviStream> streams;
  long movi = -1;  // the first RIFF's movi list (what idx1 offsets are relative to)
  bool open_dml = false;

  // The stream a movi data chunk belongs to (its "##xx" id), or -1.
  int stream_of(const RiffChunk& chunk) const;
  // True for a data chunk of a Motion-JPEG video stream.
  bool is_mjpeg_frame(const RiffChunk& chunk) const;
  // The frame height of the stream a data chunk belongs to; 0 when unknown.
  uint32_t frame_height(const RiffChunk& chunk) const;
};

// Parses the RIFF tree and the AVI header lists. Throws FormatError for anything that is not a
// well-formed AVI: no hdrl, no movi, AVIX lists where they do not belong.
AviFile parse_avi(ByteView input);

// What kind of index a leaf chunk is, from its id and, for OpenDML, its header.
IndexKind index_kind(ByteView input, const RiffChunk& chunk);

}  // namespace lighten::video
