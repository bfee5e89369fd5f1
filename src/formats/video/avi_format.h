// AVI (RIFF): Motion-JPEG frames optimised one by one through the engine, every other chunk kept
// byte for byte, idx1 and OpenDML indexes and all chunk sizes rewritten. AVIs without a
// Motion-JPEG stream (Xvid, DivX, H.264) are re-encoded whole by formats/media in the perceptual
// modes, once the RIFF parser has found their chunk tree and indexes sound.
#pragma once

#include "core/format.h"

namespace lighten {

Outcome optimize_avi(ByteView input, Context& context);                 // OptimizeFn
Verdict verify_avi(ByteView input, ByteView output, Context& context);  // VerifyFn
void describe_avi(ByteView input, FileInfo& info);                      // DescribeFn

}  // namespace lighten
