// libjpeg-turbo coefficient I/O. Every libjpeg object gets its own error manager and jmp_buf
// (no globals, safe on many threads); libjpeg errors and warnings become FormatError.
#pragma once

// clang-format off
#include <cstddef>
#include <cstdio>  // jpeglib.h needs size_t and FILE first
#include <jpeglib.h>
// clang-format on

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/bytes.h"
#include "core/context.h"
#include "quality/image.h"

namespace lighten {
class Context;
}

namespace lighten::jpeg {

// How a reader takes a JPEG's colour space. kAsMarked: as libjpeg infers it from the JFIF and
// Adobe markers, else from the component identifiers ('R', 'G', 'B' reads as RGB, anything else
// as YCbCr; four components as CMYK). The JPEGs lighten writes for itself (candidates, row
// samples, 4:2:0 re-encodings) carry no markers, so they are read as the image they came from: a
// YCbCr photo whose components are numbered 'R', 'G', 'B' and whose JFIF marker says YCbCr would
// otherwise come back as RGB, and a YCCK one as CMYK. JCS_YCbCr or JCS_RGB overrides libjpeg's
// inference for three components where that is one of the two, JCS_CMYK or JCS_YCCK for four;
// other values leave it as marked.
constexpr J_COLOR_SPACE kAsMarked = JCS_UNKNOWN;

// The DCT coefficients of one JPEG, read once and written as often as needed.
class CoefficientImage {
 public:
  // Reads every coefficient. Throws FormatError (kCorrupt, kTruncated, kUnsupportedVariant,
  // kLimitExceeded). Any libjpeg warning other than skipped junk between markers is an error:
  // a damaged file is left alone, never silently "repaired". `context` (may be null) is asked
  // for the time budget while decoding. `color_space` (see kAsMarked) overrides libjpeg's guess.
  CoefficientImage(ByteView jpeg, const Context* context, J_COLOR_SPACE color_space = kAsMarked);
  ~CoefficientImage();
  CoefficientImage(const CoefficientImage&) = delete;
  CoefficientImage& operator=(const CoefficientImage&) = delete;

  const jpeg_decompress_struct& info() const;
  jpeg_decompress_struct* decompressor();
  jvirt_barray_ptr* arrays();
  // False when a progressive input never sent some coefficient bits: libjpeg then smooths the
  // missing AC coefficients while decoding, so a complete re-encoding would decode otherwise.
  bool progression_complete() const;
  // Row `row` of component `ci`'s blocks (width_in_blocks entries).
  const JBLOCK* block_row(int ci, JDIMENSION row);
  // The same row, writable: requantisation rewrites the coefficients in place.
  JBLOCK* mutable_block_row(int ci, JDIMENSION row);
  // Quantisation tables (per slot, natural order) that writing uses instead of the source's;
  // set together with coefficients requantised to them.
  void set_output_tables(std::vector<std::array<uint16_t, 64>> tables);
  const std::vector<std::array<uint16_t, 64>>& output_tables() const;

  struct State;
  State* state() { return state_.get(); }

 private:
  std::unique_ptr<State> state_;
};

// The frame (dimensions, colour space, components, sampling, block grid), each component's
// source quantisation table and every DCT coefficient, hashed: two images with equal
// fingerprints decode to the same pixels.
DecodedFingerprint fingerprint_coefficients(CoefficientImage& image);

struct SymbolCounts;  // huffman_stats.h

struct WriteOptions {
  enum class Scans { kSequential, kSimpleProgressive, kScript };
  Scans scans = Scans::kSequential;
  std::vector<jpeg_scan_info> script;  // for kScript
  unsigned restart_interval = 0;       // in MCUs; 0 = none
  // kSequential: symbol counts already made with this restart interval (else counted here).
  const SymbolCounts* counts = nullptr;
};

// Writes the coefficients as a JPEG with optimal Huffman tables and no markers of libjpeg's own
// (no JFIF, no Adobe): SOI, DQT, SOF, DHT/DRI/SOS..., EOI.
Bytes write_coefficients(CoefficientImage& image, const WriteOptions& options);

// A run of whole MCU rows of the image (rows of `max_v_samp_factor` blocks of the luma).
struct McuRows {
  JDIMENSION first = 0, count = 0;
};
// Writes only the given MCU rows, stacked in order, as a JPEG of the same width, components,
// sampling and tables (sequential, optimal Huffman tables, no markers): a sample of the image
// that the perceptual search can score for a fraction of the cost. Every band must lie inside
// the image's whole MCU rows (a partial last row is never taken).
Bytes write_mcu_rows(CoefficientImage& image, const std::vector<McuRows>& bands);

// Encodes 8-bit RGB pixels as a sequential YCbCr JPEG with 4:2:0 chroma and the given
// quantisation tables (natural order), libjpeg's accurate DCT and no markers of its own: the
// source of a pixel-domain re-encode. The components carry the source's identifiers (Adobe files
// number them 0, 1, 2 where libjpeg writes 1, 2, 3). Throws FormatError.
Bytes encode_pixels_420(const ImageRgb8& rgb, const std::array<uint16_t, 64>& luma,
                        const std::array<uint16_t, 64>& chroma,
                        const std::array<int, 3>& component_ids);

// Decoded samples with libjpeg's default settings (RGB, gray or CMYK, interleaved).
struct PixelImage {
  unsigned width = 0, height = 0, components = 0;
  SampleBuffer samples;
};
PixelImage decode_pixels(ByteView jpeg, J_COLOR_SPACE color_space = kAsMarked);
// The same into `out`, whose buffer is reused when it has the room (the perceptual search
// decodes many candidates of one size).
void decode_pixels_into(ByteView jpeg, PixelImage& out, J_COLOR_SPACE color_space = kAsMarked);

}  // namespace lighten::jpeg
