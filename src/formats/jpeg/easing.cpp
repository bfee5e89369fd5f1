#include "formats/jpeg/easing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

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

std::string easing_detail(const EasingTrials& t) {
  if (!t.first) return "";
  const double w0 = t.searched_weight;
  if (!t.second) {
    return t.first_kept
               ? fmt::format(" (weight eased to {:.2f} from {:g}: {:.2f} points of headroom)",
                             t.first->weight, w0, t.headroom)
               : fmt::format(" (weight {:.2f} scored {:.2f})", t.first->weight, t.first->score);
  }
  if (t.second_kept)
    return t.first_kept
               ? fmt::format(
                     " (weight eased to {:.2f} from {:g} in two steps: {:.2f} points of "
                     "headroom)",
                     t.second->weight, w0, t.headroom)
               : fmt::format(
                     " (weight eased to {:.2f} from {:g} after {:.2f} scored {:.2f}: {:.2f} "
                     "points of headroom)",
                     t.second->weight, w0, t.first->weight, t.first->score, t.headroom);
  return t.first_kept
             ? fmt::format(
                   " (weight eased to {:.2f} from {:g}: {:.2f} points of headroom; {:.2f} "
                   "scored {:.2f})",
                   t.first->weight, w0, t.headroom, t.second->weight, t.second->score)
             : fmt::format(" (weights {:.2f} and {:.2f} scored {:.2f} and {:.2f})", t.first->weight,
                           t.second->weight, t.first->score, t.second->score);
}

}  // namespace lighten::jpeg
