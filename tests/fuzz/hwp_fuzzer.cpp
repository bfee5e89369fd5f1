// libFuzzer target seeded with HWP 5.0 documents and inflated record streams
// (tests/fuzz/seeds/hwp). Exercises the HWP record parser (record headers with extended sizes,
// BinData declarations, paragraph text, picture shapes), the stream inflater with Hangul's trailer,
// and then the whole API: FileHeader flags, stream plans, BinData items, the writer and the
// verifier.
#include "formats/hwp/hwp_document.h"
#include "formats/hwp/hwp_records.h"
#include "fuzz/through_api.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const lighten::ByteView bytes(data, size);
  try {
    (void)lighten::hwp::parse_records(bytes);
    (void)lighten::hwp::bin_data_items(bytes);
    (void)lighten::hwp::paragraph_text(bytes);
    (void)lighten::hwp::picture_looks(bytes);
  } catch (const lighten::FormatError&) {
  }
  try {
    auto inflated = lighten::hwp::inflate_stream(bytes, 16u << 20);
    if (inflated && lighten::hwp::writable(inflated->trailer)) {
      const lighten::Bytes again =
          lighten::hwp::deflate_stream(inflated->content, inflated->trailer, 1);
      const auto back = lighten::hwp::inflate_stream(again, inflated->content.size() + 1);
      if (!back || back->content != inflated->content || back->trailer != inflated->trailer)
        __builtin_trap();
    }
  } catch (const lighten::FormatError&) {
  }
  return lighten::fuzz::optimize_through_api(data, size);
}
