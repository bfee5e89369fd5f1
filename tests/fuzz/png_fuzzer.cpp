// libFuzzer target seeded with PNG files. Exercises PNG: chunk parsing, unfiltering, re-filtering,
// the libpng verifier.
#include "fuzz/through_api.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return lighten::fuzz::optimize_through_api(data, size);
}
