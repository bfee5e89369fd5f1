// One Motion-JPEG frame chunk of an AVI through the JPEG optimiser: its images (one per field)
// optimised, written frames carrying the tables they need, and in the perceptual modes the
// frame checked as ffmpeg-based readers decode it.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "core/context.h"
#include "formats/video/mjpeg.h"
#include "formats/video/reader_gate.h"

namespace lighten::video {

// What the frames of one file came to, for the Outcome's detail and warnings.
struct FrameTally {
  size_t frames = 0;    // MJPEG data chunks seen
  size_t changed = 0;   // frames with an image written smaller
  size_t no_dht = 0;    // images that relied on the standard tables
  size_t not_jpeg = 0;  // chunks that do not parse as JPEG images (kept as they are)
  // Frames kept whole: a field lighten cannot read, or field sizes it cannot follow (AVI1).
  size_t kept_whole = 0;
  std::map<Reason, size_t> kept;  // images the JPEG optimiser left alone, by reason
  // Perceptual modes: the SSIMULACRA2 of every changed image, as its verification measured it.
  std::optional<double> worst_score;
  double score_sum = 0;
  size_t scored = 0;
  size_t pixels_kept = 0;  // changed images whose pixels stayed identical
  // An image was written differently: every later image must carry its own Huffman tables.
  bool rewritten = false;
  // Huffman tables (bits as JpegImageSpan's) input images left defined with other than K.3's:
  // ffmpeg decodes a later image that leaves one of them out with those, libjpeg with K.3.
  uint8_t tables_not_standard = 0;
  size_t tables_spelled_out = 0;  // kept images given the standard tables for that reason
  // Perceptual modes, requantised frames as libavcodec decodes them (ReaderGate).
  std::optional<double> reader_worst;
  double reader_sum = 0;
  size_t reader_scored = 0;
  size_t raised = 0;    // frames done again at a raised floor to pass the readers' view
  size_t lossless = 0;  // frames that passed only with their pixels kept
};

// Where a frame chunk is, for messages and for the rule on fields ffmpeg reads.
struct FrameSite {
  size_t offset = 0;           // of the chunk in the file
  uint32_t stream_height = 0;  // the video stream's frame height (0: unknown)
  std::string name;            // "frame 12 (00dc at byte 4096)"
  // An earlier perceptual run requantised frames of this file: the rest were left as they are
  // on purpose (a frame's search depends on the frames before it), and get lossless treatment.
  bool lossless_only = false;
  // An earlier attempt at this file handed the frame's images over already (charged against the
  // expansion budget then).
  bool handed_over_before = false;
  // libavcodec, which ffmpeg-based readers (OpenCV, decord, torchvision) use, finds the frame
  // damaged where libjpeg may read it without a word (a run of zeros past a block's end): its
  // images are kept as they are, as a frame written anew from libjpeg's reading would show
  // those readers another picture.
  bool damaged_for_readers = false;
};

// Optimises the JPEG images of one frame chunk (`images`: its split_mjpeg_chunk) into `out`;
// returns true when `out` differs from the chunk. `gate` (perceptual modes; nullptr otherwise)
// has taken this chunk as its reference. Throws FormatError for a frame whose unreadable part
// would decode wrongly after a rewrite.
bool optimize_frame(ByteView chunk, const std::vector<JpegImageSpan>& images, const FrameSite& site,
                    Context& context, ReaderGate* gate, FrameTally& tally, Bytes& out);

}  // namespace lighten::video
