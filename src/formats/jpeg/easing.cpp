#include "formats/jpeg/easing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace lighten::jpeg {
namespace {

// Points of SSIMULACRA2 lost per unit of ln(trellis weight) that the first trial assumes: near
// the median at floor 80 and above; at floor 70, where the spread is wider, above it (at the
// median, 10 of the 16 photos' eased candidates failed; at 4.5, one).
double weight_sensitivity(double floor) { return std::clamp(2.5 + 0.2 * (80.0 - floor), 2.5, 4.5); }

// A measure that moved less than this between two weights gives no line to follow.
constexpr double kMinFall = 0.01;
// Weights closer than this (relative) to one already scored are not scored again.
constexpr double kMinWeightChange = 0.01;

}  // namespace

double eased_trellis_weight(double weight, double headroom, double floor, double worst_headroom) {
  if (!(headroom >= kEaseMinHeadroom) || !(worst_headroom >= kEaseMinHeadroom)) return weight;
  const double step = std::min((headroom - kEaseAimAbove) / weight_sensitivity(floor),
                               (worst_headroom - kEaseAimAbove) / kEaseWorstTileSensitivity);
  return weight * std::max(kEaseLightest, std::exp(-step));
}

std::optional<double> second_eased_weight(const WeightTrial& searched, const WeightTrial& tried,
                                          double pass, double worst_pass) {
  const double span = std::log(searched.weight / tried.weight);
  if (!(span > 0)) return std::nullopt;
  const bool tried_passes = tried.score >= pass && tried.worst >= worst_pass;
  if (tried_passes && tried.score - pass < kEaseMinHeadroom) return std::nullopt;
  struct Line {
    double at_searched, at_tried, floor;
  };
  double weight = 0;
  bool bounded = false;
  for (const Line& line :
       {Line{searched.score, tried.score, pass}, Line{searched.worst, tried.worst, worst_pass}}) {
    const double fall = line.at_searched - line.at_tried;
    if (!(fall > kMinFall)) continue;
    const double headroom = line.at_searched - line.floor - kEaseAimAbove;
    weight = std::max(weight, searched.weight * std::exp(-headroom * span / fall));
    bounded = true;
  }
  if (!bounded) return std::nullopt;
  weight = std::clamp(weight, kEaseLightest * tried.weight, searched.weight);
  const bool beyond = tried_passes ? weight < tried.weight : weight > tried.weight;
  if (!beyond || std::abs(weight / tried.weight - 1) < kMinWeightChange ||
      std::abs(weight / searched.weight - 1) < kMinWeightChange)
    return std::nullopt;
  return weight;
}

namespace {

bool meets_floors(const WeightTrial& t, double pass, double worst_pass) {
  return t.score >= pass && t.worst >= worst_pass;
}

}  // namespace

std::optional<double> further_eased_weight(const WeightTrial& searched,
                                           const std::vector<EasedTrial>& tried, double pass,
                                           double worst_pass) {
  WeightTrial heavier = searched;
  for (const EasedTrial& t : tried)
    if (meets_floors(t.trial, pass, worst_pass) && t.trial.weight < heavier.weight)
      heavier = t.trial;
  std::optional<WeightTrial> lighter;
  for (const EasedTrial& t : tried)
    if (!meets_floors(t.trial, pass, worst_pass) && t.trial.weight < heavier.weight &&
        (!lighter || t.trial.weight > lighter->weight))
      lighter = t.trial;
  if (lighter) return second_eased_weight(heavier, *lighter, pass, worst_pass);
  if (heavier.weight == searched.weight) return std::nullopt;
  // Every trial passed: on along the line from the next heavier point.
  WeightTrial next = searched;
  for (const EasedTrial& t : tried)
    if (t.trial.weight > heavier.weight && t.trial.weight < next.weight) next = t.trial;
  return second_eased_weight(next, heavier, pass, worst_pass);
}

namespace {

// "0.44 scored 80.30", "0.44 and 0.41 scored 80.30 and 80.05", "0.44, 0.41 and 0.4 scored ...".
std::string weights_scored(const std::vector<WeightTrial>& trials) {
  std::string weights, scores;
  for (size_t i = 0; i < trials.size(); ++i) {
    const char* joint = i == 0 ? "" : i + 1 == trials.size() ? " and " : ", ";
    weights += fmt::format("{}{:.2f}", joint, trials[i].weight);
    scores += fmt::format("{}{:.2f}", joint, trials[i].score);
  }
  return weights + " scored " + scores;
}

}  // namespace

std::string easing_detail(const EasingTrials& t) {
  if (t.trials.empty()) return "";
  std::optional<size_t> last_kept;
  int kept = 0;
  for (size_t i = 0; i < t.trials.size(); ++i)
    if (t.trials[i].kept) last_kept = i, ++kept;
  std::vector<WeightTrial> failed_before, failed_after;
  for (size_t i = 0; i < t.trials.size(); ++i)
    if (!t.trials[i].kept)
      (last_kept && i < *last_kept ? failed_before : failed_after).push_back(t.trials[i].trial);
  if (!last_kept)
    return fmt::format(" (weight{} {})", failed_after.size() > 1 ? "s" : "",
                       weights_scored(failed_after));
  constexpr const char* kSteps[] = {"", "", " in two steps", " in three steps"};
  std::string detail = fmt::format(
      " (weight eased to {:.2f} from {:g}{}", t.trials[*last_kept].trial.weight, t.searched_weight,
      kept < 4 ? std::string(kSteps[kept]) : fmt::format(" in {} steps", kept));
  if (!failed_before.empty()) detail += " after " + weights_scored(failed_before);
  detail += fmt::format(": {:.2f} points of headroom", t.headroom);
  if (!failed_after.empty()) detail += "; " + weights_scored(failed_after);
  return detail + ")";
}

}  // namespace lighten::jpeg
