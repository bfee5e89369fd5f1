// Compound files lighten cannot tell as HWP, PPT, XLS or DOC (MSI, Outlook messages, Visio,
// password-protected OOXML, or one of those kinds cut short before its directory): their header
// and directory are read far enough to give the reason they are left alone.
#pragma once

#include "core/format.h"

namespace lighten {

Outcome optimize_cfb(ByteView input, Context& context);
Verdict verify_cfb(ByteView input, ByteView output, Context& context);
void describe_cfb(ByteView input, FileInfo& info);

}  // namespace lighten
