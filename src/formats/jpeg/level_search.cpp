#include "formats/jpeg/level_search.h"

#include <algorithm>
#include <cmath>

namespace lighten::jpeg {
namespace {

// Aim a little above the floor: the model is a straight line, the metric is not. Further when
// extrapolating (a parameter) than when interpolating inside a bracket: a miss on the last
// evaluation leaves an earlier, larger candidate.
constexpr double kAimInside = 0.3;
// How far above the floor the best candidate may land before the search spends one evaluation
// beyond its budget.
constexpr double kExtraEvaluationSlack = 0.4;
// How far above both floors the best candidate must still be for a second one (as far as a
// sampled search's best pass must be before the whole image is refined on its own).
constexpr double kFarAboveFloors = 2.0;
// A pass this far above both floors with nothing predicted to pass between it and a failure is
// taken as a sign that the lines, not the image, are wrong (see run).
constexpr double kUntrustedLineHeadroom = 5.0;

}  // namespace

const LevelEval* LevelSearch::find(int level) const {
  for (const LevelEval& e : evals_)
    if (e.level == level) return &e;
  return nullptr;
}

const LevelEval* LevelSearch::best() const {
  const LevelEval* best = nullptr;
  for (const LevelEval& e : evals_)
    if (e.passes && (!best || e.bytes < best->bytes)) best = &e;
  return best;
}

const LevelEval& LevelSearch::add(LevelEval e) {
  e.passes = meets_floors(e);
  if (e.passes)
    pass_ = std::min(pass_, e.level);
  else
    fail_ = std::max(fail_, e.level);
  evals_.push_back(e);
  return evals_.back();
}

double LevelSearch::model_slope(double LevelEval::*value, double floor,
                                const LevelEval& from) const {
  const LevelEval* lo = find(fail_);
  const LevelEval* hi = find(pass_);
  double lo_value = 0, hi_value = 0;
  if (lo && hi) {
    lo_value = lo->*value, hi_value = hi->*value;
    // The Illinois rule: where the score bends, a line through the bracket's ends moves the near
    // end a little at a time while the far end stays put (from a pass at q98 to the floor of a
    // screenshot at q92, five evaluations at 0.7-1.5 qualities each). Each evaluation of this
    // run beyond the first that lands on the same side halves the far end's distance to the
    // floor: only when the line is drawn from the latest evaluation, the near end, and the ends
    // lie on either side of this line's floor (a worst tile can decide the bracket alone).
    const LevelEval& latest = evals_.back();
    int same_side = 0;
    for (size_t i = evals_.size(); i > run_first_ && evals_[i - 1].passes == latest.passes; --i)
      ++same_side;
    double& near = latest.passes ? hi_value : lo_value;
    double& far = latest.passes ? lo_value : hi_value;
    if (same_side >= 2 && &from == &latest && (near >= floor) != (far >= floor))
      far = floor + (far - floor) * std::ldexp(1.0, -std::min(same_side - 1, 30));
  } else if (evals_.size() >= 2) {
    lo = &evals_[evals_.size() - 2];
    hi = &evals_.back();
    lo_value = lo->*value, hi_value = hi->*value;
  }
  double slope = kPriorSlope;
  if (lo && hi && log_d_[size_t(lo->level)] != log_d_[size_t(hi->level)])
    slope = (hi_value - lo_value) / (log_d_[size_t(hi->level)] - log_d_[size_t(lo->level)]);
  return slope < -1.0 ? slope : kPriorSlope;
}

double LevelSearch::slope(const LevelEval& from) const {
  return model_slope(&LevelEval::score, floor_, from);
}
double LevelSearch::worst_slope(const LevelEval& from) const {
  return model_slope(&LevelEval::worst, worst_floor_, from);
}

int LevelSearch::coarsest_predicted(const LevelEval& from, double LevelEval::*value, double slope,
                                    double target, int otherwise) const {
  for (int c = fail_ + 1; c < pass_ && c <= hi_; ++c) {
    const double predicted = from.*value + slope * (log_d_[size_t(c)] - log_d_[size_t(from.level)]);
    if (predicted >= target) return c;
  }
  return otherwise;
}

void LevelSearch::run(int start, const LevelSearchParams& params, const Evaluate& evaluate,
                      const Context* context) {
  int level = std::clamp(start, lo_, hi_);
  int budget = params.budget;
  run_first_ = evals_.size();
  int extensions = 0;
  const int max_extensions = !params.may_extend ? 0 : params.may_extend_twice ? 2 : 1;
  // Known levels cost nothing; every step narrows the bracket, so this ends.
  for (int n = 0; n < budget && pass_ - fail_ > 1;) {
    const LevelEval* known = find(level);
    if (!known && context && context->out_of_time()) break;
    const LevelEval& e = known ? *known : add(evaluate(level));
    if (!known) ++n;
    if (pass_ - fail_ <= 1) break;
    if (e.passes && e.score < floor_ + params.stop_within) break;
    // A budget spent with the best candidate still well above the floor (scores jump where the
    // new tables meet the source's) buys one more evaluation inside the bracket; spent again far
    // above both floors with the bracket still wider than a quality, a second (where allowed).
    if (n == budget && extensions < max_extensions) {
      const LevelEval* coarsest = find(pass_);
      const bool second = extensions > 0;
      const double slack = second ? kFarAboveFloors : kExtraEvaluationSlack;
      if (coarsest && coarsest->score > floor_ + slack &&
          (!second ||
           (coarsest->worst > worst_floor_ + slack && pass_ - fail_ > kLevelsPerQuality))) {
        ++budget;
        ++extensions;
      }
    }
    // Model: score = a + b ln D through the latest evaluation.
    const bool inside = fail_ >= lo_ && pass_ <= hi_;
    const double slope = this->slope(e);
    double target = floor_ + (inside ? kAimInside : params.aim_outside);
    // From a pass already below that, every coarser level is predicted to miss it and the search
    // would creep one level at a time: aim between the floor and that pass instead.
    if (e.passes && e.score < target)
      target = floor_ + std::min(kAimInside, (e.score - floor_) / 2);
    // The worst tile follows its own line, and the next level must reach both: on pages of
    // text the worst tile lies far under the score and climbs two to three times as fast with
    // the level, so neither the score's line nor fixed steps reach it in few evaluations.
    double worst_target = worst_floor_ + (inside ? kAimInside : params.aim_outside);
    if (e.worst >= worst_floor_ && e.worst < worst_target)
      worst_target = worst_floor_ + std::min(kAimInside, (e.worst - worst_floor_) / 2);
    // Where nothing is predicted to pass: the finest level inside the bracket for the score (the
    // search had always gone there), and for the worst tile too after a failure; after a pass,
    // nothing coarser is predicted to keep the worst tile, and the search ends.
    const int finest = std::min(pass_ - 1, hi_);
    int next = std::max(coarsest_predicted(e, &LevelEval::score, slope, target, finest),
                        coarsest_predicted(e, &LevelEval::worst, worst_slope(e), worst_target,
                                           e.passes ? pass_ : finest));
    // A failing worst tile is a minimum over tiles, less straight than the score: at least a
    // quality finer, whatever its line says.
    if (!e.passes && e.worst < worst_floor_)
      next = std::max(next, std::min(level + kLevelsPerQuality, pass_ - 1));
    // The distortion estimate falls towards zero where the new tables meet the source's, so its
    // log drops without bound over the last levels, and a line through a failure far below the
    // floor and a pass there predicts nothing, or only the last quality, between them: a
    // 4097x3 strip at q95 failed at q65 (37.9) and passed at q97.25 (94.2) in compact, and the
    // search ended there, where q86.25 scores 80. A pass far above both floors does not fall
    // under them within one quality: the middle of the bracket is tried instead.
    const LevelEval* coarsest = find(pass_);
    if (next > pass_ - kLevelsPerQuality && coarsest && pass_ - fail_ > 2 * kLevelsPerQuality &&
        coarsest->score >= target + kUntrustedLineHeadroom &&
        coarsest->worst >= worst_target + kUntrustedLineHeadroom)
      next = (fail_ + pass_) / 2;
    if (next <= fail_ || next >= pass_) break;
    level = next;
  }
}

bool sample_tracks_whole(const std::vector<double>& sample_log_d,
                         const std::vector<double>& whole_log_d, int lo, int hi, int start) {
  start = std::clamp(start, lo, hi);
  const double s0 = sample_log_d.at(size_t(start)), w0 = whole_log_d.at(size_t(start));
  for (int l = lo; l <= hi; ++l) {
    const double w = whole_log_d.at(size_t(l)) - w0, s = sample_log_d.at(size_t(l)) - s0;
    if (w < -kTrackedDepth || std::abs(w) < kTrackedMinChange) continue;
    const double ratio = s / w;
    if (!(ratio >= 1 / kSampleChangeRatio && ratio <= kSampleChangeRatio)) return false;
  }
  return true;
}

int search_with_sample(LevelSearch& whole, double floor, double worst_floor, int start,
                       const SampledSearchParams& params, const Evaluate& on_sample,
                       const Evaluate& on_whole, const Context* context) {
  return SampledSearch(whole, floor, worst_floor, start, params, on_sample, on_whole, context)
      .finish();
}

SampledSearch::SampledSearch(LevelSearch& whole, double floor, double worst_floor, int start,
                             const SampledSearchParams& params, Evaluate on_sample,
                             Evaluate on_whole, const Context* context)
    : whole_(whole),
      floor_(floor),
      worst_floor_(worst_floor),
      lo_(whole.finest_failing() + 1),
      hi_(whole.coarsest_passing() - 1),
      start_(start),
      params_(params),
      on_sample_(std::move(on_sample)),
      on_whole_(std::move(on_whole)),
      context_(context) {}

const LevelEval& SampledSearch::sample_at(int level) {
  for (const LevelEval& e : sampled_)
    if (e.level == level) return e;
  sampled_.push_back(on_sample_(level));
  return sampled_.back();
}

std::optional<int> SampledSearch::sample_pick(int level, double offset, double worst_offset,
                                              bool* met_floors) {
  // The sample's search against the floors as the sample sees them.
  LevelSearch on_rows(floor_ - offset, worst_floor_ - worst_offset, lo_, hi_,
                      whole_.log_distortion());
  for (const LevelEval& e : sampled_) on_rows.add(e);
  on_rows.run(
      level, {.budget = params_.sample_budget, .stop_within = params_.stop_within},
      [&](int l) { return sample_at(l); }, context_);
  if (met_floors) *met_floors = on_rows.best() != nullptr;
  // Its pick, kept strictly inside the whole image's bracket.
  const int pick = std::clamp(on_rows.coarsest_passing(), whole_.finest_failing() + 1,
                              whole_.coarsest_passing() - 1);
  if (pick <= whole_.finest_failing() || pick >= whole_.coarsest_passing()) return std::nullopt;
  return pick;
}

const LevelEval* SampledSearch::first_pick() {
  if (!first_done_) {
    first_done_ = true;
    if (!(context_ && context_->out_of_time()))
      first_pick_ = sample_pick(start_, params_.prior_offset, params_.prior_worst_offset,
                                &first_pick_met_floors_);
  }
  return first_pick_ ? &sample_at(*first_pick_) : nullptr;
}

int SampledSearch::finish() {
  double offset = params_.prior_offset, worst_offset = params_.prior_worst_offset;
  int level = start_;
  int budget = params_.whole_budget;
  int whole_evaluations = 0;
  for (int round = 0; round < budget; ++round) {
    // Also before a first round run earlier: time may have run out since (another search).
    if (context_ && context_->out_of_time()) break;
    std::optional<int> pick;
    if (round == 0) {
      if (first_pick()) pick = first_pick_;
    } else {
      pick = sample_pick(level, offset, worst_offset);
    }
    if (!pick) break;
    const LevelEval& e = whole_.add(on_whole_(*pick));
    ++whole_evaluations;
    const LevelEval on_sample_there = sample_at(*pick);
    offset = e.score - on_sample_there.score;
    worst_offset = e.worst - on_sample_there.worst;
    level = *pick;
    if (e.passes && e.score < floor_ + params_.stop_within) break;
    if (offset < params_.unrepresentative_offset ||
        worst_offset < params_.unrepresentative_worst_offset) {
      unrepresentative_ = true;
      break;
    }
    if (round + 1 == budget && budget == params_.whole_budget && !whole_.best()) ++budget;
    if (whole_.coarsest_passing() - whole_.finest_failing() <= 1) break;
  }
  // The whole image alone, inside its bracket: with what is left of the budget when the sample
  // did not represent it, or to refine a best pass that the sample left far above the floor.
  // From the best pass, or from the failure just confirmed (both known: no evaluation).
  const LevelEval* best = whole_.best();
  const bool misled = best && best->score > floor_ + params_.refine_above &&
                      best->worst > worst_floor_ + params_.refine_above;
  if ((unrepresentative_ || misled) && whole_.coarsest_passing() - whole_.finest_failing() > 1) {
    const int left = unrepresentative_ ? std::max(params_.whole_budget - whole_evaluations, 0) : 0;
    whole_.run(best ? best->level : level,
               {.budget = left + params_.refine_budget,
                .may_extend = false,
                .stop_within = params_.stop_within},
               on_whole_, context_);
  }
  return int(sampled_.size());
}

}  // namespace lighten::jpeg
