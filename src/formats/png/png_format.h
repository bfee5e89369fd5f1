// PNG, losslessly: re-filter and re-deflate the image data; every other chunk stays as it is.
// With --png-reduce the colour type and bit depth may shrink too (same pixels as RGBA16).
#pragma once

#include "core/format.h"

namespace lighten {

Outcome optimize_png(ByteView input, Context& context);
Verdict verify_png(ByteView input, ByteView output, Context& context);
void describe_png(ByteView input, FileInfo& info);

}  // namespace lighten
