// Word 97-2003 documents: described, and left alone with a reason (see doc_format.cpp).
#pragma once

#include "core/format.h"

namespace lighten {

Outcome optimize_doc(ByteView input, Context& context);
Verdict verify_doc(ByteView input, ByteView output, Context& context);
void describe_doc(ByteView input, FileInfo& info);

}  // namespace lighten
