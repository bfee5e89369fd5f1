// PNG, losslessly: re-filter and re-deflate the image data; every other chunk stays as it is.
#pragma once

#include "core/format.h"

namespace lighten {

Outcome optimize_png(ByteView input, Context& context);
Verdict verify_png(ByteView input, ByteView output, Context& context);
void describe_png(ByteView input, FileInfo& info);

}  // namespace lighten
