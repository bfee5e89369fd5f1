// ZIP documents (OOXML, HWPX, ODF, EPUB) and, when the policy allows, plain ZIP and JAR.
#pragma once

#include "core/format.h"

namespace lighten {

Outcome optimize_zip(ByteView input, Context& context);
Verdict verify_zip(ByteView input, ByteView output, Context& context);
void describe_zip(ByteView input, FileInfo& info);

}  // namespace lighten
