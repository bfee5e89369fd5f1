// AVI (RIFF): Motion-JPEG frames optimised losslessly one by one through the engine, every other
// chunk kept byte for byte, idx1 and OpenDML indexes and all chunk sizes rewritten.
#pragma once

#include "core/format.h"

namespace lighten {

Outcome optimize_avi(ByteView input, Context& context);                 // OptimizeFn
Verdict verify_avi(ByteView input, ByteView output, Context& context);  // VerifyFn
void describe_avi(ByteView input, FileInfo& info);                      // DescribeFn

}  // namespace lighten
