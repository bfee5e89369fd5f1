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
  // The Huffman tables a scan uses before the image defines them, one bit each for DC 0-3
  // (bits 0-3) and AC 0-3 (bits 4-7): decoders take those from elsewhere (libjpeg the K.3
  // tables, ffmpeg the image it decoded before). All of them for an image without DHT.
  uint8_t huffman_from_elsewhere = 0;
  // A component's quantisation table is not defined before its scan: libjpeg cannot decode the
  // image, ffmpeg decodes it with the table of the image it decoded before.
  bool quantisation_from_elsewhere = false;
  // The Huffman tables the image defines (bits as above), and of those the ones it leaves
  // defined with other than K.3's: what a decoder that carries tables from image to image
  // (ffmpeg) holds after it, where one that assumes K.3 (libjpeg) differs. Tables that do not
  // parse count as others.
  uint8_t huffman_defined = 0, huffman_not_standard = 0;
  uint32_t height = 0;  // the frame header's number of lines (0: none before the scan)
};

// The JPEG images a video chunk holds (interlaced MJPEG stores two fields), back to back or with
// zero or 0xFF padding between them, or an empty list when the chunk does not start with a
// well-formed JPEG. Padding and the bytes after the last EOI are not part of any image.
std::vector<JpegImageSpan> split_mjpeg_chunk(ByteView chunk);

// Whether the chunk's first image carries lighten's quality marker (APP15 "LIGHTEN\0") before
// its first scan: an earlier perceptual run requantised it.
bool carries_quality_marker(ByteView chunk);

// Whether ffmpeg may decode an image from the chunk's bytes outside `images` (its split): an SOS
// marker there, where ffmpeg goes on looking. It reads a chunk it cannot split from the start;
// after a whole frame's EOI it stops, and so after the second field of an interlaced one, which
// it knows by an image shorter than 3/4 of `stream_height` (0: unknown, every tail is read).
bool holds_unwalked_scan(ByteView chunk, const std::vector<JpegImageSpan>& images,
                         uint32_t stream_height);

// Capture cards that pad fields record each field's sizes in its APP0 "AVI1" segment: FieldSize
// (the image and the padding after it) and FieldSizeLessPadding (the image), which a reader may
// use to find the second field. `images[k]` records them when those are not zero.
bool records_field_sizes(ByteView chunk, const JpegImageSpan& image);
// Whether every image that records sizes records those of its place in the chunk, in either byte
// order, FieldSize with or without the bytes up to the next image (or the chunk's end).
bool recorded_field_sizes_hold(ByteView chunk, const std::vector<JpegImageSpan>& images);
// Sets the sizes the AVI1 segment of `image`, written for `images[k]` of `chunk`, records to its
// own size, as the original's did for the original. False when the original's did not follow
// that layout or `image` has no such segment.
bool carry_field_sizes(ByteView chunk, const std::vector<JpegImageSpan>& images, size_t k,
                       Bytes& image);

// `image` with the field sizes its AVI1 segment records set to those `original`'s records: what
// the JPEG verifier compares (it holds metadata byte-identical); `image` itself when either has
// none.
Bytes with_original_field_sizes(ByteView original, ByteView image);
// Whether `image` records the field sizes `original` records (both none counts as the same).
bool same_field_sizes(ByteView original, ByteView image);

// The Huffman tables ITU T.81 K.3 gives (DC 0 and 1, AC 0 and 1), as bits of
// JpegImageSpan::huffman_from_elsewhere.
inline constexpr uint8_t kStandardHuffmanTables = 0x33;

// The image with the K.3 tables of those it takes from elsewhere (huffman_from_elsewhere, as far
// as K.3 has them) inserted before its first scan: the tables decoders assume when an MJPEG frame
// leaves them out (AVI1 / OpenDML MJPEG).
Bytes with_standard_huffman_tables(ByteView image, const JpegImageSpan& span);

}  // namespace lighten::video
