// HWP 5.0 documents (Hangul's OLE compound files): images in BinData optimised through the
// engine, deflated streams re-deflated, every flag and every other byte of content kept.
#pragma once

#include "core/format.h"

namespace lighten {

Outcome optimize_hwp(ByteView input, Context& context);
Verdict verify_hwp(ByteView input, ByteView output, Context& context);
void describe_hwp(ByteView input, FileInfo& info);

}  // namespace lighten
