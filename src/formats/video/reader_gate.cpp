#include "formats/video/reader_gate.h"

#include "core/errors.h"
#include "quality/floor_score.h"

namespace lighten::video {

ReaderGate::ReaderGate(const AviStream& stream) {
  try {
    reference_decoder_ =
        std::make_unique<media::MjpegChunkDecoder>(stream.width, stream.height, stream.compression);
    candidate_decoder_ =
        std::make_unique<media::MjpegChunkDecoder>(stream.width, stream.height, stream.compression);
  } catch (const FormatError&) {
    reference_decoder_.reset();
  }
}

bool ReaderGate::take_reference(ByteView chunk) {
  reference_.reset();
  if (!reference_decoder_) return false;
  try {
    reference_ = reference_decoder_->decode(chunk);
  } catch (const FormatError&) {
    return false;
  }
  return true;
}

Ssimulacra2Result ReaderGate::score(ByteView candidate) {
  if (!reference_) throw FormatError(Reason::kCorrupt, 0, "the original frame does not decode");
  const ImageRgb8 image = candidate_decoder_->decode(candidate);
  if (image.width != reference_->width || image.height != reference_->height)
    throw FormatError(Reason::kCorrupt, 0, "the frame decodes to another size");
  return floor_score(*reference_, image);
}

void ReaderGate::note_written(ByteView chunk) {
  if (!reference_decoder_) return;
  try {
    (void)candidate_decoder_->decode(chunk);
  } catch (const FormatError&) {
    // The readers would not decode it either; the next frame's candidates are scored as they come.
  }
}

double ReaderGate::first_floor(double floor) const {
  // The search lands a little above its floor, frame scores wander: a small margin over the gap.
  constexpr double kGapSlack = 0.3;
  if (!gap_ || *gap_ <= 0) return floor;
  return floor + *gap_ + kGapSlack;
}

}  // namespace lighten::video
