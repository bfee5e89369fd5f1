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
  e.passes = e.score >= floor_ && e.worst >= worst_floor_;
  if (e.passes)
    pass_ = std::min(pass_, e.level);
  else
    fail_ = std::max(fail_, e.level);
  evals_.push_back(e);
  return evals_.back();
}

double LevelSearch::slope() const {
  const LevelEval* lo = find(fail_);
  const LevelEval* hi = find(pass_);
  if (!(lo && hi) && evals_.size() >= 2) {
    lo = &evals_[evals_.size() - 2];
    hi = &evals_.back();
  }
  double slope = kPriorSlope;
  if (lo && hi && log_d_[size_t(lo->level)] != log_d_[size_t(hi->level)])
    slope = (hi->score - lo->score) / (log_d_[size_t(hi->level)] - log_d_[size_t(lo->level)]);
  return slope < -1.0 ? slope : kPriorSlope;
}

void LevelSearch::run(int start, const LevelSearchParams& params, const Evaluate& evaluate,
                      const Context* context) {
  int level = std::clamp(start, lo_, hi_);
  int budget = params.budget;
  bool extended = !params.may_extend;
  // Known levels cost nothing; every step narrows the bracket, so this ends.
  for (int n = 0; n < budget && pass_ - fail_ > 1;) {
    const LevelEval* known = find(level);
    if (!known && context && context->out_of_time()) break;
    const LevelEval e = known ? *known : add(evaluate(level));
    if (!known) ++n;
    if (pass_ - fail_ <= 1) break;
    if (e.passes && e.score < floor_ + params.stop_within) break;
    // A budget spent with the best candidate still well above the floor (scores jump where the
    // new tables meet the source's) buys one more evaluation inside the bracket.
    if (n == budget && !extended) {
      const LevelEval* coarsest = find(pass_);
      if (coarsest && coarsest->score > floor_ + kExtraEvaluationSlack) {
        ++budget;
        extended = true;
      }
    }
    // Model: score = a + b ln D through the latest evaluation.
    const bool inside = fail_ >= lo_ && pass_ <= hi_;
    const double slope = this->slope();
    const double target = floor_ + (inside ? kAimInside : params.aim_outside);
    int next = -1;
    for (int c = fail_ + 1; c < pass_ && c <= hi_; ++c) {
      const double predicted = e.score + slope * (log_d_[size_t(c)] - log_d_[size_t(e.level)]);
      if (predicted >= target) {
        next = c;
        break;
      }
    }
    if (next < 0) next = std::min(pass_ - 1, hi_);  // nothing predicted to pass: go finest
    if (next <= fail_ || next >= pass_) break;
    // A local failure (worst tile) is not cured by a step the model thinks is enough.
    if (!e.passes && e.score >= floor_)
      next = std::max(next, std::min(level + 2 * kLevelsPerQuality, pass_ - 1));
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
  std::vector<LevelEval> sampled;  // every sample evaluation, reused by later rounds
  auto sample_at = [&](int level) {
    for (const LevelEval& e : sampled)
      if (e.level == level) return e;
    sampled.push_back(on_sample(level));
    return sampled.back();
  };
  const int lo = whole.finest_failing() + 1, hi = whole.coarsest_passing() - 1;
  double offset = params.prior_offset, worst_offset = params.prior_worst_offset;
  int level = start;
  int budget = params.whole_budget;
  for (int round = 0; round < budget; ++round) {
    if (context && context->out_of_time()) break;
    // The sample's search against the floors as the sample sees them.
    LevelSearch on_rows(floor - offset, worst_floor - worst_offset, lo, hi, whole.log_distortion());
    for (const LevelEval& e : sampled) on_rows.add(e);
    on_rows.run(
        level, {.budget = params.sample_budget, .stop_within = params.stop_within},
        [&](int l) { return sample_at(l); }, context);
    // Its pick, kept strictly inside the whole image's bracket.
    int pick = std::min(on_rows.coarsest_passing(), hi);
    pick = std::clamp(pick, whole.finest_failing() + 1, whole.coarsest_passing() - 1);
    if (pick <= whole.finest_failing() || pick >= whole.coarsest_passing()) break;
    const LevelEval& e = whole.add(on_whole(pick));
    const LevelEval on_sample_there = sample_at(pick);
    offset = e.score - on_sample_there.score;
    worst_offset = e.worst - on_sample_there.worst;
    if (e.passes && e.score < floor + params.stop_within) break;
    if (round + 1 == budget && budget == params.whole_budget && !whole.best()) ++budget;
    if (whole.coarsest_passing() - whole.finest_failing() <= 1) break;
    level = pick;
  }
  const LevelEval* best = whole.best();
  if (best && best->score > floor + params.refine_above &&
      best->worst > worst_floor + params.refine_above &&
      whole.coarsest_passing() - whole.finest_failing() > 1)
    whole.run(
        best->level,
        {.budget = params.refine_budget, .may_extend = false, .stop_within = params.stop_within},
        on_whole, context);
  return int(sampled.size());
}

}  // namespace lighten::jpeg
