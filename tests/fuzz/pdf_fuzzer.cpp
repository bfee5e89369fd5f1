// libFuzzer target seeded with PDF files. Exercises PDF: qpdf's parser under lighten's settings,
// the stream walk, JPEGs handed back to the engine, the writer and the verifier; then the paths
// only a policy opens: xref reconstruction (`repair`) and the version raised to 1.5.
#include "fuzz/through_api.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lighten::fuzz::optimize_through_api(data, size);
  lighten::Policy policy;
  policy.limits.max_pixels = 4'000'000;
  policy.limits.max_expanded_bytes = 64u << 20;
  policy.limits.time_budget_s = 20;
  policy.effort = 1;
  policy.repair = true;
  policy.pdf_version = lighten::PdfVersionPolicy::kRaise;
  const lighten::Outcome outcome = lighten::optimize({data, size}, policy);
  if (outcome.replaced() && outcome.bytes.size() >= size) __builtin_trap();
  return 0;
}
