// The three functions a format provides to the engine's registry.
#pragma once

#include <string>

#include "core/bytes.h"
#include "core/context.h"
#include "lighten/lighten.h"

namespace lighten {

// Produces a candidate. May throw FormatError; the engine turns it into a reason. Must not
// check "never larger" or verify: the engine does both for every format.
using OptimizeFn = Outcome (*)(ByteView input, Context& context);

// Decodes `output` by a path independent of the optimiser and compares it with `input` under
// the policy's promises. Containers check their changed items through the Context.
using VerifyFn = Verdict (*)(ByteView input, ByteView output, Context& context);

// Fills info.properties for `lighten info`. May throw FormatError.
using DescribeFn = void (*)(ByteView input, FileInfo& info);

struct FormatEntry {
  Kind kind;
  OptimizeFn optimize;
  VerifyFn verify;
  DescribeFn describe;
};

}  // namespace lighten
