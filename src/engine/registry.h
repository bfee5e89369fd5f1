// The one explicit list of optimisers. No self-registration: adding a format means adding a line.
#pragma once

#include <span>

#include "core/format.h"

namespace lighten {

std::span<const FormatEntry> format_registry();
// The entry for `kind`, or nullptr when lighten has no optimiser for it.
const FormatEntry* find_format(Kind kind);

}  // namespace lighten
