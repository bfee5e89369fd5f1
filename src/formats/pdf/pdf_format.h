// PDF through libqpdf: embedded JPEGs go back to the engine, Flate streams are re-deflated,
// structure is rewritten with object streams where the version and conformance allow.
#pragma once

#include "core/format.h"

namespace lighten {

Outcome optimize_pdf(ByteView input, Context& context);
Verdict verify_pdf(ByteView input, ByteView output, Context& context);
void describe_pdf(ByteView input, FileInfo& info);

}  // namespace lighten
