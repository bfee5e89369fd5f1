// SSIMULACRA 2 as lighten's quality floors check it: the published score, and for images small
// enough that the metric's coarse scales shrink to a few pixels also the score of both images
// mirrored out to full size.
#pragma once

#include <cstdint>

#include "quality/image.h"
#include "quality/ssimulacra2.h"

namespace lighten {

// The shortest side at which every scale of SSIMULACRA 2 is at least 8 pixels (it halves five
// times). Below it the coarsest scales shrink to 4-7 pixels, where the blur's zero padding
// outweighs the picture, and under 113 px the metric drops scales altogether and, as libjxl
// indexes its weights in sequence, weighs the rest with weights meant for other terms: the
// score drifts with the image's size alone. Strips 1024 px wide cut from one camera photo and
// saved at JPEG q30 scored 97 (8 rows), 76 (32), 69 (48), 83 (64), 58 (128) and 53 (256 rows),
// while butteraugli stayed at 3.0-4.8; at q85, 98 to 80 against 88.
inline constexpr uint32_t kFullScaleSide = 256;

// `image` extended to at least `min_side` on each side by reflection (the image and its mirror
// copy alternate, so no new edge appears at a seam); unchanged when both sides already are.
ImageRgb8 mirror_to_side(const ImageRgb8& image, uint32_t min_side);

// The score a quality floor is checked against. For images at least kFullScaleSide on both
// sides, exactly ssimulacra2(). Smaller ones are also scored mirrored out to kFullScaleSide
// (both images alike; a long strip in pieces of at most kMirrorPiece along its length, each
// mirrored on its own, so that memory stays bounded), where the strips above scored 50-59 at
// q30 and 85-87 at q85 whatever their height; the lowest of these scores and of their worst
// tiles is returned, so the published score meets a floor this one meets. The worst tile's
// position is in `distorted`.
inline constexpr uint32_t kMirrorPiece = 2048;
Ssimulacra2Result floor_score(const ImageRgb8& reference, const ImageRgb8& distorted,
                              const Ssimulacra2Options& options = {});
// The same from `published`, ssimulacra2() of the pair already computed with `options`.
Ssimulacra2Result floor_score(Ssimulacra2Result published, const ImageRgb8& reference,
                              const ImageRgb8& distorted, const Ssimulacra2Options& options = {});
// Whether `image` is too small on a side for the published score alone (under kFullScaleSide).
bool below_full_scale(const ImageRgb8& image);

}  // namespace lighten
