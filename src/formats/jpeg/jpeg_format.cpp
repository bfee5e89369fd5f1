#include "formats/jpeg/jpeg_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <string>

#include "formats/jpeg/coefficients.h"
#include "formats/jpeg/exif_thumbnail.h"
#include "formats/jpeg/markers.h"
#include "formats/jpeg/metadata.h"
#include "formats/jpeg/mpf.h"
#include "formats/jpeg/perceptual.h"
#include "formats/jpeg/restarts.h"
#include "formats/jpeg/scans.h"
#include "formats/jpeg/secondary_images.h"
#include "formats/jpeg/subsampling.h"

namespace lighten {
namespace jpeg {
namespace {

// A requantised output is also compared with the lossless one where it could lose to it: its
// image data is under this size (a second write costs little; a lossless rewrite of a small file
// can save a third of it, its Huffman tables being a large share), or keeps more than this
// fraction of the input's (the search kept the tables near the source's; optimised Huffman
// codes alone save 5-12 % of a camera photo's image data). Elsewhere coarser coefficients save
// far more than new tables and the marker cost.
constexpr size_t kCompareLosslessBelow = 64 * 1024;
constexpr double kCompareLosslessKept = 0.85;
// What a requantised output's image data must save beyond the lossless output's to be kept:
// less is not worth the quality it gives up (at --target-score 95, a q85 photo requantised to
// 95.6 came out 8 bytes smaller than its lossless output of 782,684). Image data, not the file:
// a small image among large ICC profiles still gains from requantising.
constexpr double kRequantisedMinGain = 0.01;

// One output: its bytes, what its scans are, and its image data alone (no metadata, trailing
// data or marker).
struct WrittenJpeg {
  Bytes bytes;
  std::string detail;
  size_t image_bytes = 0;
};

// The primary image's bytes less its metadata segments.
size_t image_bytes(const Layout& layout) {
  size_t metadata = 0;
  for (const Segment& s : layout.segments)
    if (s.is_metadata()) metadata += s.length;
  return layout.image_end - metadata;
}

// Where libjpeg's frame header ends in its own output (its segments are well formed).
size_t end_of_frame_header(const Bytes& core) {
  ByteReader r(core, 2);
  for (;;) {
    if (r.u8() != 0xFF) throw FormatError(Reason::kInternalError, r.offset(), "bad libjpeg output");
    uint8_t m = r.u8();
    uint16_t len = r.u16be();
    if (len < 2) throw FormatError(Reason::kInternalError, r.offset(), "bad libjpeg output");
    r.skip(len - 2u);
    if (is_sof(m)) return r.offset();
  }
}

// SOI, metadata from before the frame, libjpeg's DQT and SOF, metadata from after the frame,
// the scans and EOI, then the trailing bytes; MPF offsets follow the primary's size and, with
// `moved` (where each secondary image lies in `trailing`), the secondary images.
Bytes assemble(const Bytes& core, const MetadataPlan& plan, ByteView trailing,
               const std::optional<MpfIndex>& mpf, size_t old_image_end,
               const std::vector<SecondaryImage>* moved) {
  const size_t sof_end = end_of_frame_header(core);
  size_t total = core.size() + trailing.size();
  for (const auto& s : plan.before_sof) total += s.bytes.size();
  for (const auto& s : plan.after_sof) total += s.bytes.size();
  // Sized once and filled by position (GCC 12 warns falsely on repeated vector::insert).
  Bytes out(total);
  size_t at = 0;
  auto put = [&](const uint8_t* p, size_t n) {
    if (n) std::memcpy(out.data() + at, p, n);
    at += n;
  };
  std::optional<size_t> mpf_at;
  auto put_segments = [&](const std::vector<PlannedSegment>& segments) {
    for (const auto& s : segments) {
      if (mpf && s.source_offset == mpf->segment_offset) mpf_at = at;
      put(s.bytes.data(), s.bytes.size());
    }
  };
  put(core.data(), 2);
  put_segments(plan.before_sof);
  put(core.data() + 2, sof_end - 2);
  put_segments(plan.after_sof);
  put(core.data() + sof_end, core.size() - sof_end);
  const size_t new_image_end = at;
  put(trailing.data(), trailing.size());
  if (mpf && mpf_at) {
    std::vector<SecondaryImage> placed;
    if (moved) {
      placed = *moved;
      for (SecondaryImage& image : placed) image.begin += new_image_end, image.end += new_image_end;
    }
    rewrite_mpf(out, *mpf, *mpf_at, old_image_end, new_image_end, moved ? &placed : nullptr);
  }
  return out;
}

}  // namespace
}  // namespace jpeg

Outcome optimize_jpeg(ByteView input, Context& context) {
  using namespace jpeg;
  const Policy& policy = context.policy();
  Outcome outcome;
  outcome.kind = Kind::kJpeg;
  outcome.bytes_in = input.size();
  outcome.bytes_out = input.size();
  if (input.empty()) throw FormatError(Reason::kEmpty, 0, "empty file");
  if (input.size() > policy.limits.max_input_bytes)
    throw FormatError(Reason::kLimitExceeded, 0, "input larger than the policy's limit");

  Layout layout = parse_layout(input);
  if (carries_content_credentials(layout))
    throw FormatError(Reason::kSigned, 0,
                      "C2PA Content Credentials (APP11) sign the file's bytes: any rewrite "
                      "would break them");
  if (const std::optional<std::string> why = exif_pointing_past_itself(layout, policy.metadata))
    throw FormatError(Reason::kUnsupportedVariant, 0, *why);
  const uint64_t pixels = uint64_t(layout.frame.width) * layout.frame.height;
  if (pixels > policy.limits.max_pixels)
    throw FormatError(Reason::kLimitExceeded, 0,
                      std::to_string(layout.frame.width) + "x" +
                          std::to_string(layout.frame.height) +
                          " pixels exceed the policy's limit");
  std::optional<MpfIndex> mpf = parse_mpf(input, layout);
  MetadataPlan plan = plan_metadata(input, layout, policy.metadata);

  CoefficientImage image(input, &context);
  if (!image.progression_complete())
    throw FormatError(Reason::kUnsupportedVariant, 0,
                      "progressive JPEG that never sends some coefficients (decoders fill "
                      "them in differently)");
  if (context.out_of_time())
    throw FormatError(Reason::kLimitExceeded, 0, "time budget spent after decoding");
  // Lossless outputs are checked against this, so the verifier need not decode the input again.
  if (policy.mode == Mode::kLossless && policy.verify == VerifyLevel::kCoefficients)
    context.note_fingerprint(input, fingerprint_coefficients(image));
  // One interval is written for every scan, or the intervals that keep one density (restarts.h):
  // an input whose scans restart otherwise (cjpeg -restart N writes one per scan, DRI 0 may end
  // restarts before a scan) would have them changed, so `keep` leaves it as it is.
  const std::vector<unsigned> intervals = scan_restart_intervals(layout);
  const bool restarts_in_input =
      std::any_of(intervals.begin(), intervals.end(), [](unsigned n) { return n != 0; });
  const std::optional<unsigned> input_interval = input_restart_interval(layout, image.info());
  if (policy.jpeg_restarts == RestartPolicy::kKeep && !input_interval)
    throw FormatError(Reason::kUnsupportedVariant, 0,
                      fmt::format("its scans restart at different intervals ({} MCUs), where "
                                  "lighten writes one for all: --jpeg-restarts keep leaves it as "
                                  "it is (drop writes it without restarts)",
                                  fmt::join(intervals, ", ")));
  const unsigned restart =
      policy.jpeg_restarts == RestartPolicy::kKeep ? input_interval.value_or(0) : 0;
  // Previews, stereo views and gain maps after the primary image, each through the engine;
  // kept as they are where the XMP written records their lengths (strip drops it: a second run
  // then finds none, and must find the images as the first left them).
  const bool lengths_recorded =
      mpf && policy.metadata != MetadataPolicy::kStrip && xmp_has_container_directory(layout);
  const std::optional<RewrittenTrailing> secondary =
      mpf && !lengths_recorded ? optimise_secondary_images(input, layout, *mpf, context)
                               : std::nullopt;
  const ByteView trailing = secondary ? ByteView(secondary->bytes) : layout.trailing(input);
  // The EXIF thumbnail, also through the engine, in the segments every output is written with.
  const ThumbnailSavings thumbnails = optimise_exif_thumbnails(plan, context);
  // The output of one set of coefficients with the input's metadata (and, when requantised,
  // the marker with its score).
  auto write = [&](CoefficientImage& coefficients, ScanMode scan_mode,
                   const PerceptualResult& chosen, const MetadataPlan& metadata) {
    MetadataPlan with_marker = metadata;
    if (chosen.requantized && policy.quality_marker == QualityMarker::kWrite)
      with_marker.before_sof.push_back(
          {quality_marker_segment(quality_floor(policy), chosen.score), SIZE_MAX});
    ScanResult scans = choose_scans(coefficients, scan_mode, policy.effort, restart, &context);
    return WrittenJpeg{assemble(scans.jpeg, with_marker, trailing, mpf, layout.image_end,
                                secondary ? &secondary->images : nullptr),
                       std::move(scans.detail), scans.jpeg.size()};
  };

  // Perceptual: the input's coefficients requantised and, for a 4:4:4, 4:2:2 or 4:4:0 photo (or RGB
  // planes) whose YCbCr 4:2:0 re-encoding leaves room under the floor, that re-encoding searched
  // too; the smaller wins.
  PerceptualResult perceptual, subsampled;
  std::optional<ImageRgb8> reference;  // the input's decode, shared by the searches
  std::optional<SubsampledSource> source_420;
  SubsamplingPlan subsampling = SubsamplingPlan::kFullOnly;
  std::optional<double> alone;  // what the 4:2:0 re-encoding costs by itself
  const std::optional<ProfileColour> colour =
      policy.mode == Mode::kLossless ? std::nullopt
                                     : metric_colour(layout, image.info().num_components, policy);
  if (policy.mode != Mode::kLossless && policy.jpeg_subsampling == SubsamplingPolicy::kAllow420 &&
      !has_quality_marker(layout) &&
      !profile_unlike_decode(layout, image.info().num_components, policy) &&
      (alone = reencoding_score(image, input, reference, colour ? &*colour : nullptr)))
    subsampling = plan_subsampling(*alone, quality_floor(policy));
  // Searched alone, the re-encoding lands far under the source's quality: its chroma is then
  // kept finer (subsampling.h).
  if (subsampling != SubsamplingPlan::kFullOnly)
    source_420 = subsampled_source(image, input, &context, reference,
                                   subsampling == SubsamplingPlan::kSubsampledOnly
                                       ? ReencodedChroma::kHalfSteps
                                       : ReencodedChroma::kSourceSteps);
  SourceSearches searches =
      search_sources(image, source_420 ? &*source_420 : nullptr, subsampling, input, layout, policy,
                     &context, reference, colour ? &*colour : nullptr);
  perceptual = std::move(searches.own);
  subsampled = std::move(searches.subsampled);
  if (subsampled.requantized)
    subsampled.detail = fmt::format(
        "re-encoded from pixels as {}4:2:0 (alone {:.1f}){}, {}",
        source_420->from_rgb ? "YCbCr " : "", alone.value_or(0.0),
        source_420->finest_tables.empty() ? "" : " with chroma at half the source's steps",
        subsampled.detail);
  if (!searches.race.empty()) {
    for (PerceptualResult* r : {&perceptual, &subsampled})
      if (r->requantized) r->detail = searches.race + ", " + r->detail;
  }
  // RGB planes become YCbCr: the Adobe segment that said RGB says so. (Without one the output
  // would read as RGB; adobe_rgb asks for one and every metadata policy keeps it.)
  MetadataPlan recoded = plan;
  if (subsampled.requantized && source_420->from_rgb && set_adobe_transform(recoded, 1) == 0)
    subsampled.requantized = false;
  // The input's own coefficients are written unless only the 4:2:0 search ran and passed.
  WrittenJpeg written;
  const CoefficientImage* written_image = &image;
  if (perceptual.requantized || !subsampled.requantized)
    written = write(image, policy.jpeg_scans, perceptual, plan);
  if (subsampled.requantized) {
    // The re-encoding is sequential: the input's own scan mode is asked for by name.
    const ScanMode mode = policy.jpeg_scans != ScanMode::kKeep ? policy.jpeg_scans
                          : image.info().progressive_mode      ? ScanMode::kProgressive
                                                               : ScanMode::kBaseline;
    auto other = write(*source_420->image, mode, subsampled, recoded);
    if (!perceptual.requantized || other.bytes.size() < written.bytes.size()) {
      written = std::move(other);
      perceptual = subsampled;
      written_image = source_420->image.get();
    }
  }
  // Without the marker a re-run knows the output only by its tables: one whose tables stay
  // mostly the source's would be requantised again, losing quality a second time. The marker
  // may be gone even where it was written (a tool that strips metadata: `jpegtran -copy none`
  // took a text image from 85.1 to 83.3 and then 79.7 in visually-lossless), so such an output
  // is not written under any marker policy.
  const bool unproven = perceptual.requantized && !tables_prove_requantised(*written_image, policy);
  // New tables and the marker can outweigh what coarser coefficients save (a 1x1 image came out
  // 37 bytes larger than losslessly, a 24 kB one 30 bytes): such an image is also written from
  // the input's own coefficients, and the requantised output kept only if it is clearly smaller.
  // The search's images are let go first: the second decode then adds nothing to the peak.
  if (perceptual.requantized &&
      (unproven ||
       ((written.image_bytes < kCompareLosslessBelow ||
         double(written.image_bytes) > kCompareLosslessKept * double(image_bytes(layout))) &&
        !context.out_of_time()))) {
    reference.reset();
    source_420.reset();
    CoefficientImage source(input, &context);
    WrittenJpeg lossless = write(source, policy.jpeg_scans, PerceptualResult{}, plan);
    const bool smaller = written.bytes.size() < lossless.bytes.size();
    if (unproven || !smaller ||
        double(written.image_bytes) > (1 - kRequantisedMinGain) * double(lossless.image_bytes)) {
      perceptual = PerceptualResult{
          .detail = unproven ? "lossless only (the requantised tables would stay mostly the "
                               "source's: a re-run that found no quality marker could not tell "
                               "them from a source's and would requantise again)"
                    : !smaller
                        ? fmt::format("lossless only (smaller than requantised, {} bytes)",
                                      written.bytes.size())
                        : fmt::format("lossless only (requantised image data would be {} bytes "
                                      "smaller, under {:g} %: not worth the quality)",
                                      int64_t(lossless.image_bytes) - int64_t(written.image_bytes),
                                      100 * kRequantisedMinGain)};
      written = std::move(lossless);
    }
  }
  Bytes& bytes = written.bytes;
  const std::string& scan_detail = written.detail;
  // The verifier may take this score for an output that decodes to the same coefficients.
  if (perceptual.requantized)
    context.note_scored(input, {perceptual.fingerprint, perceptual.score, perceptual.worst_tile,
                                policy.jpeg_shown_through});

  outcome.bytes = std::move(bytes);
  outcome.bytes_out = outcome.bytes.size();
  outcome.action = Action::kReplaced;
  outcome.reason = Reason::kOptimized;
  outcome.detail = scan_detail;
  if (!perceptual.detail.empty()) outcome.detail = perceptual.detail + ", " + outcome.detail;
  if (perceptual.requantized) outcome.quality.ssimulacra2 = perceptual.score;
  if (image.info().arith_code) outcome.detail += ", from arithmetic coding";
  if (restart == 0 && restarts_in_input) outcome.detail += ", restarts dropped";
  if (plan.dropped > 0)
    outcome.detail += ", " + std::to_string(plan.dropped) + " metadata segment" +
                      (plan.dropped == 1 ? "" : "s") + " dropped";
  if (secondary)
    outcome.detail += fmt::format(", {} of {} secondary images (MPF) {} bytes smaller",
                                  secondary->optimised, secondary->images.size(), secondary->saved);
  if (lengths_recorded)
    outcome.detail +=
        ", secondary images (MPF) kept as they are (the XMP container directory "
        "records their lengths)";
  if (thumbnails.optimised > 0)
    outcome.detail += fmt::format(", EXIF thumbnail {} bytes smaller", thumbnails.saved);
  if (layout.junk_bytes > 0)
    outcome.detail += fmt::format(", {} junk bytes between markers dropped", layout.junk_bytes);
  if (layout.fill_bytes > 0)
    outcome.detail += fmt::format(", {} fill bytes before markers dropped", layout.fill_bytes);
  outcome.warnings = std::move(plan.warnings);
  return outcome;
}

}  // namespace lighten
