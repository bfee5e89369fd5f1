// What the user asks for: one value passed to every optimiser.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lighten {

enum class Mode : uint8_t {
  kLossless,          // decoded pixels and document content bit-identical
  kVisuallyLossless,  // SSIMULACRA2 >= 85 per image
  kHigh,              // >= 80
  kCompact,           // >= 70
};

enum class MetadataPolicy : uint8_t {
  kKeep,   // every metadata byte kept
  kSafe,   // drop comments and editor records; keep what changes display or decoding
  kStrip,  // keep only what changes display or decoding (ICC, orientation, colour transform)
};

enum class ScanMode : uint8_t {
  kKeep,         // baseline stays baseline, progressive stays progressive
  kBaseline,     // always write sequential (baseline) JPEG
  kProgressive,  // always write progressive JPEG
  kSmallest,     // try baseline and several progressive scan scripts, keep the smallest
};

enum class RestartPolicy : uint8_t {
  kKeep,  // keep the input's restart interval
  kDrop,  // write no restart markers (smaller; loses resynchronisation after damage)
};

enum class SubsamplingPolicy : uint8_t {
  kKeep,      // perceptual JPEG keeps the input's chroma sampling
  kAllow420,  // a 4:4:4 / 4:2:2 / 4:4:0 photo may be re-encoded from its pixels as 4:2:0 when
              // that is smaller
};

enum class QualityMarker : uint8_t {
  kWrite,  // perceptual outputs carry a small APP15 "lighten" segment: re-runs stay lossless
  kOmit,   // no marker; re-runs rely on the tables alone (see src/formats/jpeg/perceptual.h),
           // and video, which has no such proof, is not re-encoded
};

enum class VerifyLevel : uint8_t {
  kCoefficients,  // lossless JPEG: re-read the output's DCT coefficients and compare them all
  kPixels,        // also decode both to pixels and compare every sample
};

enum class PlainZipPolicy : uint8_t {
  kLeave,     // plain ZIP and JAR archives stay as they are (some readers check archive hashes)
  kOptimize,  // optimise their entries like a document's
};

enum class PdfVersionPolicy : uint8_t {
  kKeep,   // a PDF keeps its version: below 1.5, no object or cross-reference streams
  kRaise,  // below 1.5 (never PDF/A-1), raise to 1.5 so object and xref streams can be written
};

enum class VideoCodecPolicy : uint8_t {
  kKeep,  // re-encode with the input's own codec
  kH264,  // older codecs (MPEG-4 part 2, MS-MPEG4, ...) may become H.264 in the same container
};

struct Limits {
  uint64_t max_input_bytes = 4ull << 30;     // larger inputs are left alone
  uint64_t max_pixels = 500'000'000;         // per image
  uint32_t max_depth = 4;                    // container nesting
  uint64_t max_expanded_bytes = 8ull << 30;  // what a container may expand to in total
  double max_expansion_ratio = 200.0;        // expanded / compressed, per container
  double time_budget_s = 300.0;              // per top-level file
  // Outputs of inputs larger than this (long videos) are written to an unlinked temporary file
  // mapped into memory ($TMPDIR) rather than held in memory (Outcome::large_output).
  uint64_t large_output_bytes = 256ull << 20;
};

struct Policy {
  Mode mode = Mode::kLossless;
  MetadataPolicy metadata = MetadataPolicy::kKeep;
  ScanMode jpeg_scans = ScanMode::kKeep;
  RestartPolicy jpeg_restarts = RestartPolicy::kKeep;
  SubsamplingPolicy jpeg_subsampling = SubsamplingPolicy::kAllow420;
  VerifyLevel verify = VerifyLevel::kCoefficients;
  PlainZipPolicy plain_zip = PlainZipPolicy::kLeave;
  PdfVersionPolicy pdf_version = PdfVersionPolicy::kKeep;
  // PDFs whose cross-reference table qpdf has to reconstruct are left alone unless this is set.
  bool repair = false;
  // PNG: lossless colour-type and bit-depth reductions (same pixels, fewer channels or bits).
  bool png_reduce = false;
  VideoCodecPolicy video_codec = VideoCodecPolicy::kKeep;
  // An output is kept only if it saves at least this many bytes and this share of the input.
  uint64_t min_gain_bytes = 16;
  double min_gain_ratio = 0.001;
  // Perceptual modes: the SSIMULACRA2 floor every output meets; 0 = the mode's own floor.
  double target_score = 0;
  QualityMarker quality_marker = QualityMarker::kWrite;
  int effort = 5;  // 1 (fastest) .. 9 (smallest); each format maps it to its own trials
  Limits limits;
  // Set by containers: for a JPEG whose container, not its own ICC segments, says how it is shown
  // (a PDF image's /ColorSpace), the ICC profile a viewer reads its samples through; empty for a
  // device space (gray and RGB read as sRGB, CMYK rendered). The perceptual search and verifier
  // read it so. Null: the JPEG's own segments.
  std::shared_ptr<const std::vector<uint8_t>> jpeg_shown_through;
};

// The SSIMULACRA2 floor of the policy: target_score when set, else the mode's (NaN for
// lossless).
double quality_floor(const Policy& policy);

// True when `out` is small enough against `in` to be worth writing under `policy`.
bool worth_keeping(uint64_t in, uint64_t out, const Policy& policy);

}  // namespace lighten
