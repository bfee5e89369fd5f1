// Compound files lighten cannot tell as HWP, PPT, XLS or DOC (MSI, Outlook messages, Visio and
// the like, or one of those kinds cut short before its directory): read far enough to say what
// is wrong with a damaged one, and left alone with a reason.
#pragma once

#include "core/format.h"

namespace lighten {

Outcome optimize_cfb(ByteView input, Context& context);
Verdict verify_cfb(ByteView input, ByteView output, Context& context);
void describe_cfb(ByteView input, FileInfo& info);

}  // namespace lighten
