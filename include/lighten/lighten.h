// The public API: optimise one buffer, or say what it is.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "lighten/kind.h"
#include "lighten/options.h"
#include "lighten/outcome.h"
#include "lighten/policy.h"

namespace lighten {

// Optimises `bytes` under `policy`. Never throws for anything the input contains: problems come
// back as an Outcome with action kKept and a Reason. Pure: no I/O, no globals, thread-safe.
Outcome optimize(std::span<const uint8_t> bytes, const Policy& policy);

// What lighten sees in a file, as ordered name/value lines, for `lighten info`.
struct FileInfo {
  Kind kind = Kind::kUnknown;
  bool supported = false;  // an optimiser exists for this kind
  std::vector<std::pair<std::string, std::string>> properties;
  std::string problem;                         // why it cannot be parsed, if it cannot
  Reason problem_reason = Reason::kOptimized;  // with a problem: corrupt, truncated, ...
};
FileInfo describe(std::span<const uint8_t> bytes);

// Version string of the library.
std::string_view version();

}  // namespace lighten
