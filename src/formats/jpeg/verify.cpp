// verify_jpeg: reads the output afresh with its own libjpeg decompressor (nothing shared with
// the writing path) and compares it with the input under the policy's promises.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "formats/jpeg/coefficients.h"
#include "formats/jpeg/exif_thumbnail.h"
#include "formats/jpeg/jpeg_format.h"
#include "formats/jpeg/markers.h"
#include "formats/jpeg/metadata.h"
#include "formats/jpeg/mpf.h"
#include "formats/jpeg/perceptual.h"
#include "formats/jpeg/secondary_images.h"
#include "formats/jpeg/subsampling.h"
#include "quality/floor_score.h"

namespace lighten {
namespace jpeg {
namespace {

// True when `b` is the YCbCr 4:2:0 re-encoding of `a`, a source with chroma finer than 4:2:0's
// or with RGB planes (reencodable_as_420; SubsamplingPolicy::kAllow420).
bool resampled_as_420(CoefficientImage& a, CoefficientImage& b) {
  const auto& y = b.info();
  return reencodable_as_420(a) && y.num_components == 3 && y.jpeg_color_space == JCS_YCbCr &&
         y.comp_info[0].h_samp_factor == 2 && y.comp_info[0].v_samp_factor == 2 &&
         y.comp_info[1].h_samp_factor == 1 && y.comp_info[1].v_samp_factor == 1 &&
         y.comp_info[2].h_samp_factor == 1 && y.comp_info[2].v_samp_factor == 1;
}

// True when `b` is that re-encoding of Adobe RGB planes (adobe_rgb), as YCbCr.
bool recoded_from_rgb(CoefficientImage& a, CoefficientImage& b) {
  return adobe_rgb(a) && resampled_as_420(a, b);
}

// The frame both outputs must keep: dimensions, components, colour space, sampling and block
// grid; with `allow_420`, the YCbCr 4:2:0 re-encoding of a source resampled_as_420 allows, and
// with `recoded` (recoded_from_rgb) RGB planes become YCbCr numbered 1, 2, 3. `check` adds what
// each mode asks of a component's table and coefficients.
template <typename ComponentCheck>
std::optional<std::string> compare_frame(CoefficientImage& a, CoefficientImage& b,
                                         ComponentCheck check, bool allow_420 = false,
                                         bool recoded = false) {
  const auto& x = a.info();
  const auto& y = b.info();
  if (x.image_width != y.image_width || x.image_height != y.image_height)
    return "dimensions differ";
  if (x.num_components != y.num_components) return "component count differs";
  const bool resampled = allow_420 && resampled_as_420(a, b);
  recoded = resampled && recoded;
  if (x.jpeg_color_space != y.jpeg_color_space && !recoded) return "colour space differs";
  for (int ci = 0; ci < x.num_components; ++ci) {
    const auto& p = x.comp_info[ci];
    const auto& q = y.comp_info[ci];
    if ((recoded ? q.component_id != ci + 1 : p.component_id != q.component_id) ||
        (!resampled &&
         (p.h_samp_factor != q.h_samp_factor || p.v_samp_factor != q.v_samp_factor ||
          p.width_in_blocks != q.width_in_blocks || p.height_in_blocks != q.height_in_blocks)))
      return "component " + std::to_string(ci) + " differs";
    if (!p.quant_table || !q.quant_table) return "a quantisation table is missing";
    if (auto problem = check(ci, p, q)) return problem;
  }
  return std::nullopt;
}

// Lossless outputs: identical tables and every DCT coefficient identical.
std::optional<std::string> compare_coefficients(CoefficientImage& a, CoefficientImage& b) {
  return compare_frame(a, b,
                       [&](int ci, const jpeg_component_info& p,
                           const jpeg_component_info& q) -> std::optional<std::string> {
                         if (std::memcmp(p.quant_table->quantval, q.quant_table->quantval,
                                         sizeof(p.quant_table->quantval)) != 0)
                           return "quantisation table of component " + std::to_string(ci) +
                                  " differs";
                         for (JDIMENSION row = 0; row < p.height_in_blocks; ++row) {
                           const JBLOCK* r = a.block_row(ci, row);
                           const JBLOCK* s = b.block_row(ci, row);
                           if (std::memcmp(r, s, sizeof(JBLOCK) * p.width_in_blocks) != 0)
                             return "DCT coefficients of component " + std::to_string(ci) +
                                    " differ in block row " + std::to_string(row);
                         }
                         return std::nullopt;
                       });
}

// Perceptual outputs: tables never finer than the input's, entry by entry (than the finest of
// the input's three where RGB planes became YCbCr: reencoding_tables).
std::optional<std::string> compare_structure(CoefficientImage& a, CoefficientImage& b,
                                             bool allow_420, bool recoded) {
  const ReencodingTables finest = recoded ? reencoding_tables(a) : ReencodingTables{};
  return compare_frame(
      a, b,
      [&](int ci, const jpeg_component_info& p,
          const jpeg_component_info& q) -> std::optional<std::string> {
        const uint16_t* bound = !recoded  ? p.quant_table->quantval
                                : ci == 0 ? finest.luma.data()
                                          : finest.chroma.data();
        for (int k = 0; k < DCTSIZE2; ++k)
          if (q.quant_table->quantval[k] < bound[k])
            return "quantisation table of component " + std::to_string(ci) +
                   " is finer than the input's";
        return std::nullopt;
      },
      allow_420, recoded);
}

// With secondary images kept as they were, the MPF index may differ only in their offsets
// (which must point to the same trailing bytes) and the primary image's size.
std::optional<std::string> compare_mpf_offsets(const MpfIndex& a, const Layout& li,
                                               const MpfIndex& b, const Layout& lo) {
  const size_t ta = a.segment_offset + MpfIndex::kTiffInSegment;
  const size_t tb = b.segment_offset + MpfIndex::kTiffInSegment;
  for (size_t i = 0; i < a.entries.size(); ++i) {
    const auto& x = a.entries[i];
    const auto& y = b.entries[i];
    if (x.offset == 0) continue;
    if (x.size != y.size) return "MPF entry " + std::to_string(i) + " size differs";
    const size_t pa = ta + x.offset;
    const size_t pb = tb + y.offset;
    if (pa < li.image_end || pb < lo.image_end || pa - li.image_end != pb - lo.image_end)
      return "MPF entry " + std::to_string(i) + " points elsewhere";
  }
  return std::nullopt;
}

// The MPF segment `got` against the input's `want`: the same bytes but each entry's image size
// and offset, which follow the images when they move.
std::optional<std::string> compare_outside_mpf_fields(ByteView want, ByteView got,
                                                      const MpfIndex& mpf) {
  if (want.size() != got.size()) return "MPF segment size differs";
  std::vector<bool> follows(want.size(), false);
  for (const MpfIndex::Entry& e : mpf.entries)
    for (size_t i = e.field_offset + 4; i < e.field_offset + 12 && i < want.size(); ++i)
      follows[i] = true;
  for (size_t i = 0; i < want.size(); ++i)
    if (!follows[i] && want[i] != got[i])
      return "MPF segment differs at byte " + std::to_string(i) +
             " (outside the entries' sizes and offsets)";
  return std::nullopt;
}

// `recoded`: the output is the YCbCr re-encoding of Adobe RGB planes (recoded_from_rgb), whose
// Adobe segments must then say transform 1 and are otherwise the input's. `pixels_identical` is
// cleared where an embedded image (EXIF thumbnail, MPF secondary image) changed its pixels.
std::optional<std::string> compare_metadata(ByteView in, const Layout& li, ByteView out,
                                            const Layout& lo, const Policy& policy, bool recoded,
                                            Context* context, bool& pixels_identical) {
  MetadataPlan plan = plan_metadata(in, li, policy.metadata);
  if (recoded && set_adobe_transform(plan, 1) == 0) return "the Adobe segment is missing";
  // A perceptual output may gain lighten's quality marker, once, where the input had none.
  bool marker_allowed = policy.mode != Mode::kLossless && !has_quality_marker(li);
  std::vector<const PlannedSegment*> expected;
  for (const auto& s : plan.before_sof) expected.push_back(&s);
  for (const auto& s : plan.after_sof) expected.push_back(&s);
  const auto mpf_in = parse_mpf(in, li);
  size_t k = 0;
  for (const Segment& s : lo.segments) {
    if (!s.is_metadata()) continue;
    if (marker_allowed && is_quality_marker(s)) {
      marker_allowed = false;
      continue;
    }
    if (k >= expected.size()) return "output has an extra " + std::string(marker_name(s.marker));
    const PlannedSegment& planned = *expected[k++];
    const Bytes& want = planned.bytes;
    ByteView got = out.subspan(s.offset, s.length);
    if (is_mpf_segment(s) && mpf_in && planned.source_offset == mpf_in->segment_offset) {
      // Only the entries' sizes and offsets may follow the images (compared below).
      if (auto why = compare_outside_mpf_fields(want, got, *mpf_in)) return why;
      continue;
    }
    if (same_bytes(want, got)) continue;
    // An EXIF segment may carry the thumbnail optimised (exif_thumbnail.h).
    if (s.marker == 0xE1 && locate_exif_thumbnail(want)) {
      if (auto why = compare_exif_thumbnail(want, got, policy, context, pixels_identical))
        return why;
      continue;
    }
    return "metadata segment " + std::to_string(k) + " (" + marker_name(s.marker) + ") differs";
  }
  if (k != expected.size()) return "metadata segments missing in the output";
  const auto mpf_out = parse_mpf(out, lo);
  if (mpf_in || mpf_out) {
    if (!mpf_in || !mpf_out) return "MPF index differs";
    if (auto why = compare_mpf_entries(*mpf_in, *mpf_out)) return why;
    // Secondary images the index locates may have been optimised; the rest after EOI is kept.
    if (locate_secondary_images(in, li, *mpf_in))
      return compare_secondary_images(in, li, *mpf_in, out, lo, *mpf_out, policy, context,
                                      pixels_identical);
    if (auto why = compare_mpf_offsets(*mpf_in, li, *mpf_out, lo)) return why;
  }
  if (!same_bytes(li.trailing(in), lo.trailing(out))) return "data after EOI differs";
  return std::nullopt;
}

// Lossless check against the input's fingerprint: decodes the output only. False when the
// fingerprints differ (the full comparison then says where).
bool matches_fingerprint(ByteView output, const DecodedFingerprint& input_fingerprint,
                         std::string& problem) {
  CoefficientImage b(output, nullptr);
  if (!b.progression_complete()) {
    problem = "a progression leaves coefficients unsent; decoders would fill them in";
    return false;
  }
  return fingerprint_coefficients(b) == input_fingerprint;
}

}  // namespace
}  // namespace jpeg

Verdict verify_jpeg(ByteView input, ByteView output, const Policy& policy,
                    const std::optional<DecodedFingerprint>& input_fingerprint,
                    const std::optional<ScoredFingerprint>& scored, Context* context) {
  using namespace jpeg;
  Verdict v;
  // The embedded images' pixels count: an output whose thumbnail was requantised is not
  // pixel-identical even where the primary image is.
  bool embedded_identical = true;
  try {
    Layout li = parse_layout(input);
    Layout lo = parse_layout(output);
    const bool allow_420 =
        policy.mode != Mode::kLossless && policy.jpeg_subsampling == SubsamplingPolicy::kAllow420;
    // Both frames are read first where the output may be Adobe RGB planes re-encoded as YCbCr:
    // that decides which Adobe segment it must carry.
    std::optional<CoefficientImage> a, b;
    bool recoded = false;
    if (allow_420 && std::any_of(li.segments.begin(), li.segments.end(),
                                 [](const Segment& s) { return adobe_transform(s) == 0; })) {
      a.emplace(input, context);
      b.emplace(output, context);
      recoded = recoded_from_rgb(*a, *b);
    }
    if (auto why =
            compare_metadata(input, li, output, lo, policy, recoded, context, embedded_identical)) {
      v.problem = *why;
      return v;
    }
    bool identical = true;
    std::optional<ScoredFingerprint> measured;  // the optimiser's score, when it is this output's
    if (input_fingerprint && policy.mode == Mode::kLossless &&
        policy.verify == VerifyLevel::kCoefficients) {
      std::string problem;
      if (matches_fingerprint(output, *input_fingerprint, problem)) {
        v.ok = true;
        v.quality.pixels_identical = embedded_identical;
        return v;
      }
      if (!problem.empty()) {
        v.problem = problem;
        return v;
      }
    }
    {
      if (!a) {
        a.emplace(input, context);
        b.emplace(output, context);
      }
      if (!a->progression_complete() || !b->progression_complete()) {
        v.problem = "a progression leaves coefficients unsent; decoders would fill them in";
        return v;
      }
      if (auto why = compare_coefficients(*a, *b)) {
        if (policy.mode == Mode::kLossless) {
          v.problem = *why;
          return v;
        }
        if (auto bad = compare_structure(*a, *b, allow_420, recoded)) {
          v.problem = *bad;
          return v;
        }
        // The floor is checked on pixels as the metric reads them; a profile of other samples
        // means a viewer shows something else, so nothing may have been given up there.
        if (profile_unlike_decode(li, a->info().num_components, policy)) {
          v.problem =
              "coefficients changed in an image whose ICC profile declares other samples "
              "than the metric scores";
          return v;
        }
        identical = false;
        // Equal fingerprints: the same coefficients and tables the optimiser decoded and scored,
        // so the same pixels in every decode (read alike).
        const auto& read = policy.jpeg_shown_through;
        const bool read_alike =
            scored && (scored->shown_through && read ? *scored->shown_through == *read
                                                     : scored->shown_through == read);
        if (read_alike && fingerprint_coefficients(*b) == scored->fingerprint) measured = scored;
      }
    }
    if (!identical) {
      // Perceptual: the final bytes, decoded by libjpeg with default settings, meet the floor
      // over the whole image and in every tile within the margin.
      const double floor = quality_floor(policy);
      Ssimulacra2Result r;
      if (measured) {
        r.score = measured->score;
        r.worst_tile_score = measured->worst_tile;
      } else {
        const std::optional<ProfileColour> colour =
            metric_colour(li, a->info().num_components, policy);
        const ProfileColour* read_as = colour ? &*colour : nullptr;
        auto a = to_metric_image(decode_pixels(input), read_as);
        auto b = to_metric_image(decode_pixels(output), read_as);
        if (!a || !b) {
          v.problem = "the output changed pixels of an image the metric cannot read";
          return v;
        }
        r = floor_score(*a, *b, {.reference_colour = read_as, .distorted_colour = read_as});
      }
      v.quality.ssimulacra2 = r.score;
      if (!(r.score >= floor)) {
        v.problem = "SSIMULACRA2 " + std::to_string(r.score) + " is under the floor " +
                    std::to_string(floor);
        return v;
      }
      if (!(r.worst_tile_score >= floor - kWorstTileMargin)) {
        v.problem = "a tile at (" + std::to_string(r.worst_tile_x) + ", " +
                    std::to_string(r.worst_tile_y) + ") scores " +
                    std::to_string(r.worst_tile_score) + ", too far under the floor";
        return v;
      }
      v.ok = true;
      return v;
    }
    if (policy.verify == VerifyLevel::kPixels) {
      PixelImage a = decode_pixels(input);
      PixelImage b = decode_pixels(output);
      if (a.width != b.width || a.height != b.height || a.components != b.components ||
          a.samples != b.samples) {
        v.problem = "decoded pixels differ";
        return v;
      }
    }
  } catch (const FormatError& e) {
    // Out of time is the budget's verdict (the engine says so), not a fault of the output.
    if (e.reason() == Reason::kLimitExceeded) throw;
    v.problem = std::string("output does not verify: ") + e.what();
    return v;
  }
  v.ok = true;
  // Identical coefficients and tables decode identically.
  v.quality.pixels_identical = embedded_identical;
  return v;
}

}  // namespace lighten
