// Lossless JPEG optimiser: optimal Huffman tables, scan mode per policy, metadata and the data
// after EOI kept byte for byte (MPF offsets rewritten), all DCT coefficients unchanged.
#pragma once

#include "core/bytes.h"
#include "core/context.h"
#include "core/format.h"

namespace lighten {

Outcome optimize_jpeg(ByteView input, Context& context);                     // OptimizeFn
Verdict verify_jpeg(ByteView input, ByteView output, const Policy& policy);  // VerifyFn
void describe_jpeg(ByteView input, FileInfo& info);                          // DescribeFn

}  // namespace lighten
