// libFuzzer target seeded with ZIP files. Exercises ZIP documents: the central-directory reader,
// layout checks, entries handed back to the engine, the writer and the verifier.
#include "fuzz/through_api.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return lighten::fuzz::optimize_through_api(data, size);
}
