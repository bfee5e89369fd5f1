// The pixel-domain alternative of the perceptual search: a photo whose chroma is finer than
// 4:2:0 (or whose planes are RGB) re-encoded from its decode as YCbCr 4:2:0, searched like any
// input against the same reference, the smaller output kept.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "formats/jpeg/coefficients.h"
#include "formats/jpeg/markers.h"
#include "formats/jpeg/perceptual.h"
#include "formats/jpeg/requantize.h"
#include "lighten/policy.h"
#include "quality/image.h"

namespace lighten {
class Context;
}

namespace lighten::jpeg {

// True for YCbCr whose chroma is finer than 4:2:0's in some direction and at most twice as
// coarse as the luma in each (4:4:4, 4:2:2, 4:4:0): sources a 4:2:0 re-encoding may serve.
bool chroma_finer_than_420(const CoefficientImage& image);

// True for three RGB planes that an Adobe segment marks so (transform 0, and no JFIF segment,
// which would make them YCbCr): every reader, PDF viewers included, takes them as RGB, and takes
// the re-encoding as YCbCr once that segment says transform 1. RGB spends on each plane what
// YCbCr 4:2:0 spends on the luma alone. (Planes numbered 'R', 'G', 'B' without such a segment
// stay as they are: a PDF viewer reads them as YCbCr where libjpeg reads RGB.)
bool adobe_rgb(const CoefficientImage& image);

// chroma_finer_than_420 or adobe_rgb: sources the 4:2:0 re-encoding is tried on.
inline bool reencodable_as_420(const CoefficientImage& image) {
  return chroma_finer_than_420(image) || adobe_rgb(image);
}

// What the re-encoding is given of the source: its quantisation tables never go finer than
// these (luma, then chroma). YCbCr keeps its own luma and chroma tables; RGB planes hold their
// quantisation noise in every plane, so both take the finest of the three, entry by entry.
struct ReencodingTables {
  std::array<uint16_t, 64> luma{}, chroma{};
};
ReencodingTables reencoding_tables(const CoefficientImage& source);

// How finely the re-encoding's chroma is quantised. At the source's steps it is what the
// source could have been (its score alone says what the subsampling costs); at half of them
// the trellis weighs its choices against values nearer the decode the metric compares with,
// where at the source's steps every value the first rounding moved looks exact to it. The
// tables written stay bounded by the source's (finest_tables).
enum class ReencodedChroma { kSourceSteps, kHalfSteps };

// What the source's 4:2:0 re-encoding (reencodable_as_420, from its decode `reference`, made
// here when empty) costs alone against that decode, at the source's steps, as estimated_score
// measures it (through `colour`, metric_colour): what plan_subsampling decides by. nullopt for
// other sources. Encodes only the rows it scores.
std::optional<double> reencoding_score(CoefficientImage& source, ByteView input,
                                       std::optional<ImageRgb8>& reference,
                                       const ProfileColour* colour);

// The source (reencodable_as_420) encoded again from its decode (`reference`, made here when
// empty) as YCbCr 4:2:0 with reencoding_tables (its chroma at `chroma`'s steps), to be searched
// like any input (against the same reference, so the floor holds against the original). YCbCr
// keeps its component identifiers (Adobe's encoders number them 0, 1, 2); RGB planes become 1,
// 2, 3 ('R', 'G', 'B' would make some readers take YCbCr for RGB whatever the Adobe segment
// says). nullopt for other sources.
struct SubsampledSource {
  Bytes bytes;
  std::unique_ptr<CoefficientImage> image;
  bool from_rgb = false;  // the output's Adobe segment must then say transform 1
  // The Requantizer's bound (per slot) when the chroma is finer than the source's; else empty.
  std::vector<QuantTable> finest_tables;
};
std::optional<SubsampledSource> subsampled_source(
    CoefficientImage& source, ByteView input, const Context* context,
    std::optional<ImageRgb8>& reference, ReencodedChroma chroma = ReencodedChroma::kSourceSteps);

// Which searches a photo with chroma finer than 4:2:0 gets, from what the 4:2:0 re-encoding
// alone costs against the floor: with no room it cannot pass; with some, either may win; with
// much, 4:2:0 wins and the search at the source's sampling is skipped. Measured on the corpus's
// three 4:4:4 photos: 4:2:0 outputs 6-19 % smaller with 3.6 points of headroom or more, 0.5 %
// larger with 3.1, none at -1.9. Its seven 4:2:2 / 4:4:0 photos score 89.8-92.9 alone; at floor
// 80 four of them came out 4-6 % smaller as 4:2:0, one 1 %, and the 0.56 MP one 2 % larger
// (running both searches there bought nothing over the set and cost 30 % more time).
// Under kSubsampledOnly the search lands far under the source's quality, and the re-encoding is
// made again with its chroma at half the source's steps (ReencodedChroma): on the corpus's ten
// 4:4:4 and 4:2:2 photos compact came out 0.54 % smaller (five photos 1.4-4.0 %, one 1.7 %
// larger), high 0.13 %; on 14 other 4:4:4 and 4:2:2 photos 0.79 % and 0.40 %, for about the
// same CPU. Nearer the source (kBoth, visually-lossless) the finer chroma let the trellis zero
// more than the floor could afford: 1.1 % larger there.
enum class SubsamplingPlan { kFullOnly, kBoth, kSubsampledOnly };
inline constexpr double kSubsampledHeadroom = 2.0;
inline constexpr double kSubsampledOnlyHeadroom = 8.0;
SubsamplingPlan plan_subsampling(double score, double floor);

// Two sources whose first sample bytes differ by more than this fraction are not both searched:
// the larger one is dropped. On the corpus's 4:4:4 and 4:2:2 photos (eight pairs with a row
// sample in visually-lossless and high) the ratio of the two sources' first sample bytes came
// within 0.4-3.7 % of the ratio of their final sizes, and on the same side of 1 wherever it was
// more than 3 % from it: with the race every output stayed byte for byte the same, for 13 % less
// CPU in visually-lossless and 8 % in high.
inline constexpr double kDecisiveSampleMargin = 0.03;

// The searches `plan` asks for: `own` of the input's coefficients (in `image`), `subsampled` of
// its 4:2:0 re-encoding (in `source_420`, which kFullOnly may leave null). Under kBoth the two
// are first compared on their row samples and a source larger by kDecisiveSampleMargin is not
// searched further (`race` says which and why); a search that finds nothing brings the other
// in. Each result is applied into its image; `colour` is how the metric reads the pixels
// (metric_colour; null: as sRGB).
struct SourceSearches {
  PerceptualResult own, subsampled;
  std::string race;
};
SourceSearches search_sources(CoefficientImage& image, SubsampledSource* source_420,
                              SubsamplingPlan plan, ByteView input, const Layout& layout,
                              const Policy& policy, const Context* context,
                              std::optional<ImageRgb8>& reference, const ProfileColour* colour);

}  // namespace lighten::jpeg
