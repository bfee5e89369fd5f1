// libFuzzer target seeded with PDF files. Exercises PDF: qpdf's parser under lighten's settings,
// the stream walk, JPEGs handed back to the engine, the writer and the verifier.
#include "fuzz/through_api.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return lighten::fuzz::optimize_through_api(data, size);
}
