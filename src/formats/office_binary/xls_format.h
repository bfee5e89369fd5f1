// Excel 97-2003 workbooks: JPEG and PNG pictures of the globals' drawing group.
#pragma once

#include "core/format.h"

namespace lighten {

Outcome optimize_xls(ByteView input, Context& context);
Verdict verify_xls(ByteView input, ByteView output, Context& context);
void describe_xls(ByteView input, FileInfo& info);

}  // namespace lighten
