#include "formats/pdf/pdf_document.h"

#include <qpdf/Pipeline.hh>
#include <qpdf/Pl_Discard.hh>
#include <qpdf/QPDFExc.hh>
#include <qpdf/QPDFLogger.hh>
#include <qpdf/QPDFPageDocumentHelper.hh>

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>

#include "codecs/deflate.h"

namespace lighten::pdf {
namespace {

// XMP packets are small; a larger one is not worth decoding to look for a PDF/A claim.
constexpr size_t kMaxMetadataBytes = 16u << 20;

bool pdf_whitespace(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '\0';
}

// Each scan from a keyword goes at most this far: a file of many keywords is read in time
// proportional to its size, however it is made.
constexpr size_t kMostSkipped = 64;

// Past whitespace (at most kMostSkipped bytes of it) from `i`.
size_t skip_whitespace(std::string_view text, size_t i) {
  for (const size_t end = std::min(text.size(), i + kMostSkipped);
       i < end && pdf_whitespace(text[i]);)
    ++i;
  return i;
}

// Past digits (at most 20: any offset or object number) from `i`.
size_t skip_digits(std::string_view text, size_t i) {
  for (const size_t end = std::min(text.size(), i + 20);
       i < end && std::isdigit(static_cast<unsigned char>(text[i]));)
    ++i;
  return i;
}

// PDF's delimiters, which end a token as whitespace does (">>startxref").
bool pdf_delimiter(char c) {
  return std::string_view("()<>[]{}/%").find(c) != std::string_view::npos;
}

// A "startxref" keyword with its offset: where the offset's end of line ends, and the offset.
struct StartXref {
  size_t end = 0;
  uint64_t offset = 0;
};

// The keyword at `at`, or nullopt when what follows is no offset (the word in a string, a
// content stream or an attachment's text).
std::optional<StartXref> read_startxref(std::string_view text, size_t at) {
  if (at > 0 && !pdf_whitespace(text[at - 1]) && !pdf_delimiter(text[at - 1])) return std::nullopt;
  size_t i = skip_whitespace(text, at + std::string_view("startxref").size());
  const size_t digits_end = skip_digits(text, i);
  if (digits_end == i) return std::nullopt;
  StartXref x;
  for (; i < digits_end && x.offset < (uint64_t(1) << 50); ++i)
    x.offset = x.offset * 10 + uint64_t(text[i] - '0');
  i = digits_end;
  if (i < text.size() && text[i] == '\r') ++i;
  if (i < text.size() && text[i] == '\n') ++i;
  x.end = i;
  return x;
}

// Whether `offset` (from the file's start, or from its header's) leads to an xref table or an
// object (an xref stream), or is the 0 of a linearised file's first-page trailer.
bool leads_to_xref(std::string_view text, uint64_t offset) {
  if (offset == 0) return true;
  const size_t header = text.substr(0, 1024).find("%PDF-");
  for (const size_t base : {size_t(0), header == std::string_view::npos ? size_t(0) : header}) {
    if (offset >= text.size() - base) continue;
    const size_t i = skip_whitespace(text, base + size_t(offset));
    if (text.substr(i, 4) == "xref") return true;
    // "12 0 obj"
    size_t j = i;
    for (int part = 0; part < 2; ++part) {
      const size_t digits = j;
      j = skip_digits(text, j);
      if (j == digits) break;
      j = skip_whitespace(text, j);
      if (part == 1 && text.substr(j, 3) == "obj") return true;
    }
  }
  return false;
}

// The "startxref" keywords whose offset leads to an xref section: one for each section a reader
// starts from (two in a linearised file, one more for each incremental update). The word in a
// content stream or an attachment's text is not one.
size_t count_xref_sections(std::string_view text) {
  size_t n = 0;
  for (size_t at = text.find("startxref"); at != std::string_view::npos;
       at = text.find("startxref", at + 1)) {
    if (const std::optional<StartXref> x = read_startxref(text, at))
      n += leads_to_xref(text, x->offset);
  }
  return n;
}

// A linearised file's first object, within its first kilobyte, is the linearisation dictionary,
// whose /L states the file's length. qpdf stops calling a file linearised once bytes are appended
// (the length no longer holds); its xref sections are still the two of a linearised file. Only a
// first object that is such a dictionary, stating the length of the file up to one of its %%EOF
// markers, counts: the word in a comment, or a stale dictionary a rewrite left before an update,
// would hide that update (and lose its first revision).
bool declares_linearization(std::string_view text) {
  const std::string_view head = text.substr(0, 1024);
  size_t i = head.find("%PDF-");
  if (i == std::string_view::npos) return false;
  for (;;) {  // the header and comment lines, and the whitespace between them
    while (i < head.size() && pdf_whitespace(head[i])) ++i;
    if (i >= head.size() || head[i] != '%') break;
    while (i < head.size() && head[i] != '\n' && head[i] != '\r') ++i;
  }
  const auto number = [&] {
    const size_t from = i;
    while (i < head.size() && head[i] >= '0' && head[i] <= '9') ++i;
    const bool any = i > from;
    while (i < head.size() && pdf_whitespace(head[i])) ++i;
    return any;
  };
  if (!number() || !number() || head.substr(i, 3) != "obj") return false;
  i += 3;
  while (i < head.size() && pdf_whitespace(head[i])) ++i;
  if (head.substr(i, 2) != "<<") return false;
  const size_t end = head.find(">>", i);
  if (end == std::string_view::npos) return false;
  const std::string_view dict = head.substr(i + 2, end - i - 2);
  if (dict.find("/Linearized") == std::string_view::npos) return false;
  // /L and its value (not the /Linearized key).
  for (size_t at = dict.find("/L"); at != std::string_view::npos; at = dict.find("/L", at + 2)) {
    size_t v = at + 2;
    if (v >= dict.size() || !pdf_whitespace(dict[v])) continue;
    while (v < dict.size() && pdf_whitespace(dict[v])) ++v;
    uint64_t length = 0;
    const size_t digits = v;
    while (v < dict.size() && dict[v] >= '0' && dict[v] <= '9' && length < (1ull << 50))
      length = length * 10 + uint64_t(dict[v++] - '0');
    if (v == digits || length > text.size()) return false;
    if (length == text.size()) return true;
    // The file to its stated length ends with %%EOF and at most an end of line.
    const std::string_view stated = text.substr(0, length);
    const size_t eof = stated.rfind("%%EOF");
    return eof != std::string_view::npos && length - eof <= 7;
  }
  return false;
}

// Reads the value after "pdfaid:<key>" in either XMP form: attribute or element.
std::string xmp_value(std::string_view xmp, std::string_view key) {
  const size_t at = xmp.find(key);
  if (at == std::string_view::npos) return {};
  size_t i = at + key.size();
  // Skip `="`, `='` or `>` (and whitespace) before the value.
  while (i < xmp.size() && i < at + key.size() + 8 &&
         (xmp[i] == '=' || xmp[i] == '"' || xmp[i] == '\'' || xmp[i] == '>' ||
          std::isspace(static_cast<unsigned char>(xmp[i]))))
    ++i;
  std::string value;
  while (i < xmp.size() && value.size() < 8 && std::isalnum(static_cast<unsigned char>(xmp[i])))
    value += xmp[i++];
  return value;
}

void read_pdfa(QPDF& pdf, PdfFacts& facts) {
  QPDFObjectHandle metadata = pdf.getRoot().getKey("/Metadata");
  if (!metadata.isStream()) return;
  const Bytes raw = raw_data(metadata);
  if (raw.size() > kMaxMetadataBytes) return;
  const std::string filter = sole_filter(metadata);
  Bytes xmp;
  if (filter.empty()) {
    xmp = raw;
  } else if (filter == "/FlateDecode") {
    try {
      xmp = inflate_bounded(raw, kMaxMetadataBytes, DeflateWrapper::kZlib);
    } catch (const FormatError&) {
      return;
    }
  } else {
    return;
  }
  const std::string_view text(reinterpret_cast<const char*>(xmp.data()), xmp.size());
  const std::string part = xmp_value(text, "pdfaid:part");
  if (part.empty() || !std::isdigit(static_cast<unsigned char>(part[0]))) return;
  facts.pdfa_part = part[0] - '0';
  facts.pdfa_conformance = xmp_value(text, "pdfaid:conformance");
}

// PDF/X names itself in the document information (/GTS_PDFXVersion, up to X-3) or by an output
// intent of subtype /GTS_PDFX.
bool claims_pdfx(QPDF& pdf) {
  QPDFObjectHandle info = pdf.getTrailer().getKey("/Info");
  if (info.isDictionary() && info.hasKey("/GTS_PDFXVersion")) return true;
  QPDFObjectHandle intents = pdf.getRoot().getKey("/OutputIntents");
  if (!intents.isArray()) return false;
  for (QPDFObjectHandle intent : intents.aitems())
    if (intent.isDictionary() && intent.getKey("/S").isNameAndEquals("/GTS_PDFX")) return true;
  return false;
}

// A signature dictionary: /ByteRange says which bytes a digest covers.
bool is_signature_value(QPDFObjectHandle v) {
  return v.isDictionary() && v.hasKey("/ByteRange") && v.hasKey("/Contents");
}

// Whether a form field, or one below it in /Kids, is a signed signature field. Fields may be
// written as direct objects, which the walk over indirect objects does not see.
bool signed_field_below(QPDFObjectHandle field, std::set<QPDFObjGen>& seen, int depth) {
  if (depth > 32 || !field.isDictionary()) return false;
  if (field.isIndirect() && !seen.insert(field.getObjGen()).second) return false;
  if (field.getKey("/FT").isNameAndEquals("/Sig") && is_signature_value(field.getKey("/V")))
    return true;
  QPDFObjectHandle kids = field.getKey("/Kids");
  if (!kids.isArray()) return false;
  for (QPDFObjectHandle kid : kids.aitems())
    if (signed_field_below(kid, seen, depth + 1)) return true;
  return false;
}

// Whether `h` or a direct object inside it is a signature or a signed field: a widget written
// directly into a page's /Annots and left out of /Fields still signs the file.
bool holds_signature(QPDFObjectHandle h, int depth) {
  if (depth > kMaxDirectDepth) return false;  // never for what qpdf reads
  if (h.isDictionary()) {
    if (is_signature_value(h) ||
        (h.getKey("/FT").isNameAndEquals("/Sig") && is_signature_value(h.getKey("/V"))))
      return true;
    for (const std::string& key : h.getKeys()) {
      QPDFObjectHandle v = h.getKey(key);
      if (!v.isIndirect() && holds_signature(v, depth + 1)) return true;
    }
  } else if (h.isArray()) {
    for (QPDFObjectHandle v : h.aitems())
      if (!v.isIndirect() && holds_signature(v, depth + 1)) return true;
  }
  return false;
}

void read_signatures(QPDF& pdf, PdfFacts& facts) {
  QPDFObjectHandle root = pdf.getRoot();
  if (root.hasKey("/Perms")) {
    facts.signed_ = true;
    facts.signature_reason = "the catalog has /Perms (DocMDP or UR signatures)";
    return;
  }
  QPDFObjectHandle form = root.getKey("/AcroForm");
  QPDFObjectHandle fields = form.isDictionary() ? form.getKey("/Fields") : QPDFObjectHandle();
  std::set<QPDFObjGen> seen;
  if (fields.isArray())
    for (QPDFObjectHandle field : fields.aitems())
      if (signed_field_below(field, seen, 0)) {
        facts.signed_ = true;
        facts.signature_reason = "a signed signature field in the form's /Fields";
        return;
      }
  for (QPDFObjectHandle obj : pdf.getAllObjects()) {
    if (holds_signature(obj.isStream() ? obj.getDict() : obj, 0)) {
      facts.signed_ = true;
      facts.signature_reason =
          "signature with /ByteRange in object " + obj.getObjGen().unparse(' ');
      return;
    }
  }
}

}  // namespace

void rethrow_as_format_error() {
  try {
    throw;
  } catch (const QPDFExc& e) {
    const size_t offset = e.getFilePosition() > 0 ? size_t(e.getFilePosition()) : 0;
    if (e.getErrorCode() == qpdf_e_password)
      throw FormatError(Reason::kEncrypted, 0,
                        "encrypted with a user password: " + e.getMessageDetail());
    // Certificate (public-key) security and other handlers qpdf has no key for.
    if (e.getErrorCode() == qpdf_e_unsupported &&
        e.getMessageDetail().find("encryption") != std::string::npos)
      throw FormatError(Reason::kEncrypted, 0,
                        "encrypted in a way qpdf cannot open: " + e.getMessageDetail());
    throw FormatError(Reason::kCorrupt, offset, "qpdf: " + e.getMessageDetail());
  } catch (const std::exception& e) {
    throw FormatError(Reason::kCorrupt, 0, std::string("qpdf: ") + e.what());
  } catch (...) {
    throw FormatError(Reason::kCorrupt, 0, "qpdf failed with an unknown exception");
  }
}

std::unique_ptr<QPDF> open_pdf(ByteView bytes, const std::string& description, bool repair) {
  return guard_qpdf([&] {
    auto pdf = std::make_unique<QPDF>();
    // qpdf must never write to the terminal: lighten reports through Outcomes.
    auto logger = QPDFLogger::create();
    auto discard = std::make_shared<Pl_Discard>();
    logger->setInfo(discard);
    logger->setWarn(discard);
    logger->setError(discard);
    pdf->setLogger(logger);
    pdf->setSuppressWarnings(true);
    pdf->setAttemptRecovery(repair);
    pdf->processMemoryFile(description.c_str(), reinterpret_cast<const char*>(bytes.data()),
                           bytes.size());
    return pdf;
  });
}

std::string first_warning(QPDF& pdf) {
  if (!pdf.anyWarnings()) return {};
  // "file is damaged" opens every repair; the next warning says what was damaged.
  for (const QPDFExc& w : pdf.getWarnings())  // getWarnings also clears them
    if (w.getMessageDetail() != "file is damaged" && !w.getMessageDetail().empty())
      return w.getMessageDetail();
  return "file is damaged";
}

void refuse_warnings(QPDF& pdf, const char* when) {
  if (!pdf.anyWarnings()) return;
  const auto warnings = pdf.getWarnings();
  const std::string first = warnings.empty() ? std::string() : warnings.front().getMessageDetail();
  throw FormatError(
      Reason::kCorrupt,
      warnings.empty() ? 0 : size_t(std::max<qpdf_offset_t>(0, warnings.front().getFilePosition())),
      std::string("qpdf had to repair the file ") + when + " (" + first +
          "); a repaired structure is written only with --repair");
}

ByteView data_after_eof(ByteView bytes) {
  static constexpr std::string_view kEof = "%%EOF";
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  // The PDF's own end is the first %%EOF after its last startxref; a later one belongs to what
  // was appended. (Appended data holding a startxref reads as an incremental update: refused.)
  // Without a %%EOF, readers end it at the startxref's offset and its end of line.
  size_t xref = text.rfind("startxref");
  while (xref != std::string_view::npos && !read_startxref(text, xref))
    xref = xref == 0 ? std::string_view::npos : text.rfind("startxref", xref - 1);
  if (xref == std::string_view::npos) return {};
  const size_t at = text.find(kEof, xref);
  size_t from = at == std::string_view::npos ? read_startxref(text, xref)->end : at + kEof.size();
  if (at != std::string_view::npos) {
    if (from < text.size() && text[from] == '\r') ++from;
    if (from < text.size() && text[from] == '\n') ++from;
  }
  const bool blank =
      text.find_first_not_of(std::string_view("\0\t\n\f\r ", 6), from) == std::string_view::npos;
  return blank ? ByteView{} : bytes.subspan(from);
}

PdfFacts inspect(QPDF& pdf, ByteView bytes) {
  PdfFacts facts;
  facts.version = pdf.getPDFVersion();
  facts.extension_level = pdf.getExtensionLevel();
  facts.encrypted = pdf.isEncrypted();
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  facts.linearized = pdf.isLinearized() || declares_linearization(text);
  facts.xref_sections = int(count_xref_sections(text));
  // An earlier revision's startxref qpdf never reads may be stale or missing, so the sections
  // it counts can fall short; the trailer's /Prev (a linearised file's first-page trailer has
  // one of its own) says there is an earlier one.
  if (facts.xref_sections > (facts.linearized ? 2 : 1))
    facts.incremental_sign = std::to_string(facts.xref_sections) + " xref sections";
  else if (!facts.linearized && pdf.getTrailer().hasKey("/Prev"))
    facts.incremental_sign = "the trailer's /Prev names an earlier revision";
  facts.incremental = !facts.incremental_sign.empty();
  read_pdfa(pdf, facts);
  facts.pdfx = claims_pdfx(pdf);
  read_signatures(pdf, facts);
  return facts;
}

std::string sole_filter(QPDFObjectHandle stream) {
  QPDFObjectHandle f = stream.getDict().getKey("/Filter");
  if (f.isNull()) return "";
  if (f.isName()) return f.getName();
  if (f.isArray() && f.getArrayNItems() == 1 && f.getArrayItem(0).isName())
    return f.getArrayItem(0).getName();
  return "?";
}

bool is_image(QPDFObjectHandle stream) {
  return stream.getDict().getKey("/Subtype").isNameAndEquals("/Image");
}

bool is_untouchable(QPDFObjectHandle stream) {
  QPDFObjectHandle dict = stream.getDict();
  QPDFObjectHandle type = dict.getKey("/Type");
  return type.isNameAndEquals("/XRef") || type.isNameAndEquals("/ObjStm") || dict.hasKey("/F");
}

bool is_metadata(QPDFObjectHandle stream) {
  return stream.getDict().getKey("/Type").isNameAndEquals("/Metadata");
}

std::map<QPDFObjGen, std::string> image_names(QPDF& pdf) {
  std::map<QPDFObjGen, std::string> names;
  int n = 0;
  for (QPDFPageObjectHelper& page : QPDFPageDocumentHelper(pdf).getAllPages()) {
    ++n;
    for (auto& [name, image] : page.getImages())
      names.emplace(image.getObjGen(), "page " + std::to_string(n) + " image " + name);
  }
  return names;
}

namespace {

// Collects what qpdf decodes, and stops it (qpdf catches the exception and reports failure)
// once the data would pass the limit.
class BoundedSink final : public Pipeline {
 public:
  BoundedSink(size_t limit) : Pipeline("lighten bounded sink", nullptr), limit_(limit) {}
  void write(unsigned char const* data, size_t len) override {
    if (len > limit_ - bytes.size()) {
      over_limit = true;
      throw std::length_error("stream data past the limit");
    }
    bytes.insert(bytes.end(), data, data + len);
  }
  void finish() override {}

  Bytes bytes;
  bool over_limit = false;

 private:
  size_t limit_;
};

}  // namespace

Bytes inflate_held(ByteView raw, size_t limit, Context& context, MemoryHold& hold,
                   size_t* consumed) {
  constexpr uint64_t kCountFirstAbove = 16 << 20;
  if (most_inflated(raw.size()) <= kCountFirstAbove)
    return inflate_bounded(raw, limit, DeflateWrapper::kZlib, consumed);
  const uint64_t size = inflated_size(raw, limit, DeflateWrapper::kZlib);
  hold = context.hold_memory(size);
  return inflate_exact(raw, size_t(size), DeflateWrapper::kZlib, consumed, true);
}

std::optional<Bytes> decoded_within(QPDFObjectHandle stream, size_t limit,
                                    const std::string& what) {
  BoundedSink sink(limit);
  bool ok = false, filtered = false;
  try {
    ok = stream.pipeStreamData(&sink, &filtered, 0, qpdf_dl_generalized,
                               /*suppress_warnings=*/true);
  } catch (const std::exception&) {
    ok = false;
  }
  if (sink.over_limit)
    throw FormatError(Reason::kLimitExceeded, 0,
                      what + " decodes to more than " + std::to_string(limit) + " bytes");
  if (!ok || !filtered) return std::nullopt;  // not filtered: a filter qpdf cannot undo
  return std::move(sink.bytes);
}

Bytes raw_data(QPDFObjectHandle stream) {
  std::shared_ptr<Buffer> buffer = stream.getRawStreamData();
  const uint8_t* p = buffer->getBuffer();
  return Bytes(p, p + buffer->getSize());
}

}  // namespace lighten::pdf
