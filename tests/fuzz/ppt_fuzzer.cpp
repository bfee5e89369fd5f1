// libFuzzer target for PowerPoint 97-2003. A compound file goes through the public API (CFB
// reader, the BLIP store walk, Pictures re-layout, the writer and the verifier), and its two
// streams go to the record parser directly too. Any other input feeds the record parser
// alone: 4 bytes (little-endian) give the length of the `PowerPoint Document` stream that
// follows, the rest is the `Pictures` stream. The direct runs cut every picture in half, and
// the verifier's comparison must accept what the rewriter produced; the picture-effect scan
// reads the document stream too.
#include "core/bytes.h"
#include "formats/cfb/compound_file.h"
#include "formats/office_binary/picture_effects.h"
#include "formats/office_binary/ppt_pictures.h"
#include "fuzz/through_api.h"

namespace {

using namespace lighten;

void check_records(ByteView document, ByteView pictures) {
  const officeart::PictureRewriter halve = [](ByteView image,
                                              const std::string&) -> std::optional<Bytes> {
    return Bytes(image.begin(), image.begin() + image.size() / 2);
  };
  (void)officeart::shows_pictures_through_effects(document);
  try {
    (void)ppt::current_user_says_encrypted(document);
    const auto out = ppt::rewrite_pictures(document, pictures, halve);
    if (!out) return;
    std::vector<officeart::PicturePair> changed;
    if (!ppt::compare_pictures(document, pictures, out->document, out->pictures, changed).empty() ||
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
      const auto document = file.read_stream("PowerPoint Document");
      const auto pictures = file.read_stream("Pictures");
      if (document && pictures) check_records(*document, *pictures);
    } catch (const FormatError&) {
    }
    return 0;
  }
  if (size < 4) return 0;
  const size_t split = std::min<size_t>(officeart::get_u32le(input, 0), size - 4);
  check_records(input.subspan(4, split), input.subspan(4 + split));
  return 0;
}
