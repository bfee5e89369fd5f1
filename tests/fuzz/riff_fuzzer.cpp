// libFuzzer target seeded with AVI files. Exercises the RIFF parser, the index resolver, the
// MJPEG frame splitter, recursion into frames and verification.
#include "fuzz/through_api.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return lighten::fuzz::optimize_through_api(data, size);
}
