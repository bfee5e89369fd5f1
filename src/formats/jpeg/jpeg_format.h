// Lossless JPEG optimiser: optimal Huffman tables, scan mode per policy, metadata and the data
// after EOI kept byte for byte (MPF offsets rewritten), all DCT coefficients unchanged.
#pragma once

#include <optional>

#include "core/bytes.h"
#include "core/context.h"
#include "core/format.h"

namespace lighten {

Outcome optimize_jpeg(ByteView input, Context& context);  // OptimizeFn
// The VerifyFn (through the registry). With `input_fingerprint` (what the optimiser noted when
// it decoded the input), a lossless check decodes only the output; with `scored` (the candidate
// a perceptual search chose), an output that decodes to that candidate's coefficients and
// tables keeps its score instead of being scored again.
Verdict verify_jpeg(ByteView input, ByteView output, const Policy& policy,
                    const std::optional<DecodedFingerprint>& input_fingerprint = std::nullopt,
                    const std::optional<ScoredFingerprint>& scored = std::nullopt);
void describe_jpeg(ByteView input, FileInfo& info);  // DescribeFn

}  // namespace lighten
