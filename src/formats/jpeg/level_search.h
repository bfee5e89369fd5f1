// The search over requantisation levels: a bracket between the finest level known to fail the
// floor and the coarsest known to pass, closed by a straight-line model of SSIMULACRA2 against
// the log of a cheap DCT-domain distortion estimate. Large images are searched on a sample of
// their rows and only confirmed on the whole image (see search_with_sample).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "core/context.h"

namespace lighten::jpeg {

// Search levels: four per IJG quality (level 4q is quality q), higher is finer. Quarter steps
// matter: at fine scales one step of whole qualities flips many table entries at once.
inline constexpr int kLevelsPerQuality = 4;
inline int permille_of(int level) {
  return level >= 200 ? 2000 - 5 * level : 200000 / (level > 1 ? level : 1);
}
inline double quality_of(int level) { return double(level) / kLevelsPerQuality; }

// SSIMULACRA2 falls about this much per unit of ln(squared DCT error) (-4.6 to -15 measured on
// camera photos); used until two evaluations give the file's own slope.
inline constexpr double kPriorSlope = -6.0;

struct LevelEval {
  int level = 0;
  double score = 0, worst = 0;  // whole-image SSIMULACRA2 and its worst tile
  size_t bytes = 0;
  bool passes = false;               // set by the search against its floor
  DecodedFingerprint fingerprint{};  // of the coefficients that were scored (whole image only)
};
using Evaluate = std::function<LevelEval(int level)>;

struct LevelSearchParams {
  int budget = 4;            // new evaluations
  bool may_extend = true;    // one more when the budget ends well above the floor
  double aim_outside = 1.0;  // above the floor, when extrapolating from one side
  // Stop once a passing evaluation lands less than this above the floor (never by default).
  double stop_within = -1e9;
  // With may_extend, a second one more when the budget ends again far above both floors, the
  // bracket still wider than a quality: for a whole image searched on its own, whose score bends
  // away from the lines (a 1 MP photo coded as RGB planes stopped 4.5 points above compact's
  // floor with 6.75 qualities between its pass and a failure 0.24 under; the second landed 0.7
  // above, and the output came out 8 % smaller).
  bool may_extend_twice = false;
};

class LevelSearch {
 public:
  // Passing means score >= floor and worst tile >= worst_floor. `log_distortion[l]` for every
  // level l in [lo, hi]; levels outside are never tried.
  LevelSearch(double floor, double worst_floor, int lo, int hi,
              const std::vector<double>& log_distortion)
      : floor_(floor),
        worst_floor_(worst_floor),
        lo_(lo),
        hi_(hi),
        log_d_(log_distortion),
        fail_(lo - 1),
        pass_(hi + 1) {}

  // Evaluates `start` (unless already known) and then the levels the model picks.
  void run(int start, const LevelSearchParams& params, const Evaluate& evaluate,
           const Context* context);
  double worst_floor() const { return worst_floor_; }
  // Whether `e` meets both floors (score and worst tile), as every evaluation's `passes` says.
  bool meets_floors(const LevelEval& e) const {
    return e.score >= floor_ && e.worst >= worst_floor_;
  }
  // Takes an evaluation made elsewhere (same image) as if this search had made it.
  const LevelEval& add(LevelEval e);

  const std::vector<LevelEval>& evals() const { return evals_; }
  const LevelEval* find(int level) const;
  // The smallest passing evaluation, or null.
  const LevelEval* best() const;
  // The bracket: finest level seen to fail (lo - 1 when none), coarsest seen to pass (hi + 1).
  int finest_failing() const { return fail_; }
  int coarsest_passing() const { return pass_; }
  // The model's slope from the evaluations so far (through the bracket when there is one), for
  // the whole-image score and for the worst tile.
  // `from`: the evaluation the next line is drawn through.
  double slope(const LevelEval& from) const;
  double worst_slope(const LevelEval& from) const;
  const std::vector<double>& log_distortion() const { return log_d_; }

 private:
  // Through the bracket's ends (the far end pulled towards `floor` while evaluations keep
  // landing on the near side), else through the last two evaluations; kPriorSlope when flat.
  double model_slope(double LevelEval::*value, double floor, const LevelEval& from) const;
  // The coarsest level inside the bracket where the line through `from` with `slope` reaches
  // `target` for `value` (score or worst tile); `otherwise` when none does.
  int coarsest_predicted(const LevelEval& from, double LevelEval::*value, double slope,
                         double target, int otherwise) const;

  double floor_, worst_floor_;
  int lo_, hi_;
  const std::vector<double>& log_d_;
  int fail_, pass_;
  std::vector<LevelEval> evals_;
  size_t run_first_ = 0;  // the first of evals_ the current run() made
};

// Whether a sample's distortion estimate changes with the level as the whole image's does: from
// `start` to every level of [lo, hi] where the whole image's (ln of squared error) changes by
// kTrackedMinChange or more, the sample's changes by the same within a factor of
// kSampleChangeRatio; the nearly lossless levels (more than kTrackedDepth under the value at
// `start`), where both are noise, are left out. A sample that changes less lies where the image
// is flat while its detail lies between the bands: its scores barely move with the level. (On
// the corpus's camera photos the smallest ratio was 0.62 to 1.0 per file in all three modes, and
// 0.16 to 0.45 on a 16 MP photo whose bands missed its subject.)
inline constexpr double kSampleChangeRatio = 2.0, kTrackedMinChange = 0.5, kTrackedDepth = 2.0;
bool sample_tracks_whole(const std::vector<double>& sample_log_d,
                         const std::vector<double>& whole_log_d, int lo, int hi, int start);

// The search of a large image: candidates are scored on `on_sample` (a sample of its rows, a
// fraction of the cost) against floors moved by the sample's measured offsets from the whole
// image, and each level the sample picks is confirmed on `on_whole`; the differences between the
// two scores there (whole image and worst tile) become the next offsets. Ends when a whole-image
// evaluation passes within `stop_within` of the floor, the bracket closes, or `whole_budget` is
// spent (one more while nothing has passed); then refines on the whole image alone when the
// sample misled (`refine_above`). A sample that scores far above the whole image
// (`unrepresentative_*`) ends the rounds at once: the whole image is then searched on its own
// evaluations with what is left of the budget. `whole` gets the whole-image evaluations; returns
// how many sample evaluations were made.
struct SampledSearchParams {
  int sample_budget = 4;  // per round
  int whole_budget = 3;
  // Whole minus sample before the first confirmation (the sample's seams and fewer tiles flatter
  // it: -0.4 to -3.9 on the score, more on the worst tile, measured on camera photos before
  // samples that do not track the whole image were set aside; -2.1 at most since).
  double prior_offset = -0.8, prior_worst_offset = -1.5;
  double stop_within = 0.6;
  // A sample that does not track the whole image (a flat sample of a photo whose detail lies
  // between its bands) can leave the best whole-image pass far above the floor: past this much
  // above it (score and worst tile alike), the whole image is searched on its own evaluations,
  // inside its bracket, for up to `refine_budget` more.
  double refine_above = 2.0;
  int refine_budget = 2;
  // Whole minus sample past which the sample does not represent the image. The samples kept of
  // the corpus's camera photos ranged down to -2.1 (score) and -6.8 (worst tile) over 72
  // confirmations in the three modes; pages of text sampled where the paper is bare, to -7.2
  // and -20.7.
  double unrepresentative_offset = -3.5, unrepresentative_worst_offset = -9.0;
};
int search_with_sample(LevelSearch& whole, double floor, double worst_floor, int start,
                       const SampledSearchParams& params, const Evaluate& on_sample,
                       const Evaluate& on_whole, const Context* context);

// search_with_sample in two steps: `first_pick` runs only the first round's search on the
// sample, which tells what the image will roughly cost at the floor before any whole-image
// evaluation (two candidate sources of one image are compared by it); `finish` goes on from
// there, exactly as search_with_sample would have.
class SampledSearch {
 public:
  SampledSearch(LevelSearch& whole, double floor, double worst_floor, int start,
                const SampledSearchParams& params, Evaluate on_sample, Evaluate on_whole,
                const Context* context);
  // The sample's evaluation at the level the first round confirms on the whole image (valid
  // until finish()); null when there is none (time spent, or the whole image's bracket closed).
  const LevelEval* first_pick();
  // Whether that round found a level meeting the floors on the sample. Where none did, the pick
  // is the finest level of the bracket, for the whole image to settle.
  bool first_pick_met_floors() const { return first_pick_met_floors_; }
  // Returns the number of sample evaluations made, first round included.
  int finish();
  // Sample evaluations made so far.
  int sample_evaluations() const { return int(sampled_.size()); }
  // Whether a confirmation showed the sample unrepresentative (after finish()).
  bool unrepresentative() const { return unrepresentative_; }

 private:
  // One round's search on the sample from `level` with the given offsets; the pick strictly
  // inside the whole image's bracket, or nullopt.
  // `met_floors` (when given) tells whether any level met the floors on the sample.
  std::optional<int> sample_pick(int level, double offset, double worst_offset,
                                 bool* met_floors = nullptr);
  const LevelEval& sample_at(int level);

  LevelSearch& whole_;
  double floor_, worst_floor_;
  int lo_, hi_;  // the levels the sample's searches may try: the whole image's first bracket
  int start_;
  SampledSearchParams params_;
  Evaluate on_sample_, on_whole_;
  const Context* context_;
  std::vector<LevelEval> sampled_;  // every sample evaluation, reused by later rounds
  bool first_done_ = false;
  std::optional<int> first_pick_;
  bool first_pick_met_floors_ = false;
  bool unrepresentative_ = false;
};

}  // namespace lighten::jpeg
