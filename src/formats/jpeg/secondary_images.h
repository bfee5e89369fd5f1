// The secondary images of a Multi-Picture file (CIPA DC-007): camera previews, stereo views,
// HDR gain maps stored after the primary image's EOI and indexed by its MPF segment. Each is a
// JPEG of its own and goes back through the engine like any embedded item; views of the same
// scene follow the policy's mode, everything else (gain maps, depth maps, images of unknown
// use) is optimised losslessly only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "core/context.h"
#include "formats/jpeg/markers.h"
#include "formats/jpeg/mpf.h"

namespace lighten::jpeg {

// The policy a secondary image with MP Entry `attribute` is optimised and verified under:
// `policy` itself for a preview (large thumbnail) or a multi-frame view (panorama, disparity,
// multi-angle), the same policy in lossless mode for any other type; scans kept as they are.
Policy secondary_image_policy(uint32_t attribute, const Policy& policy);

struct RewrittenTrailing {
  Bytes bytes;                         // what follows the primary image's EOI
  std::vector<SecondaryImage> images;  // where each secondary lies, relative to `bytes`
  int optimised = 0;                   // how many of them changed
  size_t saved = 0;                    // bytes, all of them together
};

// Optimises every secondary image through the context and lays the data after the primary
// image out again: the bytes between and after the images as they were. nullopt when the index
// does not locate its images (they are then kept as they are) or none became smaller.
std::optional<RewrittenTrailing> optimise_secondary_images(ByteView input, const Layout& layout,
                                                           const MpfIndex& mpf, Context& context);

// Checks the data after the primary image of `out` (MPF index `b`) against `in`'s (index `a`):
// the same secondary images in the same order, each identical or verified (under
// secondary_image_policy) through `context`, the bytes between and after them identical, and
// the index pointing at each with its size. Returns the problem, if any. Without a context any
// changed image is a problem. `pixels_identical` is cleared where an image's pixels changed.
std::optional<std::string> compare_secondary_images(ByteView in, const Layout& li,
                                                    const MpfIndex& a, ByteView out,
                                                    const Layout& lo, const MpfIndex& b,
                                                    const Policy& policy, Context* context,
                                                    bool& pixels_identical);

}  // namespace lighten::jpeg
