// Motion-JPEG frames inside AVI chunks: where each JPEG image (one per field) starts and ends,
// and the standard Huffman tables that MJPEG frames may leave out.
#pragma once

#include <cstddef>
#include <vector>

#include "core/bytes.h"

namespace lighten::video {

struct JpegImageSpan {
  size_t begin = 0;  // offset of SOI within the chunk
  size_t end = 0;    // just past EOI
  size_t first_sos = 0;
  bool has_dht = false;  // a DHT segment comes before the first scan
  uint32_t height = 0;   // the frame header's number of lines (0: none before the scan)
};

// The JPEG images a video chunk holds (interlaced MJPEG stores two fields), back to back or with
// zero or 0xFF padding between them, or an empty list when the chunk does not start with a
// well-formed JPEG. Padding and the bytes after the last EOI are not part of any image.
std::vector<JpegImageSpan> split_mjpeg_chunk(ByteView chunk);

// Whether ffmpeg may decode an image from the chunk's bytes outside `images` (its split): an SOS
// marker there, where ffmpeg goes on looking. It reads a chunk it cannot split from the start;
// after a whole frame's EOI it stops, and so after the second field of an interlaced one, which
// it knows by an image shorter than 3/4 of `stream_height` (0: unknown, every tail is read).
bool holds_unwalked_scan(ByteView chunk, const std::vector<JpegImageSpan>& images,
                         uint32_t stream_height);

// The image with the standard tables of ITU T.81 K.3 inserted before its first scan: the tables
// decoders assume when an MJPEG frame has no DHT (AVI1 / OpenDML MJPEG).
Bytes with_standard_huffman_tables(ByteView image, const JpegImageSpan& span);

}  // namespace lighten::video
