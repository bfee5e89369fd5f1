#pragma once

#include <cstdint>
#include <span>

#include "quality/colour_profile.h"
#include "quality/image.h"

namespace lighten {

struct Ssimulacra2Options {
  // Side, in full-resolution pixels, of the square tiles over which worst_tile_score is pooled.
  // Rounded up to a multiple of 32 so that tiles align at all six scales; the right and bottom
  // remainders join the last tile (so tiles are tile_size to 2 tile_size - 1 wide). 0: whole
  // image only.
  uint32_t tile_size = 256;
  // Maps whose weights are all at most this are not computed (their terms count as zero). 0:
  // the published algorithm. At 0.002 the maps left out are X and B at full resolution, B at
  // half, and a few at the coarsest scales (weights under 0.0018 against 0.1 to 225 for the
  // rest): a quarter less work, scores within 0.01 of the full computation on the oracle rows.
  double negligible_weight = 0.0;
  // How each image's samples read as light: null for sRGB, else through its ICC profile (which
  // must be for as many channels as the image has; a 4-channel CMYK image needs one).
  const ProfileColour* reference_colour = nullptr;
  const ProfileColour* distorted_colour = nullptr;
};

struct Ssimulacra2Result {
  double score = 100.0;             // SSIMULACRA 2.1 of the whole image: 100 = identical
  double worst_tile_score = 100.0;  // lowest score of any tile
  uint32_t worst_tile_x = 0, worst_tile_y = 0;  // top-left pixel of that tile
  // Scales measured: 0 for an image under 8 px on a side, whose score then says 100 whatever
  // its pixels (as the published algorithm's does).
  int scales = 0;
};

// SSIMULACRA 2.1 (libjxl tools/ssimulacra2.cc, April 2023) of `distorted` against `reference`,
// both 8-bit sRGB (gray is replicated to RGB) unless `options` gives their profiles. Streams rows
// through all six scales at once, so memory stays a few MB beyond the two inputs whatever the image
// size. Thread-safe. Throws std::invalid_argument when sizes differ or an image is malformed.
Ssimulacra2Result ssimulacra2(const ImageRgb8& reference, const ImageRgb8& distorted,
                              const Ssimulacra2Options& options = {});

// The norms of one scale, laid out as libjxl's MsssimScale: ssim[c * 2 + n] and, for the edge
// maps, artifact at edge[c * 4 + n] and detail lost at edge[c * 4 + 2 + n]; n = 0 is the mean
// (1-norm), n = 1 the 4-norm; c = 0, 1, 2 for X, Y, B.
struct Ssimulacra2Scale {
  double ssim[6] = {};
  double edge[12] = {};
};

// The final weighting and mapping of SSIMULACRA 2.1 (weights indexed as libjxl does, which
// shifts them when an image is too small for six scales).
double ssimulacra2_score(std::span<const Ssimulacra2Scale> scales);

// Whether map `map` (0 SSIM, 1 artifact, 2 detail lost) of channel c at `scale` carries a
// weight above `above` when `num_scales` scales are computed; maps without weight need not be
// computed.
bool ssimulacra2_map_weighted(int num_scales, int scale, int c, int map, double above = 0.0);

}  // namespace lighten
