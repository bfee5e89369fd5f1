// libFuzzer target for Excel 97-2003. A compound file goes through the public API (CFB reader,
// the BIFF8 record walk, drawing-group re-split, stream-position fix-ups, the writer and the
// verifier), and its Workbook stream goes to the record parser directly too. Any other input
// is taken as a Workbook stream. The direct runs cut every picture in half, and the verifier's
// comparison must accept what the rewriter produced.
#include "core/bytes.h"
#include "formats/cfb/compound_file.h"
#include "formats/office_binary/xls_workbook.h"
#include "fuzz/through_api.h"

namespace {

using namespace lighten;

void check_records(ByteView workbook) {
  const officeart::PictureRewriter halve = [](ByteView image,
                                              const std::string&) -> std::optional<Bytes> {
    return Bytes(image.begin(), image.begin() + image.size() / 2);
  };
  try {
    const auto out = xls::rewrite_pictures(workbook, halve);
    if (!out) return;
    std::vector<officeart::PicturePair> changed;
    if (!xls::compare_workbooks(workbook, out->workbook, changed).empty() ||
        changed.size() != out->changed)
      __builtin_trap();
  } catch (const FormatError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ByteView input(data, size);
  if (sniff(input) != Kind::kUnknown) {
    fuzz::optimize_through_api(data, size);
    try {
      const cfb::CompoundFile file = cfb::CompoundFile::parse(input);
      if (const auto workbook = file.read_stream("Workbook")) check_records(*workbook);
    } catch (const FormatError&) {
    }
    return 0;
  }
  check_records(input);
  return 0;
}
