// The perceptual JPEG search: per file, the coarsest DCT-domain requantisation whose decoded
// pixels still meet the policy's SSIMULACRA2 floor, whole-image and per tile.
//
// Idempotence (no generation loss on re-runs, journal or not): every requantised output
// carries a 37-byte APP15 "LIGHTEN\0" segment (kept under every metadata policy); an input that
// carries it gets lossless treatment only. With --quality-marker omit, the tables decide: an
// input whose tables are, entry by entry, at least as coarse as the ones lighten writes five
// qualities above where the mode's search starts, or that are tables lighten writes (its
// Robidoux-shaped table at some level in at least 48 of 64 entries and nowhere finer), is taken
// as already at its target and gets lossless treatment only; so is one whose luma table is such
// a table and whose other tables lie nowhere finer than it (chroma the source kept coarser). A
// camera file whose tables happened to match would be left lossless too (the safe side). Under
// either policy, so are tables that are entry by entry the larger of a plain encoder's table and
// one of lighten's targets (what a search that ends near a plain encoder's source writes). A
// source coarser than the mode's search range stays lossless. An output whose tables no re-run
// would know (mostly the source's: a q90 photo in `high`) is not written under omit; the file
// gets lossless treatment instead (tables_prove_requantised).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "formats/jpeg/coefficients.h"
#include "formats/jpeg/easing.h"
#include "formats/jpeg/markers.h"
#include "formats/jpeg/metric_reading.h"
#include "formats/jpeg/requantize.h"
#include "lighten/policy.h"
#include "quality/colour_profile.h"
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

// Whether a re-run without the quality marker would take `image`, as a search under `policy`
// requantised it (its output tables), for lighten's output and leave it lossless.
bool tables_prove_requantised(const CoefficientImage& image, const Policy& policy);

// Searches and applies the requantisation into `image`. Leaves `image` as read (lossless) when
// the file is marked, already coarse, in a colour space the metric cannot read (two components,
// four that are neither CMYK nor YCCK, an ICC profile of other samples), or no candidate meets
// the floor.
// `reference` is the input's decode, made here when empty and kept for the caller.
PerceptualResult requantize_for_floor(CoefficientImage& image, ByteView input, const Layout& layout,
                                      const Policy& policy, const Context* context,
                                      std::optional<ImageRgb8>& reference);

// requantize_for_floor in two steps, so that two sources of one photo (its own coefficients and
// its 4:2:0 re-encoding) can be compared on their row samples before either is confirmed on the
// whole image. `image`, `input`, `layout`, `policy`, `context` and `reference` must outlive it.
class FloorSearch {
 public:
  // `colour`: how the metric reads the pixels (metric_colour of `layout`; null: as sRGB), made
  // once by the caller for every search of the file and outliving them. `race_weights`: whether
  // a large image's row sample also tries the heavier trellis weights (from effort 4 on); off,
  // the default weight alone is searched. `finest_tables`: the Requantizer's bound where `image`
  // is finer than the file it stands for (empty: none).
  FloorSearch(CoefficientImage& image, ByteView input, const Layout& layout, const Policy& policy,
              const Context* context, std::optional<ImageRgb8>& reference,
              const ProfileColour* colour, bool race_weights = true,
              std::vector<QuantTable> finest_tables = {});
  ~FloorSearch();
  FloorSearch(const FloorSearch&) = delete;
  FloorSearch& operator=(const FloorSearch&) = delete;

  // Bytes of the row sample at the level the search confirms first on the whole image (its
  // first round, run now at each trellis weight raced, the weight kept decided): what the photo
  // costs near the floor, up to the sample's share.
  // nullopt when the image is searched whole (small, or a sample that does not track it) or
  // stays lossless. `met_floors` false: no level met the floors on the sample, and the bytes are
  // the finest level's.
  struct SampleCost {
    size_t bytes = 0;
    bool met_floors = false;
  };
  std::optional<SampleCost> first_sample_cost();
  // The whole search (going on from the first round when it ran), applied into `image`.
  PerceptualResult run();

 private:
  struct Arm;
  struct State;
  std::unique_ptr<State> state_;
  PerceptualResult early_;  // the answer when the file stays lossless before any search
};

// The level a search for `floor` starts from, for a source of IJG quality `q_src`: the quality
// that lands near the floor on typical camera photos, or well below a source near or under it.
int search_start(double floor, int q_src);

// The bands of rows a large image (`width` x `height`, MCU rows `mcu_height` pixels high) is
// searched on first: whole MCU rows, 256 pixels high or just over (at least two bands), spread
// evenly, about a quarter of the image. Empty under 3 MP or 1024 rows (the image is searched
// whole), or where the bands would cover half of it.
std::vector<McuRows> sample_bands(uint32_t width, uint32_t height, unsigned mcu_height);

// SSIMULACRA2 of what `encode` makes of `reference` (a JPEG whose MCU rows are `mcu_height`
// pixels high, decoded as `color_space`), as the search would score it, for a plan made before
// any search: the whole image when small; from 3 MP on, the search's sample of rows (encoded
// and decoded alone, as the search decodes them) less what such a sample flatters by. Pixels
// read through `colour` when not null (metric_colour).
double estimated_score(const ImageRgb8& reference, unsigned mcu_height,
                       const std::function<Bytes(const ImageRgb8&)>& encode,
                       J_COLOR_SPACE color_space, const ProfileColour* colour);

}  // namespace lighten::jpeg
