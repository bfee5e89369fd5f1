// Which ancillary chunks a PNG output carries under the metadata policy (--metadata).
#pragma once

#include <cstddef>

#include "core/bytes.h"
#include "formats/png/png_chunks.h"
#include "lighten/policy.h"

namespace lighten {

// The chunks of `png` as its output carries them: every chunk under keep; under safe, all but
// the comments and editor records (tIME, and tEXt, zTXt or iTXt keyed "Comment"); under strip,
// the critical chunks and those that change how the image shows (tRNS, gAMA, cHRM, sRGB, iCCP,
// cICP, mDCV, cLLI, sBIT, bKGD, pHYs), an eXIf reduced to its orientation where that is not 1,
// XMP or raw EXIF profile text whose orientation is not 1 (Pillow turns the image by it), and
// nothing else (other text and XMP, tIME, EXIF, private chunks). A made eXIf is kept in `storage`,
// which must outlive the result. `dropped` counts the chunks the policy left out; Apple's iDOT
// is left out under every policy and not counted (is_image_data_index).
PngFile png_chunks_kept(const PngFile& png, MetadataPolicy policy, Bytes& storage, size_t& dropped);

// Whether `c` is Apple's iDOT: where each half of the image data starts, as offsets into the
// file, for decoding them in parallel. A new IDAT moves them, so no output carries it (readers
// then decode serially, as every other reader does). Other chunks marked unsafe to copy are
// kept, as PNG optimisers keep them: the private ones met in files (ImageMagick's orNT, Adobe
// Fireworks' mkBF...) describe the image, not how its data is packed.
bool is_image_data_index(const PngChunk& c);

}  // namespace lighten
