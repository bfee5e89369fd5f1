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
// and nothing else (text, XMP, tIME, EXIF, private chunks). A made eXIf is kept in `storage`,
// which must outlive the result. `dropped` counts the chunks left out.
PngFile png_chunks_kept(const PngFile& png, MetadataPolicy policy, Bytes& storage, size_t& dropped);

}  // namespace lighten
