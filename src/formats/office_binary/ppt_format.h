// PowerPoint 97-2003 presentations: JPEG and PNG pictures of the Pictures stream.
#pragma once

#include "core/format.h"

namespace lighten {

Outcome optimize_ppt(ByteView input, Context& context);
Verdict verify_ppt(ByteView input, ByteView output, Context& context);
void describe_ppt(ByteView input, FileInfo& info);

}  // namespace lighten
