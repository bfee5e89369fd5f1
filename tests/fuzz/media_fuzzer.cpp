// libFuzzer target seeded with the video corpus (MP4, MOV, 3GP, AVI). Exercises lighten's side
// of libav: the in-memory reader and seeker, demuxing, decoding, RGB conversion and the frame
// gate's checks. libav's own parsers get fuzzed upstream (OSS-Fuzz); here a crash, a leak or an
// exception other than FormatError is a bug in how lighten drives them.
#include <cstddef>
#include <cstdint>

#include "core/errors.h"
#include "formats/media/frame_gate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lighten;
  const ByteView bytes(data, size);
  try {
    media::decode_frames(bytes, 7, 2, [](int64_t, const ImageRgb8&) {});
    (void)media::frame_gate(bytes, bytes, 85, 2, 10);
  } catch (const FormatError&) {
  }
  return 0;
}
