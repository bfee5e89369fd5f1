// Perceptual modes: a requantised Motion-JPEG frame scored as ffmpeg-based readers (OpenCV,
// decord, torchvision) will show it. The JPEG optimiser's own gate decodes with libjpeg-turbo,
// whose IDCT and chroma upsampling differ from libavcodec's; on synthetic or flat frames the
// two views of one frame can differ by several points, so the readers' view is checked too.
#pragma once

#include <memory>
#include <optional>

#include "core/bytes.h"
#include "formats/media/mjpeg_decoder.h"
#include "formats/video/avi_file.h"
#include "quality/ssimulacra2.h"

namespace lighten::video {

class ReaderGate {
 public:
  // A stream libavcodec cannot decode gets a gate that never has a reference: its requantised
  // frames then fall back to lossless treatment, since nothing shows what its readers would see.
  explicit ReaderGate(const AviStream& stream);

  // Decodes the stream's next original chunk. Every chunk of the stream goes through here in
  // file order, since the decoder carries state from one to the next as the readers' does.
  // False when libavcodec cannot decode it (the frame then has no reference).
  bool take_reference(ByteView chunk);
  bool has_reference() const { return reference_.has_value(); }

  // SSIMULACRA2 of a candidate for the chunk last taken, as libavcodec decodes it. Throws
  // FormatError when it does not decode.
  Ssimulacra2Result score(ByteView candidate);
  // The chunk written for the frame last taken, where it is not the candidate last scored (one
  // the gate turned down): the candidates' decoder carries tables from frame to frame as the
  // readers' does, so it decodes what the readers will have decoded before the next frame.
  void note_written(ByteView chunk);

  // Frames of one stream are alike: how far the JPEG gate's libjpeg view of a passing frame
  // stood above the readers' view, noted so that the next frame's search starts at a floor
  // raised by that much instead of failing here first.
  void note_gap(double jpeg_view, double reader_view) { gap_ = jpeg_view - reader_view; }
  // The floor the next frame's search should aim at for `floor` in the readers' view.
  double first_floor(double floor) const;

 private:
  std::unique_ptr<media::MjpegChunkDecoder> reference_decoder_, candidate_decoder_;
  std::optional<ImageRgb8> reference_;
  std::optional<double> gap_;
};

}  // namespace lighten::video
