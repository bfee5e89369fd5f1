#include "formats/jpeg/perceptual.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "core/context.h"
#include "core/errors.h"
#include "core/policy_names.h"
#include "formats/jpeg/level_search.h"
#include "formats/jpeg/metadata.h"
#include "formats/jpeg/requantize.h"
#include "quality/floor_score.h"

namespace lighten::jpeg {
namespace {

// Where the search starts: the IJG quality that lands near `floor` on typical camera photos
// (libjpeg-turbo q85 from pixels scores 84 on average, q65 about 69).
int starting_quality(double floor) {
  return int(std::lround(std::clamp(65.0 + (floor - 70.0) * 1.47, 20.0, 97.0)));
}

// A source near or below that quality would start the search on a plateau: levels finer than the
// source's own tables change only a few entries, so scores there fall a fraction of a point per
// step and the line model creeps. Such a search starts this far below the source instead. On 45
// 1-2 MP JPEGs at q70-q92 (cjpeg and ffmpeg), visually-lossless came out 1.1 % smaller with 18 %
// fewer whole-image evaluations (high 0.3 %, compact 0.1 % smaller). Sources more than five
// qualities above the start keep it: most camera photos (the benchmark's 16 came out 0.1 %
// smaller in visually-lossless and high, the same in compact).
constexpr int kStartBelowSource = 12;
constexpr int kPlateauReach = 5;

// The coarsest and the finest level the search tries.
constexpr int kCoarsestQuality = 10;
constexpr int kFinestQuality = 98;

// The quality at or below which a file's tables prove it already at the floor's target: a
// little finer than where the search starts. Never finer than any level the search writes: at
// floors from about 90 up the start is 95-97, and a bound at q100 (every entry 1) would take
// every JPEG, a q100 one too, for one already requantised.
int proof_ceiling(double floor) { return std::min(starting_quality(floor) + 5, kFinestQuality); }

int max_evaluations(int effort) {
  return effort <= 2 ? 2 : effort <= 4 ? 3 : effort <= 6 ? 4 : effort <= 8 ? 5 : 6;
}

// How hard the search of a large image works for its last bytes (`--effort`): a whole-image
// score that passes within `stop_within` of the floor ends it. On the 16 camera photos here
// (bench/jpeg_perceptual --efforts 2,5,8), against the default: effort 2 took 14-26 % less CPU
// for outputs 1.0-2.9 % larger. A closer stop (0.45) from effort 7 left less headroom for the
// lighter trellis weights that follow (easing.h), which give it back in finer steps: at effort 8
// with a third easing trial, 0.6 against 0.45 came out 136 bytes larger in compact, the same in
// high and 6.4 kB smaller in visually-lossless, for 3-7 % less CPU.
SampledSearchParams sampled_search_params(int effort) {
  if (effort <= 3) return {.sample_budget = 3, .whole_budget = 2, .stop_within = 1.2};
  if (effort >= 7) return {.whole_budget = 4};
  return {};
}

// Large images are searched on a sample of their rows (search_with_sample): bands of a tile's
// height (the metric's worst-tile unit), spread evenly, about a quarter of the image.
constexpr double kSampleFraction = 0.25;
constexpr unsigned kSampleBandPixels = 256;
constexpr unsigned kMinSampledHeight = 4 * kSampleBandPixels;
constexpr uint64_t kMinSampledPixels = 3'000'000;
// The search scores with SSIMULACRA2 less its maps of negligible weight (at most 0.002, against
// 0.1 to 225 for the rest): within 0.0005 of the full computation on every oracle row and 0.0002
// on a 12 MP photo, 1.4 times faster. Candidates must clear the floor by a slack twenty times
// that difference, so the full metric finds them at the floor too.
constexpr Ssimulacra2Options kSearchMetric{.tile_size = 256, .negligible_weight = 0.002};
constexpr double kSearchMetricSlack = 0.01;
// That metric, reading both images through `colour` (metric_colour) when not null.
Ssimulacra2Options search_metric(const ProfileColour* colour) {
  Ssimulacra2Options metric = kSearchMetric;
  metric.reference_colour = metric.distorted_colour = colour;
  return metric;
}
// How much higher a sample's SSIMULACRA2 sits than the whole image's: 0.7 to 1.7 (mean 1.1)
// for the 4:2:0 re-encodings of the corpus's ten 4:4:4 and 4:2:2 camera photos.
constexpr double kSampleFlattery = 1.0;

// "a", "a or b", "a, b or c".
std::string listed(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? " or " : ", ") + items[i];
  return out;
}

// Trellis weights raced against the default on an image's row sample (RdoParams::strength), from
// effort 4 on. The default suits most camera photos; a heavier one (fewer coefficients zeroed in
// busy blocks, coarser tables for the same score) suits pages of text and some detailed photos.
// At floor 80, each photo searched at weight 0.5 and at 2: 2 was up to 9 % smaller on 4 of the
// 14 sampled ones and up to 10 % larger on others; raced, those 4 took 2 (1.5 % smaller in all,
// for 20 % more CPU). On 12 pages rendered from the corpus's PDFs: 6.7-8.2 % smaller in the
// three modes. A third weight would add under 0.1 % on the photos (1 or 4), 1.3 % on the pages (4).
constexpr double kRaceTrellisWeights[] = {2.0};
constexpr int kRaceMinEffort = 4;
// Where no row sample runs the race (images under kMinSampledPixels, samples that do not track
// the whole image), it takes a whole-image search per weight, so only where the user asks for
// the smallest files. On 24 camera photos resized to 0.5 and 1.5 MP, at effort 8: 1.0 % smaller
// in compact and 1.5 % in high, for 60-100 % more CPU.
constexpr int kWholeRaceMinEffort = 8;
// Where neither weight met the floor, a much heavier one is searched last before the file is
// left lossless: at a floor near what the source's own tables score, the trellis thins a page's
// strokes even at weight 2. Of four pages rendered from the corpus's PDFs and saved at q80 4:4:4,
// three met visually-lossless at neither weight (left lossless, 7-18 % saved); at this weight all
// four met it, 6.1 % smaller in all than before (5.3 % at plain rounding, 6.0 % at 4 and at 16).
constexpr double kLastResortTrellisWeight = 8.0;

}  // namespace

int search_start(double floor, int q_src) {
  const int q = starting_quality(floor);
  return kLevelsPerQuality *
         (q_src <= q + kPlateauReach ? std::min(q, q_src - kStartBelowSource) : q);
}

std::vector<McuRows> sample_bands(uint32_t width, uint32_t height, unsigned mcu_height) {
  if (height < kMinSampledHeight || uint64_t(width) * height < kMinSampledPixels) return {};
  const unsigned whole_rows = height / mcu_height;
  const unsigned band = (kSampleBandPixels + mcu_height - 1) / mcu_height;
  const unsigned count = std::max(2u, unsigned(std::lround(whole_rows * kSampleFraction / band)));
  if (count * band * 2 > whole_rows) return {};
  std::vector<McuRows> bands;
  for (unsigned i = 0; i < count; ++i) {
    const double centre = (i + 0.5) * whole_rows / count;
    const unsigned first =
        unsigned(std::clamp(std::lround(centre - band / 2.0), 0l, long(whole_rows - band)));
    bands.push_back({first, band});
  }
  return bands;
}

namespace {

// The rows of `bands` (in units of `unit` pixel rows), stacked.
ImageRgb8 pixel_rows(const ImageRgb8& image, const std::vector<McuRows>& bands, unsigned unit) {
  ImageRgb8 out;
  out.width = image.width;
  out.channels = image.channels;
  const size_t stride = size_t(image.width) * image.channels;
  for (const McuRows& b : bands) {
    const size_t first = size_t(b.first) * unit;
    const size_t count = std::min(size_t(b.count) * unit, size_t(image.height) - first);
    out.samples.insert(out.samples.end(), image.samples.begin() + long(first * stride),
                       image.samples.begin() + long((first + count) * stride));
    out.height += uint32_t(count);
  }
  return out;
}

// The sample of a large image the search scores its candidates on, and what they are scored
// against: the same rows of the reference the whole image is scored against (the input's decode,
// also when the image searched is its 4:2:0 re-encoding).
struct RowSample {
  std::unique_ptr<CoefficientImage> image;
  ImageRgb8 reference;
};

// Whether libjpeg decodes the image to samples the metric reads: gray, RGB (from YCbCr or RGB)
// or CMYK (from CMYK or YCCK, rendered as RGB). Two components, or four that libjpeg takes for
// neither CMYK nor YCCK, decode to samples it cannot name: nothing to score.
bool metric_reads(const jpeg_decompress_struct& info) {
  return info.out_color_space == JCS_GRAYSCALE || info.out_color_space == JCS_RGB ||
         info.out_color_space == JCS_CMYK;
}

std::optional<RowSample> row_sample(CoefficientImage& image, const ImageRgb8& reference,
                                    const Context* context) {
  const auto& info = image.info();
  const unsigned unit = unsigned(info.max_v_samp_factor) * DCTSIZE;
  const std::vector<McuRows> bands = sample_bands(info.image_width, info.image_height, unit);
  if (bands.empty()) return std::nullopt;
  return RowSample{std::make_unique<CoefficientImage>(write_mcu_rows(image, bands), context,
                                                      info.jpeg_color_space),
                   pixel_rows(reference, bands, unit)};
}

// The cheap distortion estimate at every level of [lo, hi] (ln of the squared DCT error of plain
// rounding on a sample of block rows; indexed by level, zero below lo): every other level
// measured, the ones between interpolated.
std::vector<double> log_distortion_curve(const Requantizer& rq, CoefficientImage& image, int lo,
                                         int hi) {
  const unsigned rows = image.info().comp_info[0].height_in_blocks;
  const Requantizer::DistortionEstimate distortion =
      rq.distortion_estimate(std::max(1u, rows / 24));
  auto estimate = [&](int l) {
    return std::log(std::max(distortion(rq.tables_for(permille_of(l))), 1e-6));
  };
  std::vector<double> log_d(size_t(hi + 1), 0.0);
  for (int l = lo; l <= hi; l += 2) log_d[size_t(l)] = estimate(l);
  if ((hi - lo) % 2) log_d[size_t(hi)] = estimate(hi);
  for (int l = lo + 1; l < hi; l += 2)
    log_d[size_t(l)] = 0.5 * (log_d[size_t(l - 1)] + log_d[size_t(l + 1)]);
  return log_d;
}

// Whether `table` is nowhere finer than `bound` and equals it in `min_equal` entries or more.
bool covered(const QuantTable& table, const QuantTable& bound, int min_equal) {
  int equal = 0;
  for (int k = 0; k < 64; ++k) {
    if (table[size_t(k)] < bound[size_t(k)]) return false;
    equal += table[size_t(k)] == bound[size_t(k)];
  }
  return equal >= min_equal;
}

// Whether `holds` is true of every table a component of the image uses.
template <typename Holds>
bool every_used_table(const std::vector<QuantTable>& tables, const CoefficientImage& image,
                      Holds&& holds) {
  const auto& info = image.info();
  for (int ci = 0; ci < info.num_components; ++ci)
    if (!holds(tables[size_t(info.comp_info[ci].quant_tbl_no)])) return false;
  return true;
}

// Every target the search may write, once: at each level, the luma's table and a 4:4:4 chroma's
// (at kFullResolutionChromaScale of its permille). Every file searched checks its tables
// against them (tables_lighten_wrote, raised_plain_table).
struct LevelTargets {
  QuantTable luma, full_resolution_chroma;
};
const std::vector<LevelTargets>& level_targets() {
  static const std::vector<LevelTargets> kTargets = [] {
    std::vector<LevelTargets> targets;
    for (int l = kLevelsPerQuality * kCoarsestQuality; l <= kLevelsPerQuality * kFinestQuality;
         ++l) {
      const int permille = permille_of(l);
      targets.push_back({target_table(permille),
                         target_table(int(std::lround(permille * kFullResolutionChromaScale)))});
    }
    return targets;
  }();
  return kTargets;
}

// Whether the tables are ones lighten writes (its targets carry a dither of their own, and none
// of them is exactly a plain encoder's table): a file lighten requantised whose
// marker is gone (written under --quality-marker omit, or stripped by another tool since).
// Searching it again would take its degraded pixels for the reference and lose more each time.
bool tables_lighten_wrote(const std::vector<QuantTable>& tables, const CoefficientImage& image) {
  // Where lighten's target happens to fall on a plain encoder's table (Robidoux's at permille
  // 1000 is mozjpeg's quality 50 but for six entries), an encoder's file would pass for one.
  if (!every_used_table(tables, image,
                        [](const QuantTable& t) { return !is_plain_encoder_table(t); }))
    return false;
  // Each table at its own level (chroma of a 4:4:4 source sits coarser than the luma): most
  // entries exactly the target's, the rest capped by a coarser source. An output of a hard image
  // that the search had to keep finer.
  if (every_used_table(tables, image, [&](const QuantTable& t) {
        for (const LevelTargets& target : level_targets())
          if (covered(t, target.luma, 48) || covered(t, target.full_resolution_chroma, 48))
            return true;
        return false;
      }))
    return true;
  // The same where the source's chroma was coarser than the target (an IJG q90 photo in `high`):
  // its chroma tables keep the source's entries wherever those are coarser, so only the luma's
  // shows the level; every other table lies nowhere finer than that level's.
  const QuantTable& luma = tables[size_t(image.info().comp_info[0].quant_tbl_no)];
  for (const LevelTargets& level : level_targets()) {
    const QuantTable& target = level.luma;
    if (covered(luma, target, 48) &&
        every_used_table(tables, image, [&](const QuantTable& t) { return covered(t, target, 0); }))
      return true;
  }
  return false;
}

// Whether `table` is, entry by entry, the larger of a plain encoder's table at some quality and
// one of lighten's targets (the luma's level, or a 4:4:4 chroma's), the target above it in at
// least `min_raised` entries: what lighten writes for a plain encoder's file where its search
// ends near the source's quality, so that most entries stay the source's. A plain table alone
// (no entry raised) has min_raised 0 to pass.
bool raised_plain_table(const QuantTable& table, int min_raised) {
  for (int q = 1; q <= 100; ++q)
    for (const QuantTable& plain : plain_encoder_tables(q)) {
      int raised = 0;
      bool under = true;
      for (int k = 0; k < 64 && under; ++k) {
        under = plain[size_t(k)] <= table[size_t(k)];
        raised += plain[size_t(k)] < table[size_t(k)];
      }
      if (!under || raised < min_raised) continue;
      for (const LevelTargets& level : level_targets())
        for (const QuantTable* target : {&level.luma, &level.full_resolution_chroma}) {
          bool same = true;
          for (int k = 0; k < 64 && same; ++k)
            same = table[size_t(k)] == std::max(plain[size_t(k)], (*target)[size_t(k)]);
          if (same) return true;
        }
    }
  return false;
}

// Tables lighten wrote from a plain encoder's where its search ended near the source's quality
// (raised_plain_table): the luma's raised in at least 8 entries, every other table so raised or
// left plain. Merely coarse tables are taken as done only under `omit`; without this, an output
// whose marker a tool stripped was requantised again by a run under `write` (a q85 gray page in
// visually-lossless: 85.05, then 81.72 against the original).
bool tables_raised_from_plain(const std::vector<QuantTable>& tables,
                              const CoefficientImage& image) {
  constexpr int kMinRaised = 8;
  const QuantTable& luma = tables[size_t(image.info().comp_info[0].quant_tbl_no)];
  return raised_plain_table(luma, kMinRaised) &&
         every_used_table(tables, image,
                          [](const QuantTable& t) { return raised_plain_table(t, 0); });
}

// Without a marker, the proof from the tables that the file is already at the mode's target
// (requantising it would only lose more): every used table is, entry by entry, at least as
// coarse as the one lighten writes at quality `ceiling`, or is one lighten wrote.
bool tables_at_most(const std::vector<QuantTable>& tables, const CoefficientImage& image,
                    int ceiling) {
  const QuantTable at_ceiling = target_table(permille_of(kLevelsPerQuality * ceiling));
  return every_used_table(tables, image,
                          [&](const QuantTable& t) { return covered(t, at_ceiling, 0); }) ||
         tables_lighten_wrote(tables, image);
}

}  // namespace

bool tables_prove_requantised(const CoefficientImage& image, const Policy& policy) {
  const double floor = quality_floor(policy);
  const auto& tables = image.output_tables();
  if (std::isnan(floor) || tables.empty()) return false;
  return tables_at_most(tables, image, proof_ceiling(floor));
}

// One trellis weight's search of an image: its own evaluations, whole image and row sample.
struct FloorSearch::Arm {
  Arm(RdoParams rdo, double pass, int l_lo, int l_hi, const std::vector<double>& log_d)
      : rdo(rdo), search(pass, pass - kWorstTileMargin, l_lo, l_hi, log_d) {}
  const RdoParams rdo;
  LevelSearch search;
  std::optional<SampledSearch> sampled;
};

// Everything one search holds between its first sample round and its end.
struct FloorSearch::State {
  State(CoefficientImage& image, Requantizer rq, const Policy& policy, const Context* context,
        int q_src, int l_lo, int l_hi, const ImageRgb8& reference, const ProfileColour* colour)
      : image(image),
        policy(policy),
        context(context),
        floor(quality_floor(policy)),
        pass(floor + kSearchMetricSlack),
        start(search_start(floor, q_src)),
        q_src(q_src),
        l_lo(l_lo),
        l_hi(l_hi),
        rq(std::move(rq)),
        log_d(log_distortion_curve(this->rq, image, l_lo, l_hi)),
        reference(reference),
        colour(colour),
        metric(search_metric(colour)) {}

  // One candidate: requantised with `rdo` into the image `r` writes, written, decoded and
  // scored against `ref`.
  LevelEval score_candidate(const Requantizer& r, const ImageRgb8& ref, const RdoParams& rdo,
                            int level, bool whole) {
    r.apply(r.tables_for(permille_of(level)), rdo);
    CoefficientImage& target = r.image();
    const Bytes candidate = write_coefficients(target, WriteOptions{});
    decode_pixels_into(candidate, scratch, target.info().jpeg_color_space);
    std::optional<ImageRgb8> decoded = to_metric_image(std::move(scratch), colour);
    if (!decoded)
      throw FormatError(Reason::kInternalError, 0, "a candidate the metric cannot read");
    const Ssimulacra2Result m = floor_score(ref, *decoded, metric);
    scratch.samples = std::move(decoded->samples);  // the next candidate decodes into it
    LevelEval e{level, m.score, m.worst_tile_score, candidate.size(), false, {}};
    if (whole) {
      e.fingerprint = fingerprint_coefficients(target);
      held = {level, rdo.strength};
    }
    return e;
  }

  // Candidates of the whole image at `arm`'s weight.
  Evaluate on_whole(const Arm& arm) {
    return [this, &arm](int level) { return score_candidate(rq, reference, arm.rdo, level, true); };
  }

  void search_whole(Arm& arm) {
    arm.search.run(start, {.budget = max_evaluations(policy.effort), .may_extend_twice = true},
                   on_whole(arm), context);
  }

  Arm& add_arm(double strength, bool on_sample = true) {
    arms.push_back(std::make_unique<Arm>(RdoParams{strength}, pass, l_lo, l_hi, log_d));
    Arm& arm = *arms.back();
    if (sample && on_sample) {
      arm.sampled.emplace(
          arm.search, pass, pass - kWorstTileMargin, start, sampled_search_params(policy.effort),
          [this, &arm](int level) {
            return score_candidate(*sample_rq, sample->reference, arm.rdo, level, false);
          },
          on_whole(arm), context);
    }
    return arm;
  }

  // The arm the search goes on with. With a row sample, each trellis weight's first round runs
  // on it and the weight whose pick there is smallest stays; the others are dropped.
  Arm& chosen_arm() {
    if (sample && may_race && !raced) {
      raced = true;
      for (double strength : kRaceTrellisWeights) add_arm(strength);
      std::vector<std::optional<size_t>> bytes;
      std::vector<bool> met;
      for (auto& arm : arms) {
        const LevelEval* pick = arm->sampled->first_pick();
        bytes.push_back(pick ? std::optional<size_t>(pick->bytes) : std::nullopt);
        met.push_back(pick && arm->sampled->first_pick_met_floors());
      }
      // A weight whose sample met the floors wins over one whose sample met nothing (its pick is
      // then only the finest level), whatever their bytes; among equals the fewer bytes win.
      auto better = [&](size_t i, size_t than) {
        if (met[i] != met[than]) return bool(met[i]);
        return bytes[i] && (!bytes[than] || *bytes[i] < *bytes[than]);
      };
      size_t best = 0;
      for (size_t i = 1; i < arms.size(); ++i)
        if (better(i, best)) best = i;
      if (best != 0)
        race = !bytes[0] ? fmt::format("{:g}: no pick at {:g}", arms[best]->rdo.strength,
                                       arms[0]->rdo.strength)
               : met[best] && !met[0]
                   ? fmt::format("{:g}: the row sample met nothing at {:g}",
                                 arms[best]->rdo.strength, arms[0]->rdo.strength)
                   : fmt::format("{:g}: its row sample {:.1f} % smaller than at {:g}",
                                 arms[best]->rdo.strength,
                                 100.0 * (1 - double(*bytes[best]) / double(*bytes[0])),
                                 arms[0]->rdo.strength);
      for (size_t i = 0; i < arms.size(); ++i)
        if (i != best) dropped_sample_evaluations += arms[i]->sampled->sample_evaluations();
      others_met = false;
      for (size_t i = 1; i < met.size(); ++i) others_met = others_met || met[i];
      std::unique_ptr<Arm> kept = std::move(arms[best]);
      arms.clear();
      arms.push_back(std::move(kept));
    }
    return *arms.front();
  }

  // Where no row sample raced the weights, `searched` (the default's, which met the floors)
  // against a whole-image search at each raced weight, started from its pick: the arm with the
  // fewest bytes, the others dropped.
  Arm& raced_on_whole(Arm& searched) {
    raced = true;
    Arm* best = &searched;
    const int from = searched.search.best()->level;
    for (double strength : kRaceTrellisWeights) {
      if (context && context->out_of_time()) break;
      Arm& other = add_arm(strength, false);
      other.search.run(from, {.budget = max_evaluations(policy.effort), .may_extend_twice = true},
                       on_whole(other), context);
      const LevelEval* pick = other.search.best();
      if (pick && pick->bytes < best->search.best()->bytes) {
        race =
            fmt::format("{:g}: {:.1f} % smaller than at {:g} on the whole image", strength,
                        100.0 * (1 - double(pick->bytes) / double(searched.search.best()->bytes)),
                        searched.rdo.strength);
        best = &other;
      }
    }
    for (const auto& arm : arms)
      if (arm.get() != best) dropped_whole_evaluations += arm->search.evals().size();
    return *best;
  }

  CoefficientImage& image;
  const Policy& policy;
  const Context* context;
  const double floor;
  const double pass;  // what candidates must score: the floor plus the quick metric's slack
  const int start;    // the level the search starts from
  const int q_src;
  const int l_lo, l_hi;  // the levels searched
  const Requantizer rq;
  const std::vector<double> log_d;  // the cheap estimate for every candidate level
  const ImageRgb8& reference;
  const ProfileColour* const colour;  // how the metric reads the pixels (null: as sRGB)
  const Ssimulacra2Options metric;
  PixelImage scratch;  // candidates' decodes, one buffer (no page faults per candidate)
  std::optional<RowSample> sample;
  std::optional<Requantizer> sample_rq;
  bool untracked_sample = false;
  std::vector<std::unique_ptr<Arm>> arms;  // the default weight's first
  std::string race;                        // why another weight than the default was kept
  bool may_race = true;                    // the policy's effort allows other weights
  bool raced = false;
  bool others_met = true;  // false: a race ran and no other weight met the floors on the sample
  int dropped_sample_evaluations = 0;    // the first rounds of the weights dropped
  bool may_race_whole = false;           // the effort races the weights where no row sample does
  size_t dropped_whole_evaluations = 0;  // the whole-image searches of the weights dropped
  // The candidate the image's arrays hold: the last whole-image one scored (level, weight).
  std::pair<int, double> held{-1, 0.0};
};

FloorSearch::FloorSearch(CoefficientImage& image, ByteView input, const Layout& layout,
                         const Policy& policy, const Context* context,
                         std::optional<ImageRgb8>& reference, const ProfileColour* colour,
                         bool race_weights, std::vector<QuantTable> finest_tables) {
  const double floor = quality_floor(policy);
  const auto& info = image.info();
  if (std::isnan(floor)) return;
  if (!metric_reads(info)) {
    early_.detail =
        "lossless only (perceptual requantisation takes gray, YCbCr, RGB and CMYK JPEGs)";
    return;
  }
  if (has_quality_marker(layout)) {
    early_.detail = "lossless only (already requantised by lighten)";
    return;
  }
  if (std::optional<std::string> why = profile_unlike_decode(layout, info.num_components, policy)) {
    early_.detail = std::move(*why);
    return;
  }
  Requantizer rq(image, finest_tables);
  const int q_src = int(std::lround(rq.source_quality()));
  // Whatever the marker policy: the marker may be gone from a file lighten requantised.
  if (tables_lighten_wrote(rq.finest_tables(), image) ||
      tables_raised_from_plain(rq.finest_tables(), image)) {
    early_.detail = "lossless only (already requantised by lighten: its tables are lighten's)";
    return;
  }
  if (policy.quality_marker == QualityMarker::kOmit &&
      tables_at_most(rq.finest_tables(), image, proof_ceiling(floor))) {
    early_.detail =
        fmt::format("lossless only (tables already at or below q{})", proof_ceiling(floor));
    return;
  }
  // Down to quality 10 whatever the floor: a large, clean photo (a 16 MP capture at q99, say)
  // may meet floor 70 far below the quality typical photos need.
  const int l_lo = kLevelsPerQuality * kCoarsestQuality;
  // Up to a little finer than the source: tables never go finer than its own, and a target
  // there changes only the entries where the shapes differ (a q83 source meets floor 85 there).
  const int l_hi = kLevelsPerQuality * std::min(kFinestQuality, q_src + 6);
  if (l_hi <= l_lo) {
    early_.detail = fmt::format("lossless only (source quality ~q{} already coarse)", q_src);
    return;
  }
  if (!reference) reference = to_metric_image(decode_pixels(input), colour);
  if (!reference) return;
  // A reference decoded elsewhere (the 4:2:0 plan's, three channels) must read as this one does.
  if (colour && reference->channels != colour->channels())
    throw FormatError(Reason::kInternalError, 0, "a reference read otherwise than the search");
  state_ = std::make_unique<State>(image, std::move(rq), policy, context, q_src, l_lo, l_hi,
                                   *reference, colour);
  State& st = *state_;
  st.sample = row_sample(image, *reference, context);
  if (st.sample) {
    // A sample whose coefficients answer requantisation unlike the whole image's (its bands
    // miss where the detail is) would mislead the search: the whole image is searched instead.
    st.sample_rq.emplace(*st.sample->image, std::move(finest_tables));
    if (!sample_tracks_whole(log_distortion_curve(*st.sample_rq, *st.sample->image, l_lo, l_hi),
                             st.log_d, l_lo, l_hi, st.start)) {
      st.sample.reset();
      st.sample_rq.reset();
      st.untracked_sample = true;
    }
  }
  st.add_arm(RdoParams{}.strength);
  st.may_race = race_weights && policy.effort >= kRaceMinEffort;
  st.may_race_whole = race_weights && policy.effort >= kWholeRaceMinEffort;
}

FloorSearch::~FloorSearch() = default;

std::optional<FloorSearch::SampleCost> FloorSearch::first_sample_cost() {
  if (!state_ || !state_->sample) return std::nullopt;
  SampledSearch& sampled = *state_->chosen_arm().sampled;
  const LevelEval* pick = sampled.first_pick();
  if (!pick) return std::nullopt;
  return SampleCost{pick->bytes, sampled.first_pick_met_floors()};
}

PerceptualResult FloorSearch::run() {
  if (!state_) return early_;
  State& st = *state_;
  Arm* searched = &st.chosen_arm();
  PerceptualResult result;
  int sampled_evaluations = 0;
  if (searched->sampled) {
    sampled_evaluations = searched->sampled->finish() + st.dropped_sample_evaluations;
  } else {
    st.search_whole(*searched);
    if (st.may_race_whole && searched->search.best()) searched = &st.raced_on_whole(*searched);
  }
  std::string tries = fmt::format("in {} tries", searched->search.evals().size());
  // Where nothing met the floor at the weight searched (text, whose strokes the trellis thins at
  // every level: a 1280x720 screenshot at q90 scored 80.5 at most, against 100 losslessly), each
  // heavier weight up to the last resort's gets a search of the whole image before the file is
  // left lossless; the raced one not where it met nothing on the row sample either. A lighter
  // weight than one that met nothing keeps less of the image at every level: it is not tried.
  size_t failed_evaluations = 0;  // whole-image tries of the weights that met nothing
  if (!searched->search.best() && st.may_race) {
    std::vector<std::string> failed = {
        fmt::format("{:g} in {} tries", searched->rdo.strength, searched->search.evals().size())};
    for (double weight : {kRaceTrellisWeights[0], kLastResortTrellisWeight}) {
      if (weight <= searched->rdo.strength) continue;
      if (weight == kRaceTrellisWeights[0] && st.raced && !st.others_met) {
        failed.push_back(fmt::format("{:g} on the row sample", weight));
        continue;
      }
      failed_evaluations += searched->search.evals().size();
      Arm& next = st.add_arm(weight, false);
      st.search_whole(next);
      searched = &next;
      if (next.search.best()) {
        st.race = fmt::format("{:g}: nothing met the floor at {}", weight, listed(failed));
        break;
      }
      failed.push_back(fmt::format("{:g} in {} tries", weight, next.search.evals().size()));
    }
    if (!searched->search.best()) tries = "at trellis weight " + listed(failed);
  }
  Arm& arm = *searched;
  const std::vector<LevelEval>& evals = arm.search.evals();
  const LevelEval* best = arm.search.best();
  if (!best) {
    // Put the source's coefficients back: the output is the lossless one.
    st.rq.restore_source();
    result.detail = fmt::format("lossless only (no requantisation met SSIMULACRA2 {} {})",
                                floor_text(st.floor), tries);
    return result;
  }
  // The last bytes of headroom, at lighter trellis weights (easing.h); the image's arrays then
  // hold the lightest candidate kept, or the best pass again.
  std::optional<LevelEval> eased;
  size_t evaluations = failed_evaluations + st.dropped_whole_evaluations + evals.size();
  const LevelEval searched_best = *best;
  EasingTrials trials;
  trials.searched_weight = arm.rdo.strength;
  trials.headroom = searched_best.score - st.floor;
  // What the image's arrays hold: the last candidate scored.
  double weight = arm.rdo.strength;
  auto out_of_time = [&] { return st.context && st.context->out_of_time(); };
  // Scores `w` at the search's level; keeps it if it meets the floors in fewer bytes.
  auto try_weight = [&](double w) {
    LevelEval e = st.score_candidate(st.rq, st.reference, RdoParams{w}, searched_best.level, true);
    ++evaluations;
    const bool kept = arm.search.meets_floors(e) && e.bytes < best->bytes;
    if (kept) {
      eased = e;
      best = &*eased;
      weight = w;
    }
    trials.trials.push_back({WeightTrial{w, e.score, e.worst}, kept});
  };
  const double first_weight =
      st.policy.effort >= kEaseMinEffort
          ? eased_trellis_weight(arm.rdo.strength, searched_best.score - st.pass, st.floor,
                                 searched_best.worst - arm.search.worst_floor())
          : arm.rdo.strength;
  if (first_weight < arm.rdo.strength && !out_of_time()) {
    try_weight(first_weight);
    const size_t max_trials = st.policy.effort >= kEaseThirdTrialMinEffort ? 3 : 2;
    while (trials.trials.size() < max_trials && !out_of_time()) {
      const std::optional<double> next =
          further_eased_weight({arm.rdo.strength, searched_best.score, searched_best.worst},
                               trials.trials, st.pass, arm.search.worst_floor());
      if (!next) break;
      try_weight(*next);
    }
  }
  if (st.held != std::pair(best->level, weight))
    st.rq.apply(st.rq.tables_for(permille_of(best->level)), RdoParams{weight});
  const std::string easing = easing_detail(trials);
  result.requantized = true;
  result.score = best->score;
  result.worst_tile = best->worst;
  result.fingerprint = best->fingerprint;
  result.detail = fmt::format(
      "requantised q~{} -> q{:.2f} (Robidoux-shaped tables) with trellis{}{}, SSIMULACRA2 {:.2f} "
      "(worst tile {:.1f}, floor {}, {} evaluations{}{}{})",
      st.q_src, quality_of(best->level), st.race.empty() ? "" : " (weight " + st.race + ")", easing,
      best->score, best->worst, floor_text(st.floor), evaluations,
      sampled_evaluations
          ? fmt::format(" after {} on a quarter of the rows{}", sampled_evaluations,
                        arm.sampled && arm.sampled->unrepresentative()
                            ? ", then on the whole image alone (the sample scored far above it)"
                            : "")
      : st.untracked_sample ? " on the whole image: its row sample did not track it"
                            : "",
      below_full_scale(st.reference)
          ? fmt::format("; under {0} px, the lower of it and the score mirrored out to {0} px",
                        kFullScaleSide)
          : "",
      !st.colour ? ""
      : st.colour->description().empty()
          ? "; colours read through its ICC profile"
          : fmt::format("; colours read through the ICC profile \"{}\"", st.colour->description()));
  return result;
}

double estimated_score(const ImageRgb8& reference, unsigned mcu_height,
                       const std::function<Bytes(const ImageRgb8&)>& encode,
                       J_COLOR_SPACE color_space, const ProfileColour* colour) {
  const std::vector<McuRows> bands = sample_bands(reference.width, reference.height, mcu_height);
  // Only the sample's rows are encoded and decoded (a quarter of the work), as the search
  // decodes them: whole MCU rows encode to the coefficients they have in the whole image.
  const std::optional<ImageRgb8> rows =
      bands.empty() ? std::nullopt : std::optional(pixel_rows(reference, bands, mcu_height));
  const ImageRgb8& scored = rows ? *rows : reference;
  const std::optional<ImageRgb8> decoded =
      to_metric_image(decode_pixels(encode(scored), color_space), colour);
  if (!decoded) throw FormatError(Reason::kInternalError, 0, "an image the metric cannot read");
  return floor_score(scored, *decoded, search_metric(colour)).score -
         (rows ? kSampleFlattery : 0.0);
}

PerceptualResult requantize_for_floor(CoefficientImage& image, ByteView input, const Layout& layout,
                                      const Policy& policy, const Context* context,
                                      std::optional<ImageRgb8>& reference) {
  const std::optional<ProfileColour> colour =
      metric_colour(layout, image.info().num_components, policy);
  return FloorSearch(image, input, layout, policy, context, reference, colour ? &*colour : nullptr)
      .run();
}

}  // namespace lighten::jpeg
