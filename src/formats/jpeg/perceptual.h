// The perceptual JPEG search: per file, the coarsest DCT-domain requantisation whose decoded
// pixels still meet the policy's SSIMULACRA2 floor, whole-image and per tile.
//
// Idempotence (no generation loss on re-runs, journal or not): every requantised output
// carries a 37-byte APP15 "LIGHTEN\0" segment (kept under every metadata policy); an input that
// carries it gets lossless treatment only. With --quality-marker omit, the tables decide: an
// input whose tables are, entry by entry, at least as coarse as the ones lighten writes five
// qualities above where the mode's search starts, or that are tables lighten writes (its
// Robidoux-shaped table at some level in at least 48 of 64 entries and nowhere finer), is taken
// as already at its target and gets lossless treatment only. A camera file whose tables
// happened to match would be left lossless too (the safe side). A source coarser than the
// mode's search range stays lossless.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/bytes.h"
#include "formats/jpeg/coefficients.h"
#include "formats/jpeg/markers.h"
#include "lighten/policy.h"
#include "quality/image.h"

namespace lighten {
class Context;
}

namespace lighten::jpeg {

// A tile may fall this far below the floor while the whole image meets it. SSIMULACRA2 spreads
// widely over 256-pixel tiles of an intact re-encode (skies and flat walls score high, foliage
// and noise low): on the 16 camera photos, the worst tile of outputs at the floor sat up to 4.4
// (visually-lossless), 6.1 (high) and 8.8 (compact) points under it. More than 10 under is local
// damage the average hides (cjpeg -quality 75 leaves a tile at 59 on a file scoring 72).
inline constexpr double kWorstTileMargin = 10.0;

struct PerceptualResult {
  bool requantized = false;  // the image's arrays now hold the chosen coefficients
  double score = 100, worst_tile = 100;
  DecodedFingerprint fingerprint{};  // of the chosen candidate's decode, when requantized
  std::string detail;                // what was chosen, or why the file stays lossless
};

// Searches and applies the requantisation into `image`. Leaves `image` as read (lossless) when
// the file is marked, already coarse, in a colour space the metric cannot read (two components,
// four that are neither CMYK nor YCCK), or no candidate meets the floor.
// `reference` is the input's decode, made here when empty and kept for the caller.
PerceptualResult requantize_for_floor(CoefficientImage& image, ByteView input, const Layout& layout,
                                      const Policy& policy, const Context* context,
                                      std::optional<ImageRgb8>& reference);

// requantize_for_floor in two steps, so that two sources of one photo (its own coefficients and
// its 4:2:0 re-encoding) can be compared on their row samples before either is confirmed on the
// whole image. `image`, `input`, `layout`, `policy`, `context` and `reference` must outlive it.
class FloorSearch {
 public:
  // `race_weights`: whether a large image's row sample also tries the heavier trellis weights
  // (from effort 4 on); off, the default weight alone is searched.
  FloorSearch(CoefficientImage& image, ByteView input, const Layout& layout, const Policy& policy,
              const Context* context, std::optional<ImageRgb8>& reference,
              bool race_weights = true);
  ~FloorSearch();
  FloorSearch(const FloorSearch&) = delete;
  FloorSearch& operator=(const FloorSearch&) = delete;

  // Bytes of the row sample at the level the search confirms first on the whole image (its
  // first round, run now at each trellis weight raced, the weight kept decided): what the photo
  // costs near the floor, up to the sample's share.
  // nullopt when the image is searched whole (small, or a sample that does not track it) or
  // stays lossless.
  std::optional<size_t> first_sample_bytes();
  // The whole search (going on from the first round when it ran), applied into `image`.
  PerceptualResult run();

 private:
  struct Arm;
  struct State;
  std::unique_ptr<State> state_;
  PerceptualResult early_;  // the answer when the file stays lossless before any search
};

// Two sources whose first sample bytes differ by more than this fraction are not both searched:
// the larger one is dropped. On the corpus's 4:4:4 and 4:2:2 photos (eight pairs with a row
// sample in visually-lossless and high) the ratio of the two sources' first sample bytes came
// within 0.4-3.7 % of the ratio of their final sizes, and on the same side of 1 wherever it was
// more than 3 % from it: with the race every output stayed byte for byte the same, for 13 % less
// CPU in visually-lossless and 8 % in high.
inline constexpr double kDecisiveSampleMargin = 0.03;

// The last trial of a search from effort kEaseMinEffort on. Table levels move the score in steps
// (one quarter-quality level moved camera photos by up to 0.5 points at floor 80), so the
// smallest pass often sits a few tenths above the floor; a lighter trellis weight at that level
// (more coefficients zeroed in busy blocks) gives the headroom back in finer steps. Headroom is
// counted above what candidates must score (the floor plus the quick metric's slack of 0.01).
// The weight aims kEaseAimAbove over that with a prior for how fast the score falls with it:
// per unit of ln(weight) at the photos' passes, 0.5-4.8 points at floor 80 (median 2.4) and
// 1.4-19 at floor 70 (median 3.9), for weights down to 0.7 times the search's: easing goes no
// further (a search that ended points above the floor, its coarser levels failing, is not eased
// into the unmeasured). A lighter candidate that fails is dropped.
inline constexpr int kEaseMinEffort = 4;
inline constexpr double kEaseMinHeadroom = 0.1, kEaseAimAbove = 0.05, kEaseLightest = 0.7;
// The trellis weight to try in place of `weight` for a pass `headroom` points above what
// candidates must score, at `floor`; `weight` itself when the headroom is under kEaseMinHeadroom.
double eased_trellis_weight(double weight, double headroom, double floor);

// Decoded pixels as the metric takes them: gray or RGB, CMYK rendered as RGB (rgb_from_cmyk);
// nullopt for other component counts.
std::optional<ImageRgb8> to_metric_image(PixelImage pixels);

// True for YCbCr whose chroma is finer than 4:2:0's in some direction and at most twice as
// coarse as the luma in each (4:4:4, 4:2:2, 4:4:0): sources a 4:2:0 re-encoding may serve.
bool chroma_finer_than_420(const CoefficientImage& image);

// The pixel-domain alternative for sources with chroma finer than 4:2:0 (chroma_finer_than_420):
// the input's decode (`reference`, made here when empty) encoded again as 4:2:0 with the input's
// own tables, to be searched like any input (requantize_for_floor on `image`, against the same
// reference, so the floor holds against the original). `score` is what the subsampling alone costs:
// SSIMULACRA2 of that encoding (from 3 MP on, estimated on the search's sample of rows). nullopt
// when the input's chroma is not finer than 4:2:0.
struct SubsampledSource {
  Bytes bytes;
  std::unique_ptr<CoefficientImage> image;
  double score = 0;
};
std::optional<SubsampledSource> subsampled_source(CoefficientImage& source, ByteView input,
                                                  const Context* context,
                                                  std::optional<ImageRgb8>& reference);

// Which searches a photo with chroma finer than 4:2:0 gets, from what the 4:2:0 re-encoding
// alone costs against the floor: with no room it cannot pass; with some, either may win; with
// much, 4:2:0 wins and the search at the source's sampling is skipped. Measured on the corpus's
// three 4:4:4 photos: 4:2:0 outputs 6-19 % smaller with 3.6 points of headroom or more, 0.5 %
// larger with 3.1, none at -1.9. Its seven 4:2:2 / 4:4:0 photos score 89.8-92.9 alone; at floor
// 80 four of them came out 4-6 % smaller as 4:2:0, one 1 %, and the 0.56 MP one 2 % larger
// (running both searches there bought nothing over the set and cost 30 % more time).
enum class SubsamplingPlan { kFullOnly, kBoth, kSubsampledOnly };
inline constexpr double kSubsampledHeadroom = 2.0;
inline constexpr double kSubsampledOnlyHeadroom = 8.0;
SubsamplingPlan plan_subsampling(double score, double floor);

// The searches `plan` asks for: `own` of the input's coefficients (in `image`), `subsampled` of
// its 4:2:0 re-encoding (in `source_420`, which kFullOnly may leave null). Under kBoth the two
// are first compared on their row samples and a source larger by kDecisiveSampleMargin is not
// searched further (`race` says which and why); a search that finds nothing brings the other
// in. Each result is applied into its image.
struct SourceSearches {
  PerceptualResult own, subsampled;
  std::string race;
};
SourceSearches search_sources(CoefficientImage& image, SubsampledSource* source_420,
                              SubsamplingPlan plan, ByteView input, const Layout& layout,
                              const Policy& policy, const Context* context,
                              std::optional<ImageRgb8>& reference);

}  // namespace lighten::jpeg
