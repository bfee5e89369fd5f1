// The last trials of a perceptual search: a lighter trellis weight at the level found, for the
// headroom that the table levels' steps leave above the floor.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace lighten::jpeg {

// The trials run from effort kEaseMinEffort on. Table levels move the score in steps (one
// quarter-quality level moved camera photos by up to 0.5 points at floor 80; where the two
// lowest AC entries change at once, 1.2 at floor 70), so the smallest pass often sits a few
// tenths above the floor; a lighter trellis weight at that level (more coefficients zeroed in
// busy blocks) gives the headroom back in finer steps. Headroom is counted above what candidates
// must score (the floor plus the quick metric's slack of 0.01).
// The first trial aims kEaseAimAbove over that with a prior for how fast the score falls with the
// weight: per unit of ln(weight) at the photos' passes, 0.5-4.8 points at floor 80 (median 2.4)
// and 1.4-19 at floor 70 (median 3.9), for weights down to kEaseLightest times the search's: no
// further on a prior alone (a search that ended points above the floor, its coarser levels
// failing, is not eased into the unmeasured). A lighter candidate that fails is dropped.
inline constexpr int kEaseMinEffort = 4;
inline constexpr double kEaseMinHeadroom = 0.1, kEaseAimAbove = 0.05, kEaseLightest = 0.7;
// The worst tile falls faster with the weight than the score, and further apart: 0.2-15 points
// per unit of ln(weight) at the 16 camera photos' passes at floor 70 (median 5.2). Where it lies
// near its own floor, it decides how far the first trial may go (with 12, one of those photos
// came out 0.25 % larger and none smaller).
inline constexpr double kEaseWorstTileSensitivity = 8.0;
// The trellis weight to try in place of `weight` for a pass `headroom` points above what
// candidates must score, at `floor`, its worst tile `worst_headroom` above its own floor;
// `weight` itself when either headroom is under kEaseMinHeadroom (a worst tile at its floor
// fails at any lighter weight: on two of those photos, three trials of 16 and 22 MP were lost).
double eased_trellis_weight(double weight, double headroom, double floor, double worst_headroom);

// A whole-image candidate at one trellis weight, as easing weighs it.
struct WeightTrial {
  double weight = 0;
  double score = 0, worst = 0;  // SSIMULACRA2 and its worst tile
};

// The second trial, where the first missed: the prior is only a median, and the heavier weight
// raced on text and detailed photos lost 0.07 points where it predicted 0.42. Through the
// search's pass (`searched`) and the first trial (`tried`) run two lines against ln(weight), one
// for the score and one for the worst tile; the second weight is the lightest at which both stay
// kEaseAimAbove over their floors (`pass`, `worst_pass`): lighter than a first trial that passed
// with kEaseMinHeadroom or more to spare (on a measured line, down to kEaseLightest times the
// first: 0.49 times the search's weight), between the two where the first failed.
// nullopt where the first passed with less to spare, where neither line falls with the weight,
// where the lines put the answer on the first trial's side (a worst tile already at its floor),
// or where it lies within 1 % of a weight already scored. On the 16 camera photos, outputs 0.97 %
// (visually-lossless), 0.08 % (high) and 0.26 % (compact) smaller, for 15, 12 and 9 % more
// scoring (row samples counted by their pixels).
std::optional<double> second_eased_weight(const WeightTrial& searched, const WeightTrial& tried,
                                          double pass, double worst_pass);

// Effort from which one more trial follows the second (further_eased_weight). On the 16 camera
// photos at effort 5 with it: outputs 0.33 % (visually-lossless), 0.09 % (high) and 0.01 %
// (compact) smaller for about 5 % more CPU; so not by default.
inline constexpr int kEaseThirdTrialMinEffort = 6;

// A lighter weight tried, and whether it was kept (met the floors in fewer bytes).
struct EasedTrial {
  WeightTrial trial;
  bool kept = false;
};

// The next weight to try after `tried` (in the order tried, at least one): second_eased_weight
// through the two measured points that bracket the aim most closely: the lightest that met the
// floors (the search's pass where none did) and the heaviest lighter one that failed, or, where
// every trial passed, the lightest and the next heavier one.
std::optional<double> further_eased_weight(const WeightTrial& searched,
                                           const std::vector<EasedTrial>& tried, double pass,
                                           double worst_pass);

// What the detail says of the trials from `searched_weight` (`headroom` over the floor): the
// weight kept last and the steps to it, and the lighter weights that failed, with their scores.
struct EasingTrials {
  double searched_weight = 0, headroom = 0;
  std::vector<EasedTrial> trials;
};
std::string easing_detail(const EasingTrials& trials);

}  // namespace lighten::jpeg
