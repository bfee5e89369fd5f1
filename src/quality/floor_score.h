// SSIMULACRA 2 as lighten's quality floors check it: the published score, and for images too
// small for the metric's six scales also the score of both images mirrored out to full size.
#pragma once

#include <cstdint>

#include "quality/image.h"
#include "quality/ssimulacra2.h"

namespace lighten {

// The shortest side at which SSIMULACRA 2 computes all six of its scales (it halves down to
// 8 pixels). Below it the metric drops its coarse scales and, as libjxl indexes its weights in
// sequence, weighs the rest with weights meant for other terms: the score drifts and jumps with
// the image's size alone. Strips 1024 px wide cut from one camera photo and saved at JPEG q30
// scored 97 (8 rows), 76 (32), 69 (48), 83 (64), 58 (128) and 53 (256 rows), while butteraugli
// stayed at 3.0-4.8; at q85, 98 to 80 against 88.
inline constexpr uint32_t kFullScaleSide = 256;

// `image` extended to at least `min_side` on each side by reflection (the image and its mirror
// copy alternate, so no new edge appears at a seam); unchanged when both sides already are.
ImageRgb8 mirror_to_side(const ImageRgb8& image, uint32_t min_side);

// The score a quality floor is checked against. For images at least kFullScaleSide on both
// sides, exactly ssimulacra2(). Smaller ones are also scored mirrored out to kFullScaleSide
// (both images alike), where the strips above scored 50-59 at q30 and 85-87 at q85 whatever
// their height; the lower of the two scores and of the two worst tiles is returned, so the
// published score meets a floor this one meets. The worst tile's position is in `distorted`.
Ssimulacra2Result floor_score(const ImageRgb8& reference, const ImageRgb8& distorted,
                              const Ssimulacra2Options& options = {});

}  // namespace lighten
