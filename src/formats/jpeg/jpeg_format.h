// JPEG optimiser: optimal Huffman tables, scan mode per policy, metadata kept byte for byte, all
// DCT coefficients unchanged or (perceptual modes) requantised to the floor; the data after EOI
// kept byte for byte, but for the secondary images an MPF index locates (optimised each through
// the context, offsets rewritten).
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
// tables keeps its score instead of being scored again. Changed secondary images (MPF) are
// verified through `context`; without one, any change to them fails.
Verdict verify_jpeg(ByteView input, ByteView output, const Policy& policy,
                    const std::optional<DecodedFingerprint>& input_fingerprint = std::nullopt,
                    const std::optional<ScoredFingerprint>& scored = std::nullopt,
                    Context* context = nullptr);
void describe_jpeg(ByteView input, FileInfo& info);  // DescribeFn

}  // namespace lighten
