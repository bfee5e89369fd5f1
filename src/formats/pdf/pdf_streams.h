// The stream pass of the PDF optimiser: embedded JPEGs go back to the engine like files on disk,
// Flate streams are re-deflated (images also tried with PNG predictors, and in compact mode as
// JPEGs), unfiltered streams are deflated. Each new encoding is kept only when smaller.
#pragma once

#include <qpdf/QPDFObjectHandle.hh>

#include <map>
#include <set>
#include <string>

#include "core/format.h"
#include "formats/pdf/pdf_image_facts.h"

namespace lighten::pdf {

struct StreamTally {
  int jpegs = 0;
  int redeflated = 0;
  int predicted = 0;  // Flate images now with PNG predictors
  int photos = 0;     // Flate images now JPEGs (compact mode)
  int compressed = 0;
  uint64_t expanded = 0;  // decoded bytes so far, against the expansion budget
};

// The policy a JPEG image of the PDF is optimised and verified under: lossless where a viewer
// shows other colours than the perceptual search scores (a device space the document redefines
// among them), where its exact samples matter (a mask, or an image with a colour key), its
// sampling kept under a /ColorTransform,
// and its samples read through the image's colour space.
Policy jpeg_image_policy(QPDFObjectHandle stream, ByteView jpeg, const Policy& document,
                         const ImageFacts& facts);

class StreamOptimizer {
 public:
  // `facts`: masks, which keep their exact samples, and redefined device spaces.
  StreamOptimizer(Context& context, std::map<QPDFObjGen, std::string> names, ImageFacts facts,
                  bool pdfa, Outcome& outcome)
      : context_(context),
        names_(std::move(names)),
        facts_(std::move(facts)),
        pdfa_(pdfa),
        outcome_(outcome) {}

  void run(QPDFObjectHandle stream);
  const StreamTally& tally() const { return tally_; }

 private:
  std::string name_of(QPDFObjectHandle stream) const;
  void charge(size_t bytes);
  size_t budget_left() const;
  void jpeg(QPDFObjectHandle stream);
  void flate(QPDFObjectHandle stream);
  void unfiltered(QPDFObjectHandle stream);
  // Replaces the stream's data with the smallest encoding of `decoded` (its bytes with the
  // stream's filters undone, predictors kept) when smaller than `current` bytes.
  void keep_smallest(QPDFObjectHandle stream, size_t current, const Bytes& decoded, bool filtered);

  Context& context_;
  std::map<QPDFObjGen, std::string> names_;
  ImageFacts facts_;
  bool pdfa_;
  Outcome& outcome_;
  StreamTally tally_;
};

}  // namespace lighten::pdf
