// libFuzzer target: arbitrary bytes through the public API as a PDF, so qpdf's parser under
// lighten's settings, the stream walk, JPEGs handed back to the engine, the writer and the
// verifier are all exercised. Anything but an Outcome (a crash, a sanitizer report, a leak, a
// hang, an escaped exception) is a bug.
#include <cstddef>
#include <cstdint>

#include "lighten/lighten.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lighten::Policy policy;
  // Low limits: the fuzzer should find logic bugs, not spend its time on huge streams.
  policy.limits.max_pixels = 4'000'000;
  policy.limits.max_expanded_bytes = 64u << 20;
  policy.limits.time_budget_s = 20;
  policy.effort = 1;
  const lighten::Outcome outcome = lighten::optimize({data, size}, policy);
  if (outcome.replaced() && outcome.bytes.size() >= size) __builtin_trap();
  (void)lighten::describe({data, size});
  return 0;
}
