// The body of the fuzz targets that go through the public API: sniffing, the engine's dispatch,
// recursion into embedded items, every optimiser and verifier. Each target differs by the seeds
// it starts from. Anything but an Outcome (a crash, a sanitizer report, a leak, a hang, an
// escaped exception) is a bug.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lighten/lighten.h"

namespace lighten::fuzz {

inline int optimize_through_api(const uint8_t* data, size_t size) {
  Policy policy;
  policy.plain_zip = PlainZipPolicy::kOptimize;
  // Low limits: the fuzzer should find logic bugs, not spend its time on huge inputs.
  policy.limits.max_pixels = 4'000'000;
  policy.limits.max_expanded_bytes = 64u << 20;
  policy.limits.time_budget_s = 20;
  policy.effort = 1;
  // Small inputs run a mode picked by their last byte and size (formats end alike: a ZIP's
  // empty comment, a PDF's %%EOF), so that the lossy paths (a document's JPEGs, a PDF's images,
  // video frames) are fuzzed as well as the lossless ones, on small images; larger inputs stay
  // lossless so that replaying the corpus stays quick.
  if (size > 0 && size <= 64 * 1024) {
    policy.mode = static_cast<Mode>((data[size - 1] + size) % 4);
    if (policy.mode != Mode::kLossless) {
      policy.limits.max_pixels = 300'000;
      policy.limits.time_budget_s = 5;
    }
  }
  const Outcome outcome = optimize({data, size}, policy);
  if (outcome.replaced() && outcome.bytes.size() >= size) __builtin_trap();
  (void)describe({data, size});
  return 0;
}

}  // namespace lighten::fuzz
