// The level search on models whose answer is known, and the row sample it scores candidates on.
#include "formats/jpeg/level_search.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "core/errors.h"
#include "formats/jpeg/coefficients.h"
#include "formats/jpeg/perceptual.h"
#include "test_support.h"

namespace lighten::jpeg {
namespace {

// Evaluations of a file that scores `score(level)`, its worst tile 3 under that; `calls` counts
// them.
Evaluate scored_by(std::function<double(int)> score, int* calls) {
  return [score = std::move(score), calls](int level) {
    ++*calls;
    const double s = score(level);
    return LevelEval{.level = level, .score = s, .worst = s - 3, .bytes = size_t(level) * 100};
  };
}

// A file whose score rises by `per_level` with each finer level and meets 80 at level 300;
// its distortion estimate follows the same straight line the search assumes (slope -6).
struct LinearFile {
  double per_level = 0.15;
  std::vector<double> log_d = std::vector<double>(401);
  LinearFile() {
    for (size_t l = 0; l < log_d.size(); ++l) log_d[l] = -per_level / 6.0 * double(l);
  }
  double score(int level, double shift = 0) const {
    return 80.0 + per_level * (level - 300) + shift;
  }
  Evaluate evaluator(int* calls, double shift = 0) const {
    return scored_by([this, shift](int level) { return score(level, shift); }, calls);
  }
};

TEST(LevelSearch, FindsTheCoarsestPassingLevel) {
  const LinearFile file;
  int calls = 0;
  LevelSearch search(80.0, 70.0, 200, 400, file.log_d);
  search.run(260, {.budget = 6}, file.evaluator(&calls), nullptr);
  ASSERT_NE(search.best(), nullptr);
  EXPECT_GE(search.best()->score, 80.0);
  EXPECT_LE(search.best()->level, 303);  // within the aim above the floor
  EXPECT_LE(calls, 7);
  EXPECT_EQ(calls, int(search.evals().size()));
}

TEST(LevelSearch, AFailingWorstTileFails) {
  const LinearFile file;
  int calls = 0;
  // Every tile falls 3 under the score: a worst-tile floor 1 under the floor moves the answer
  // two points finer (about 13 levels).
  LevelSearch search(80.0, 79.0, 200, 400, file.log_d);
  search.run(300, {.budget = 8}, file.evaluator(&calls), nullptr);
  ASSERT_NE(search.best(), nullptr);
  EXPECT_GE(search.best()->worst, 79.0);
  for (const LevelEval& e : search.evals()) EXPECT_EQ(e.passes, e.score >= 80.0 && e.worst >= 79.0);
}

// A first pass a little above the floor (under the aim for extrapolating, 1 point) is followed
// by a step sized by the model towards the floor, not by one level at a time.
TEST(LevelSearch, APassNearTheFloorIsNotFollowedByOneLevelSteps) {
  const LinearFile file;
  int calls = 0;
  LevelSearch search(80.0, 70.0, 200, 400, file.log_d);
  search.run(305, {.budget = 4}, file.evaluator(&calls), nullptr);  // 305 scores 80.75
  ASSERT_NE(search.best(), nullptr);
  EXPECT_GE(search.best()->score, 80.0);
  EXPECT_LE(search.best()->level, 301);  // one level per evaluation would end at 302
  EXPECT_LE(calls, 4);
}

// A score that bends: nearly flat at the fine levels and falling ever faster at coarse ones (a
// screenshot of text, where the source's own tables are nearly lossless). The first pass is at
// the finest level, far above the floor; a line through the bracket's ends would then creep
// towards the floor a few levels per evaluation.
TEST(LevelSearch, ABendingScoreIsNotApproachedFromOneSideOnly) {
  const LinearFile file;  // its distortion estimate: straight in the level
  auto score = [](int level) { return 90.0 - 10.0 * std::exp((300 - level) / 25.0); };
  int calls = 0;
  LevelSearch search(80.0, 70.0, 200, 400, file.log_d);
  search.run(260, {.budget = 5}, scored_by(score, &calls), nullptr);
  ASSERT_NE(search.best(), nullptr);
  // Level 300 meets the floor exactly.
  EXPECT_LE(search.best()->level, 310) << search.best()->score;
}

// Where the new tables meet the source's, the distortion estimate falls towards zero and its log
// drops by whole units a level. From a failure far below the floor, the line reaches the floor
// only there, and from the pass it finds there, far above the floor, only the next level down:
// the middle of the bracket is tried instead of creeping down from the top.
TEST(LevelSearch, APassFarAboveTheFloorWhereTheEstimatePlungesIsNotFollowedLevelByLevel) {
  std::vector<double> log_d(393);
  for (size_t l = 0; l < log_d.size(); ++l)
    log_d[l] = l <= 384 ? -0.01 * double(l) : -3.84 - 2.0 * double(l - 384);
  auto score = [](int level) { return 70.0 + 0.4 * (level - 320); };  // meets 70 at 320
  int calls = 0;
  LevelSearch search(70.0, 60.0, 40, 392, log_d);
  search.run(260, {.budget = 4}, scored_by(score, &calls), nullptr);
  ASSERT_NE(search.best(), nullptr);
  EXPECT_GE(search.best()->score, 70.0);
  // From the first pass (386, scoring 96) the lines alone reached only 365 (88) in the budget.
  EXPECT_LE(search.best()->level, 330) << search.best()->score;
  EXPECT_LE(calls, 5);
}

// The scores of a 1 MP photo coded as RGB planes in compact, measured at six levels and joined by
// straight lines; its distortion estimate grows as the tables' steps to the power 1.2. From the
// start (84.3) the prior slope jumps to a failure far below the floor, and the lines from it
// approach the floor from above: the budget and its one extra evaluation end with a pass 3.5
// points above the floor and a failure 0.24 under it, 21 levels apart. A whole image searched on
// its own may spend a second extra evaluation there.
TEST(LevelSearch, ABracketLeftWideFarAboveTheFloorGetsASecondExtraEvaluation) {
  std::vector<double> log_d(393);
  for (size_t l = 1; l < log_d.size(); ++l) log_d[l] = 1.2 * std::log(permille_of(int(l)));
  auto score = [](int level) {
    const double levels[] = {40, 50, 119, 123, 146, 184, 260, 392};
    const double scores[] = {30, 36.1, 69.76, 70.7, 74.49, 78.68, 84.3, 95};
    int k = 1;
    while (k < 7 && level > levels[k]) ++k;
    return scores[k - 1] +
           (scores[k] - scores[k - 1]) * (level - levels[k - 1]) / (levels[k] - levels[k - 1]);
  };
  for (const bool twice : {false, true}) {
    int calls = 0;
    LevelSearch search(70.0, 60.0, 40, 392, log_d);
    search.run(260, {.budget = 4, .may_extend_twice = twice}, scored_by(score, &calls), nullptr);
    ASSERT_NE(search.best(), nullptr);
    EXPECT_GE(search.best()->score, 70.0);
    if (twice) {
      EXPECT_LE(search.best()->score, 71.0);
      EXPECT_EQ(calls, 6);
    } else {
      EXPECT_GT(search.best()->score, 72.0);  // where the search stopped before
      EXPECT_EQ(calls, 5);
    }
  }
}

TEST(LevelSearch, NothingPassingLeavesNoBest) {
  const LinearFile file;
  int calls = 0;
  LevelSearch search(80.0, 70.0, 200, 290, file.log_d);  // the floor lies beyond the finest level
  search.run(250, {.budget = 4}, file.evaluator(&calls), nullptr);
  EXPECT_EQ(search.best(), nullptr);
  EXPECT_LE(calls, 4);
}

// A page of text: the whole-image score meets floor 70 from level 250, but the worst tile (the
// densest text) lies far under it and climbs three times as fast, meeting its floor of 60 only
// from level 340.
struct TextPage {
  std::vector<double> log_d = LinearFile().log_d;
  static double score(int level) { return 70.0 + 0.15 * (level - 250); }
  static double worst(int level) { return 60.0 + 0.45 * (level - 340); }
  Evaluate evaluator(int* calls, double score_shift = 0, double worst_shift = 0) const {
    return [calls, score_shift, worst_shift](int level) {
      ++*calls;
      return LevelEval{.level = level,
                       .score = score(level) + score_shift,
                       .worst = worst(level) + worst_shift,
                       .bytes = size_t(level) * 100};
    };
  }
};

// A failing worst tile is followed along its own line, not in fixed steps: a pass near its floor
// in a few evaluations (steps of two qualities took ten to get there from 260).
TEST(LevelSearch, AFailingWorstTileIsFollowedAlongItsOwnLine) {
  const TextPage page;
  int calls = 0;
  LevelSearch search(70.0, 60.0, 40, 400, page.log_d);
  search.run(260, {.budget = 4}, page.evaluator(&calls), nullptr);
  ASSERT_NE(search.best(), nullptr);
  EXPECT_GE(search.best()->worst, 60.0);
  EXPECT_LE(search.best()->level, 345);
  // 260 fails, the finest level passes, and the line through both lands on the answer.
  EXPECT_LE(calls, 3);
}

// Its row sample falls where the page is blank: the sample's worst tile sits 20 points above the
// whole page's. The first confirmation shows that the sample does not represent the page, and
// the rest of the budget searches the whole page, ending near the worst tile's floor.
TEST(LevelSearch, AnUnrepresentativeSampleHandsTheSearchToTheWholeImage) {
  const TextPage page;
  int sample_calls = 0, whole_calls = 0;
  LevelSearch whole(70.0, 60.0, 40, 400, page.log_d);
  SampledSearch search(whole, 70.0, 60.0, 260, {}, page.evaluator(&sample_calls, 1.0, 20.0),
                       page.evaluator(&whole_calls), nullptr);
  search.finish();
  EXPECT_TRUE(search.unrepresentative());
  ASSERT_NE(whole.best(), nullptr);
  EXPECT_GE(whole.best()->worst, 60.0);
  EXPECT_LE(whole.best()->level, 345);
  EXPECT_LE(whole_calls, SampledSearchParams{}.whole_budget);
  // A sample whose worst tile sits near the whole page's is kept to the end.
  int tracked_sample_calls = 0, tracked_whole_calls = 0;
  LevelSearch again(70.0, 60.0, 40, 400, page.log_d);
  SampledSearch tracked(again, 70.0, 60.0, 260, {}, page.evaluator(&tracked_sample_calls, 1.0, 2.0),
                        page.evaluator(&tracked_whole_calls), nullptr);
  EXPECT_EQ(tracked.finish(), tracked_sample_calls);
  ASSERT_NE(again.best(), nullptr);
  EXPECT_GE(again.best()->worst, 60.0);
  EXPECT_FALSE(tracked.unrepresentative());
}

// The sample flatters the file by 3 points: the search must learn that from its first whole
// evaluation and still end on a level the whole image passes, near the true one, with few whole
// evaluations.
TEST(LevelSearch, SampleOffsetIsLearntFromTheWholeImage) {
  const LinearFile file;
  for (double flattery : {-1.0, 0.0, 3.0}) {
    SCOPED_TRACE(flattery);
    int sample_calls = 0, whole_calls = 0;
    LevelSearch whole(80.0, 70.0, 200, 400, file.log_d);
    const int sampled =
        search_with_sample(whole, 80.0, 70.0, 260, {}, file.evaluator(&sample_calls, flattery),
                           file.evaluator(&whole_calls), nullptr);
    EXPECT_EQ(sampled, sample_calls);
    ASSERT_NE(whole.best(), nullptr);
    EXPECT_GE(whole.best()->score, 80.0);
    EXPECT_LE(whole.best()->level, 305);
    EXPECT_LE(whole_calls, 4);
    EXPECT_EQ(whole_calls, int(whole.evals().size()));
  }
}

// The search in two steps (the first sample round alone, then the rest) makes the same
// evaluations as in one, and its first pick is the sample's evaluation at the level the first
// whole-image evaluation confirms.
TEST(LevelSearch, FirstSampleRoundAloneThenTheRestIsTheSameSearch) {
  const LinearFile file;
  for (double flattery : {-1.0, 0.0, 3.0}) {
    SCOPED_TRACE(flattery);
    std::vector<int> one_step, two_steps;
    auto recording = [&file](std::vector<int>* levels, double shift) {
      return [&file, levels, shift](int level) {
        levels->push_back(level);
        const double s = file.score(level, shift);
        return LevelEval{.level = level, .score = s, .worst = s - 3, .bytes = size_t(level)};
      };
    };
    std::vector<int> sample_one, sample_two;
    LevelSearch a(80.0, 70.0, 200, 400, file.log_d), b(80.0, 70.0, 200, 400, file.log_d);
    const int sampled_one = search_with_sample(
        a, 80.0, 70.0, 260, {}, recording(&sample_one, flattery), recording(&one_step, 0), nullptr);
    SampledSearch split(b, 80.0, 70.0, 260, {}, recording(&sample_two, flattery),
                        recording(&two_steps, 0), nullptr);
    const LevelEval* first = split.first_pick();
    ASSERT_NE(first, nullptr);
    const int first_level = first->level;
    EXPECT_EQ(first->bytes, size_t(first_level));
    EXPECT_TRUE(two_steps.empty());                     // nothing whole yet
    EXPECT_EQ(split.first_pick()->level, first_level);  // asked again: no new evaluation
    const size_t sampled_before_finish = sample_two.size();
    EXPECT_EQ(split.finish(), sampled_one);
    EXPECT_GE(sample_two.size(), sampled_before_finish);
    EXPECT_EQ(sample_one, sample_two);
    EXPECT_EQ(one_step, two_steps);
    ASSERT_FALSE(two_steps.empty());
    EXPECT_EQ(two_steps.front(), first_level);
  }
}

// The first round tells whether its pick met the floors on the sample. Where no level did, the
// pick is still the bracket's finest (for the whole image to settle), and a race between
// trellis weights or sources must not take its bytes for a cost at the floor.
TEST(LevelSearch, TheFirstPickSaysWhetherTheSampleMetTheFloors) {
  const LinearFile file;
  for (const double shift : {0.0, -60.0}) {
    SCOPED_TRACE(shift);
    int sample_calls = 0, whole_calls = 0;
    LevelSearch whole(80.0, 70.0, 200, 400, file.log_d);
    SampledSearch split(whole, 80.0, 70.0, 260, {}, file.evaluator(&sample_calls, shift),
                        file.evaluator(&whole_calls), nullptr);
    const LevelEval* pick = split.first_pick();
    ASSERT_NE(pick, nullptr);
    EXPECT_EQ(split.first_pick_met_floors(), shift == 0.0);
    if (shift != 0.0) {
      EXPECT_EQ(pick->level, 400);
    }
  }
}

// Time that runs out between the first sample round and the rest (another source's search ran
// in between) stops the search before any whole-image evaluation.
TEST(LevelSearch, TimeSpentAfterTheFirstRoundStopsTheRest) {
  struct Clock : testing::TestContext {
    bool spent = false;
    bool out_of_time() const override { return spent; }
  } context;
  const LinearFile file;
  int sample_calls = 0, whole_calls = 0;
  LevelSearch whole(80.0, 70.0, 200, 400, file.log_d);
  SampledSearch split(whole, 80.0, 70.0, 260, {}, file.evaluator(&sample_calls),
                      file.evaluator(&whole_calls), &context);
  ASSERT_NE(split.first_pick(), nullptr);
  context.spent = true;
  split.finish();
  EXPECT_EQ(whole_calls, 0);
  EXPECT_EQ(whole.best(), nullptr);
}

// A quick search (low --effort) takes the first whole-image pass within its wider margin, where
// the default margin goes on for a coarser level (the sample's prior offset puts the first pick
// about a point above the floor).
TEST(LevelSearch, AWiderStoppingMarginTakesTheFirstPass) {
  const LinearFile file;
  for (double stop_within : {0.6, 5.0}) {
    SCOPED_TRACE(stop_within);
    int sample_calls = 0, whole_calls = 0;
    LevelSearch whole(80.0, 70.0, 200, 400, file.log_d);
    search_with_sample(whole, 80.0, 70.0, 260, {.stop_within = stop_within},
                       file.evaluator(&sample_calls), file.evaluator(&whole_calls), nullptr);
    ASSERT_NE(whole.best(), nullptr);
    if (stop_within > 1)
      EXPECT_EQ(whole_calls, 1);
    else
      EXPECT_GE(whole_calls, 2);
  }
}

// A sample that hardly changes with the level (its bands miss the detail) misleads every round:
// the whole image's own evaluations must still bring the answer near the floor.
TEST(LevelSearch, AMisleadingSampleIsOverruledByTheWholeImage) {
  const LinearFile file;
  int whole_calls = 0;
  const Evaluate flat_sample = [](int level) {
    const double s = 85.0 + 0.002 * (level - 300);
    return LevelEval{.level = level, .score = s, .worst = s - 3, .bytes = size_t(level) * 25};
  };
  LevelSearch whole(80.0, 70.0, 40, 400, file.log_d);
  search_with_sample(whole, 80.0, 70.0, 260, {}, flat_sample, file.evaluator(&whole_calls),
                     nullptr);
  ASSERT_NE(whole.best(), nullptr);
  EXPECT_GE(whole.best()->score, 80.0);
  EXPECT_LE(whole.best()->score, 82.0);
  EXPECT_LE(whole_calls, 6);
}

TEST(LevelSearch, ASampleTracksWhenItsDistortionChangesAlike) {
  const LinearFile file;
  std::vector<double> shifted = file.log_d, flat = file.log_d, noisy_end = file.log_d;
  for (size_t l = 0; l < file.log_d.size(); ++l) {
    shifted[l] += 1.0;                              // another level of error, the same changes
    flat[l] = file.log_d[l] * 0.3;                  // changes a third as much
    if (l > 380) noisy_end[l] = file.log_d[l] - 3;  // parts only where the error is tiny
  }
  EXPECT_TRUE(sample_tracks_whole(shifted, file.log_d, 40, 400, 260));
  EXPECT_FALSE(sample_tracks_whole(flat, file.log_d, 40, 400, 260));
  EXPECT_TRUE(sample_tracks_whole(noisy_end, file.log_d, 40, 400, 260));
  EXPECT_FALSE(sample_tracks_whole(noisy_end, file.log_d, 40, 400, 390));
}

TEST(McuRows, WritesTheChosenRowsStacked) {
  // 4:2:0: MCU rows of 16 pixels, two luma block rows and one chroma row each.
  const auto jpeg = testing::make_jpeg({.width = 72, .height = 100, .quality = 90, .markers = {}});
  CoefficientImage image(jpeg, nullptr);
  const std::vector<McuRows> bands = {{1, 2}, {4, 2}};
  const Bytes rows = write_mcu_rows(image, bands);
  CoefficientImage sample(rows, nullptr);
  EXPECT_EQ(sample.info().image_width, 72u);
  EXPECT_EQ(sample.info().image_height, 64u);
  for (int ci = 0; ci < 3; ++ci) {
    const jpeg_component_info& c = image.info().comp_info[ci];
    const JDIMENSION v = JDIMENSION(c.v_samp_factor);
    ASSERT_EQ(sample.info().comp_info[ci].width_in_blocks, c.width_in_blocks);
    ASSERT_EQ(sample.info().comp_info[ci].height_in_blocks, 4 * v);
    JDIMENSION out = 0;
    for (const McuRows& b : bands)
      for (JDIMENSION row = b.first * v; row < (b.first + b.count) * v; ++row, ++out)
        EXPECT_EQ(0, std::memcmp(sample.block_row(ci, out), image.block_row(ci, row),
                                 sizeof(JBLOCK) * c.width_in_blocks))
            << "component " << ci << " row " << row;
  }
  // The partial last MCU row (100 = 6 x 16 + 4) is never taken, nor rows past the end.
  EXPECT_THROW(write_mcu_rows(image, {{5, 2}}), FormatError);
  EXPECT_THROW(write_mcu_rows(image, {{6, 1}}), FormatError);
  EXPECT_THROW(write_mcu_rows(image, {}), FormatError);
  EXPECT_NO_THROW(write_mcu_rows(image, {{0, 6}}));
}

// A search starts where typical camera photos meet the floor (q87 for 85, q80 for 80, q65 for 70)
// unless the source sits near or below that: levels finer than its own tables form a plateau
// where the score hardly moves, so it starts twelve qualities under the source.
TEST(LevelSearch, StartsWellBelowASourceNearTheStart) {
  EXPECT_EQ(search_start(85, 96), kLevelsPerQuality * 87);
  EXPECT_EQ(search_start(85, 93), kLevelsPerQuality * 87);
  EXPECT_EQ(search_start(85, 92), kLevelsPerQuality * 80);
  EXPECT_EQ(search_start(85, 85), kLevelsPerQuality * 73);
  EXPECT_EQ(search_start(80, 90), kLevelsPerQuality * 80);
  EXPECT_EQ(search_start(80, 80), kLevelsPerQuality * 68);
  EXPECT_EQ(search_start(70, 95), kLevelsPerQuality * 65);
  EXPECT_EQ(search_start(70, 70), kLevelsPerQuality * 58);
}

}  // namespace
}  // namespace lighten::jpeg
