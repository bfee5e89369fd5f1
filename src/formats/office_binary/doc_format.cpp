// Word 97-2003 files are left alone. Moving a byte of the Data stream means rewriting every
// offset into it at once, and those live in many places: inline pictures (PICF followed by
// OfficeArt records with the BLIP) are found through sprmCPicLocation in the character
// properties (CHPX FKPs of the WordDocument stream, and the piece table's property modifiers
// in fast-saved files); huge paragraph properties (sprmPHugePapx) and form-field data point
// into the same stream; floating pictures keep their BLIPs in the WordDocument stream at the
// FBSE foDelay offsets of the Table stream's OfficeArtContent. Doing that safely needs a
// complete CHPX/PAPX/piece-table rewriter and tests against Word itself; until then each .doc
// gets a clear reason and stays as it is.
#include "formats/office_binary/doc_format.h"

#include <algorithm>

#include "formats/office_binary/compound_document.h"

namespace lighten {

Outcome optimize_doc(ByteView input, Context& context) {
  (void)context;
  const cfb::CompoundFile file = office_binary::open_document(input);  // damage is reported
  const Bytes word = office_binary::required_stream(file, "WordDocument", "Word");
  Outcome outcome;
  outcome.kind = Kind::kDoc;
  outcome.bytes_in = input.size();
  // FibBase: wIdent 0xA5EC, then at byte 10 the flags whose bit 8 is fEncrypted (a password's
  // RC4 or XOR obfuscation).
  constexpr size_t kFlags = 10;
  constexpr uint16_t kEncrypted = 0x0100;
  if (word.size() >= kFlags + 2 && (word[0] | word[1] << 8) == 0xA5EC &&
      ((word[kFlags] | word[kFlags + 1] << 8) & kEncrypted)) {
    outcome.reason = Reason::kEncrypted;
    outcome.message = "the Word 97-2003 document is encrypted (its FIB says fEncrypted)";
    return outcome;
  }
  outcome.reason = Reason::kUnsupportedVariant;
  outcome.message =
      "Word 97-2003 (.doc) files are left alone: their pictures are located by "
      "character-property offsets that lighten does not rewrite";
  return outcome;
}

Verdict verify_doc(ByteView input, ByteView output, Context& context) {
  (void)context;
  if (std::equal(input.begin(), input.end(), output.begin(), output.end())) return {true, {}, {}};
  return {false, "Word 97-2003 files are never changed", {}};
}

void describe_doc(ByteView input, FileInfo& info) {
  const cfb::CompoundFile file = cfb::CompoundFile::parse(input);
  const std::optional<Bytes> data = file.read_stream("Data");
  info.properties.emplace_back("data stream", std::to_string(data ? data->size() : 0) + " bytes");
  info.properties.emplace_back("pictures", "left alone (Word 97-2003 is not rewritten)");
}

}  // namespace lighten
