// PNG predictors for Flate image XObjects: the rows an image's samples form, and a re-encoding
// that filters each row the way a PNG encoder would, for the optimiser to keep when smaller.
#pragma once

#include <qpdf/QPDFObjectHandle.hh>

#include <optional>

#include "codecs/deflate.h"
#include "core/bytes.h"

namespace lighten::pdf {

// How an image's decoded stream is laid out in rows, and the predictor it was encoded with.
struct ImageRows {
  int colors = 0;               // samples per pixel, 1-4
  int bits = 0;                 // bits per sample: 8 or 16
  uint32_t columns = 0;         // pixels per row (/Width)
  uint32_t rows = 0;            // /Height
  bool tiff_predictor = false;  // /Predictor 2 undone before re-filtering
  size_t row_bytes() const { return size_t(columns) * size_t(colors) * size_t(bits / 8); }
};

// The rows of a /FlateDecode image with 8- or 16-bit samples, 1-4 colours and either no predictor
// or the TIFF one; nullopt for anything else (masks, PNG predictors already, odd parameters).
std::optional<ImageRows> predictable_image(QPDFObjectHandle image);

// The image's samples (`decoded` is the inflated stream) PNG-filtered per row and deflated;
// nullopt when the data does not hold exactly `rows` rows.
std::optional<Bytes> png_predicted(const Bytes& decoded, const ImageRows& layout, int effort,
                                   const OutOfTime& out_of_time);

// The /DecodeParms the PNG-predicted data needs.
QPDFObjectHandle png_decode_parms(const ImageRows& layout);

}  // namespace lighten::pdf
