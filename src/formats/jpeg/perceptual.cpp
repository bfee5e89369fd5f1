#include "formats/jpeg/perceptual.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include "core/context.h"
#include "formats/jpeg/metadata.h"
#include "formats/jpeg/requantize.h"
#include "quality/ssimulacra2.h"

namespace lighten::jpeg {
namespace {

// Where the search starts: the IJG quality that lands near `floor` on typical camera photos
// (libjpeg-turbo q85 from pixels scores 84 on average, q65 about 69).
int starting_quality(double floor) {
  return int(std::lround(std::clamp(65.0 + (floor - 70.0) * 1.47, 20.0, 97.0)));
}

// SSIMULACRA2 falls about this much per unit of ln(squared DCT error) (-4.6 to -15 measured on
// camera photos); used until two evaluations give the file's own slope.
constexpr double kPriorSlope = -6.0;

// Aim a little above the floor: the model is a straight line, the metric is not. Further when
// extrapolating than when interpolating inside a bracket (a miss on the last evaluation leaves
// an earlier, larger candidate; aiming that one higher cost more than its misses, measured).
constexpr double kAimInside = 0.3, kAimOutside = 1.0;
// How far above the floor the best candidate may land before the search spends one evaluation
// beyond its budget.
constexpr double kExtraEvaluationSlack = 0.4;

// Search levels: four per quality (level 4q is quality q), higher is finer. Quarter steps
// matter: at fine scales one step of whole qualities flips many table entries at once.
constexpr int kLevelsPerQuality = 4;
int permille_of(int level) { return level >= 200 ? 2000 - 5 * level : 200000 / std::max(level, 1); }
double quality_of(int level) { return double(level) / kLevelsPerQuality; }

int max_evaluations(int effort) {
  return effort <= 2 ? 2 : effort <= 4 ? 3 : effort <= 6 ? 4 : effort <= 8 ? 5 : 6;
}

struct Eval {
  int quality = 0;
  double score = 0, worst = 0;
  size_t bytes = 0;
  bool passes = false;
  DecodedFingerprint fingerprint{};  // of the coefficients and tables that were scored
};

// Without a marker, the proof from the tables that the file is already at the mode's target
// (requantising it would only lose more): every used table is, entry by entry, at least as
// coarse as the one lighten writes at quality `ceiling`, or is one lighten wrote.
bool tables_at_most(const std::vector<QuantTable>& tables, const CoefficientImage& image,
                    int ceiling) {
  const auto& info = image.info();
  // Whether `table` is nowhere finer than `bound` and equals it in `min_equal` entries or more.
  auto covered = [](const QuantTable& table, const QuantTable& bound, int min_equal) {
    int equal = 0;
    for (int k = 0; k < 64; ++k) {
      if (table[size_t(k)] < bound[size_t(k)]) return false;
      equal += table[size_t(k)] == bound[size_t(k)];
    }
    return equal >= min_equal;
  };
  auto every_used_table = [&](auto&& holds) {
    for (int ci = 0; ci < info.num_components; ++ci)
      if (!holds(tables[size_t(info.comp_info[ci].quant_tbl_no)])) return false;
    return true;
  };
  const QuantTable at_ceiling = target_table(permille_of(kLevelsPerQuality * ceiling));
  if (every_used_table([&](const QuantTable& t) { return covered(t, at_ceiling, 0); })) return true;
  // Tables lighten wrote, each at its own level (chroma of a 4:4:4 source sits coarser than the
  // luma): most entries exactly the target's, the rest capped by a coarser source. An output of
  // a hard image that the search had to keep finer.
  return every_used_table([&](const QuantTable& t) {
    for (int l = kLevelsPerQuality * 10; l <= kLevelsPerQuality * 98; ++l) {
      const int permille = permille_of(l);
      if (covered(t, target_table(permille), 48) ||
          covered(t, target_table(int(std::lround(permille * kFullResolutionChromaScale))), 48))
        return true;
    }
    return false;
  });
}

}  // namespace

std::optional<ImageRgb8> to_metric_image(PixelImage pixels) {
  if (pixels.components != 1 && pixels.components != 3) return std::nullopt;
  ImageRgb8 img;
  img.width = pixels.width;
  img.height = pixels.height;
  img.channels = pixels.components;
  img.samples = std::move(pixels.samples);
  return img;
}

PerceptualResult requantize_for_floor(CoefficientImage& image, ByteView input, const Layout& layout,
                                      const Policy& policy, const Context* context,
                                      std::optional<ImageRgb8>& reference) {
  PerceptualResult result;
  const double floor = quality_floor(policy);
  const auto& info = image.info();
  const bool gray = info.num_components == 1 && info.jpeg_color_space == JCS_GRAYSCALE;
  const bool ycc = info.num_components == 3 && info.jpeg_color_space == JCS_YCbCr;
  if (std::isnan(floor)) return result;
  if (!gray && !ycc) {
    result.detail = "lossless only (perceptual requantisation takes YCbCr and gray JPEGs)";
    return result;
  }
  if (has_quality_marker(layout)) {
    result.detail = "lossless only (already requantised by lighten)";
    return result;
  }
  Requantizer rq(image);
  const int q_start = starting_quality(floor);
  const int q_src = int(std::lround(rq.source_quality()));
  if (policy.quality_marker == QualityMarker::kOmit &&
      tables_at_most(rq.source_tables(), image, q_start + 5)) {
    result.detail = fmt::format("lossless only (tables already at or below q{})", q_start + 5);
    return result;
  }
  const int l_lo = kLevelsPerQuality * std::max(10, q_start - 30);
  // Up to a little finer than the source: tables never go finer than its own, and a target
  // there changes only the entries where the shapes differ (a q83 source meets floor 85 there).
  const int l_hi = kLevelsPerQuality * std::min(98, q_src + 6);
  if (l_hi <= l_lo) {
    result.detail = fmt::format("lossless only (source quality ~q{} already coarse)", q_src);
    return result;
  }

  // The cheap estimate: squared DCT error of plain rounding on a sample of block rows, for
  // every candidate level. The metric then confirms a few of them.
  const unsigned rows = info.comp_info[0].height_in_blocks;
  const unsigned row_step = std::max(1u, rows / 24);
  std::vector<double> log_d(size_t(l_hi + 1), 0.0);
  const Requantizer::DistortionEstimate distortion = rq.distortion_estimate(row_step);
  auto estimate = [&](int l) {
    return std::log(std::max(distortion(rq.tables_for(permille_of(l))), 1e-6));
  };
  // Every other level measured, the ones between interpolated.
  for (int l = l_lo; l <= l_hi; l += 2) log_d[size_t(l)] = estimate(l);
  if ((l_hi - l_lo) % 2) log_d[size_t(l_hi)] = estimate(l_hi);
  for (int l = l_lo + 1; l < l_hi; l += 2)
    log_d[size_t(l)] = 0.5 * (log_d[size_t(l - 1)] + log_d[size_t(l + 1)]);

  if (!reference) reference = to_metric_image(decode_pixels(input));
  if (!reference) return result;
  const RdoParams rdo{};
  std::vector<Eval> evals;
  auto evaluate = [&](int q) {
    rq.apply(image, rq.tables_for(permille_of(q)), rdo);
    const Bytes candidate = write_coefficients(image, WriteOptions{});
    std::optional<ImageRgb8> decoded = to_metric_image(decode_pixels(candidate));
    const Ssimulacra2Result r = ssimulacra2(*reference, *decoded);
    Eval e{
        q, r.score, r.worst_tile_score, candidate.size(), false, fingerprint_coefficients(image)};
    e.passes = e.score >= floor && e.worst >= floor - kWorstTileMargin;
    evals.push_back(e);
    return e;
  };

  int fail_q = l_lo - 1, pass_q = l_hi + 1;  // bracket: highest failing, lowest passing
  int q = std::clamp(kLevelsPerQuality * q_start, l_lo, l_hi);
  int budget = max_evaluations(policy.effort);
  bool extended = false;
  for (int n = 0; n < budget; ++n) {
    if (context && context->out_of_time()) break;
    const Eval e = evaluate(q);
    if (e.passes)
      pass_q = std::min(pass_q, q);
    else
      fail_q = std::max(fail_q, q);
    if (pass_q - fail_q <= 1) break;
    // A budget spent with the best candidate still well above the floor (scores jump where the
    // new tables meet the source's) buys one more evaluation inside the bracket.
    if (n + 1 == budget && !extended) {
      double best_passing = 0;
      for (const Eval& x : evals)
        if (x.passes && x.quality == pass_q) best_passing = x.score;
      if (best_passing > floor + kExtraEvaluationSlack) {
        ++budget;
        extended = true;
      }
    }
    // Model score = a + b ln D through the bracket, or else the two latest evaluations.
    const Eval* lo = nullptr;
    const Eval* hi = nullptr;
    for (const Eval& x : evals) {
      if (x.quality == fail_q) lo = &x;
      if (x.quality == pass_q) hi = &x;
    }
    const bool inside = lo && hi;
    if (!inside && evals.size() >= 2) {
      lo = &evals[evals.size() - 2];
      hi = &evals.back();
    }
    double slope = kPriorSlope;
    const Eval* anchor = &e;
    if (lo && hi && log_d[size_t(lo->quality)] != log_d[size_t(hi->quality)])
      slope = (hi->score - lo->score) / (log_d[size_t(hi->quality)] - log_d[size_t(lo->quality)]);
    if (!(slope < -1.0)) slope = kPriorSlope;
    const double target = floor + (inside ? kAimInside : kAimOutside);
    int next = -1;
    for (int c = fail_q + 1; c < pass_q && c <= l_hi; ++c) {
      const double predicted =
          anchor->score + slope * (log_d[size_t(c)] - log_d[size_t(anchor->quality)]);
      if (predicted >= target) {
        next = c;
        break;
      }
    }
    if (next < 0) next = std::min(pass_q - 1, l_hi);  // nothing predicted to pass: go finest
    if (next <= fail_q || next >= pass_q) break;
    // A local failure (worst tile) is not cured by a step the model thinks is enough.
    if (!e.passes && e.score >= floor)
      next = std::max(next, std::min(q + 2 * kLevelsPerQuality, pass_q - 1));
    q = next;
  }
  const Eval* best = nullptr;
  for (const Eval& e : evals)
    if (e.passes && (!best || e.bytes < best->bytes)) best = &e;
  if (!best) {
    // Put the source's coefficients back: the output is the lossless one.
    rq.apply(image, rq.source_tables(), RdoParams{.strength = 0});
    image.set_output_tables({});
    result.detail =
        fmt::format("lossless only (no requantisation met SSIMULACRA2 {:.1f} in {} tries)", floor,
                    evals.size());
    return result;
  }
  if (evals.back().quality != best->quality)
    rq.apply(image, rq.tables_for(permille_of(best->quality)), rdo);
  result.requantized = true;
  result.score = best->score;
  result.worst_tile = best->worst;
  result.fingerprint = best->fingerprint;
  result.detail = fmt::format(
      "requantised q~{} -> q{:.2f} (Robidoux-shaped tables) with trellis, SSIMULACRA2 {:.2f} "
      "(worst tile {:.1f}, floor {:.1f}, {} evaluations)",
      q_src, quality_of(best->quality), best->score, best->worst, floor, evals.size());
  return result;
}

bool has_full_resolution_chroma(const CoefficientImage& image) {
  const auto& info = const_cast<CoefficientImage&>(image).info();
  if (info.num_components != 3 || info.jpeg_color_space != JCS_YCbCr) return false;
  for (int ci = 0; ci < 3; ++ci)
    if (info.comp_info[ci].h_samp_factor != info.comp_info[0].h_samp_factor ||
        info.comp_info[ci].v_samp_factor != info.comp_info[0].v_samp_factor)
      return false;
  return true;
}

std::optional<SubsampledSource> subsampled_source(CoefficientImage& source, ByteView input,
                                                  const Context* context,
                                                  std::optional<ImageRgb8>& reference) {
  if (!has_full_resolution_chroma(source)) return std::nullopt;
  if (!reference) reference = to_metric_image(decode_pixels(input));
  if (!reference || reference->channels != 3) return std::nullopt;
  const auto& info = source.info();
  std::array<uint16_t, 64> luma{}, chroma{};
  for (int k = 0; k < 64; ++k) {
    luma[size_t(k)] = info.comp_info[0].quant_table->quantval[k];
    chroma[size_t(k)] = info.comp_info[1].quant_table->quantval[k];
  }
  SubsampledSource out;
  out.bytes = encode_pixels_420(*reference, luma, chroma);
  out.image = std::make_unique<CoefficientImage>(out.bytes, context);
  const std::optional<ImageRgb8> decoded = to_metric_image(decode_pixels(out.bytes));
  if (!decoded) return std::nullopt;
  out.score = ssimulacra2(*reference, *decoded).score;
  return out;
}

SubsamplingPlan plan_subsampling(double score, double floor) {
  if (score >= floor + kSubsampledOnlyHeadroom) return SubsamplingPlan::kSubsampledOnly;
  if (score >= floor + kSubsampledHeadroom) return SubsamplingPlan::kBoth;
  return SubsamplingPlan::kFullOnly;
}

}  // namespace lighten::jpeg
