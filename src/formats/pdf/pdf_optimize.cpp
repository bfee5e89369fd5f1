// optimize_pdf: embedded JPEGs go back to the engine like files on disk, Flate streams are
// re-deflated with lighten's back-ends, unfiltered streams are deflated, and qpdf rewrites the
// structure (object streams where the version and conformance allow, unreferenced objects gone).
#include <qpdf/Pl_Flate.hh>
#include <qpdf/QPDFWriter.hh>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "codecs/deflate.h"
#include "formats/pdf/pdf_document.h"
#include "formats/pdf/pdf_format.h"

namespace lighten {
namespace {

using pdf::PdfFacts;

// Unfiltered streams shorter than this cannot pay for the "/Filter /FlateDecode" they would need.
constexpr size_t kMinStreamToCompress = 64;
constexpr size_t kFilterKeyCost = 24;

int version_number(const std::string& version) {
  const int major = std::atoi(version.c_str());
  const size_t dot = version.find('.');
  const int minor = dot == std::string::npos ? 0 : std::atoi(version.c_str() + dot + 1);
  return major * 10 + minor;
}

// qpdf compresses the object and xref streams it generates with its own zlib at a process-wide
// level; lighten always wants the best, and setting it once keeps every thread consistent.
void use_best_qpdf_flate_level() {
  static std::once_flag once;
  std::call_once(once, [] { Pl_Flate::setCompressionLevel(9); });
}

void refuse_protected(const PdfFacts& facts) {
  if (facts.signed_)
    throw FormatError(Reason::kSigned, 0,
                      "signed PDF (" + facts.signature_reason + "); rewriting would break it");
  if (facts.incremental)
    throw FormatError(Reason::kUnsupportedVariant, 0,
                      "has incremental updates (" + std::to_string(facts.xref_sections) +
                          " xref sections); rewriting would merge its revisions");
}

// Whitespace after a zlib stream's end is common and harmless; anything else is left alone.
bool only_whitespace(ByteView rest) {
  for (uint8_t c : rest)
    if (c != ' ' && c != '\r' && c != '\n' && c != '\t' && c != '\f' && c != 0) return false;
  return true;
}

struct Tally {
  std::map<std::string, int> jpeg_by_filter;
  int jpegs = 0;
  int redeflated = 0;
  int compressed = 0;
  uint64_t expanded = 0;  // decoded bytes so far, against the expansion budget
};

class StreamOptimizer {
 public:
  StreamOptimizer(Context& context, std::map<QPDFObjGen, std::string> names, bool pdfa,
                  Outcome& outcome)
      : context_(context), names_(std::move(names)), pdfa_(pdfa), outcome_(outcome) {}

  void run(QPDFObjectHandle stream) {
    if (context_.out_of_time())
      throw FormatError(Reason::kLimitExceeded, 0, "the time budget ran out");
    if (pdf::is_untouchable(stream)) return;
    // Outside PDF/A, XMP is compressed like any other stream (readers of PDF inflate it).
    if (pdfa_ && pdf::is_metadata(stream)) return;
    const std::string filter = pdf::sole_filter(stream);
    if (filter == "/DCTDecode" && pdf::is_image(stream)) {
      jpeg(stream);
    } else if (filter == "/FlateDecode") {
      flate(stream);
    } else if (filter.empty() && !stream.getDict().hasKey("/DecodeParms")) {
      unfiltered(stream);
    }
  }

  const Tally& tally() const { return tally_; }

 private:
  std::string name_of(QPDFObjectHandle stream) const {
    const auto it = names_.find(stream.getObjGen());
    return it != names_.end() ? it->second : "image " + stream.getObjGen().unparse(' ') + " R";
  }

  void charge(size_t bytes) {
    tally_.expanded += bytes;
    if (tally_.expanded > context_.policy().limits.max_expanded_bytes)
      throw FormatError(Reason::kLimitExceeded, 0,
                        "streams expand past the expansion budget (" +
                            std::to_string(context_.policy().limits.max_expanded_bytes) +
                            " bytes)");
  }

  size_t budget_left() const {
    const uint64_t max = context_.policy().limits.max_expanded_bytes;
    return tally_.expanded >= max ? 0 : size_t(max - tally_.expanded);
  }

  // The filter and its parameters stay exactly as they were: only the encoded bytes change.
  static void replace(QPDFObjectHandle stream, const Bytes& data) {
    QPDFObjectHandle dict = stream.getDict();
    stream.replaceStreamData(std::string(data.begin(), data.end()), dict.getKey("/Filter"),
                             dict.getKey("/DecodeParms"));
  }

  void jpeg(QPDFObjectHandle stream) {
    const Bytes raw = pdf::raw_data(stream);
    if (sniff(raw) != Kind::kJpeg) return;
    charge(raw.size());
    const std::string name = name_of(stream);
    Outcome item = context_.optimize_embedded(raw, name);
    for (auto& w : item.warnings) outcome_.warnings.push_back(name + ": " + w);
    if (!item.replaced() || item.bytes.size() >= raw.size()) return;
    replace(stream, item.bytes);
    ++tally_.jpegs;
  }

  void flate(QPDFObjectHandle stream) {
    const Bytes raw = pdf::raw_data(stream);
    Bytes decoded;
    size_t consumed = 0;
    try {
      decoded = inflate_bounded(raw, budget_left(), DeflateWrapper::kZlib, &consumed);
    } catch (const FormatError& e) {
      if (e.reason() == Reason::kLimitExceeded) throw;
      return;  // damaged or raw deflate: viewers cope their own way; leave the bytes as they are
    }
    if (!only_whitespace(ByteView(raw).subspan(consumed))) return;
    charge(decoded.size());
    const Bytes packed = deflate_bytes(decoded, context_.policy().effort, DeflateWrapper::kZlib);
    if (packed.size() >= raw.size()) return;
    replace(stream, packed);
    ++tally_.redeflated;
  }

  void unfiltered(QPDFObjectHandle stream) {
    const Bytes raw = pdf::raw_data(stream);
    if (raw.size() < kMinStreamToCompress) return;
    charge(raw.size());
    const Bytes packed = deflate_bytes(raw, context_.policy().effort, DeflateWrapper::kZlib);
    if (packed.size() + kFilterKeyCost >= raw.size()) return;
    stream.replaceStreamData(std::string(packed.begin(), packed.end()),
                             QPDFObjectHandle::newName("/FlateDecode"),
                             QPDFObjectHandle::newNull());
    ++tally_.compressed;
  }

  Context& context_;
  std::map<QPDFObjGen, std::string> names_;
  bool pdfa_;
  Outcome& outcome_;
  Tally tally_;
};

std::string describe_work(const Tally& t, bool object_streams, bool linearized) {
  std::string d;
  auto add = [&](int n, const char* what) {
    if (n > 0) d += (d.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  add(t.jpegs, "jpeg optimised");
  add(t.redeflated, "flate streams re-deflated");
  add(t.compressed, "streams deflated");
  if (object_streams) d += std::string(d.empty() ? "" : "; ") + "object streams";
  if (linearized) d += std::string(d.empty() ? "" : "; ") + "linearised";
  return d.empty() ? "structure rewritten" : d;
}

}  // namespace

Outcome optimize_pdf(ByteView input, Context& context) {
  std::unique_ptr<QPDF> doc = pdf::open_pdf(input, "input");
  return pdf::guard_qpdf([&] {
    QPDF& pdf = *doc;
    const PdfFacts facts = pdf::inspect(pdf, input);
    refuse_protected(facts);
    const std::vector<QPDFObjectHandle> objects = pdf.getAllObjects();
    pdf::refuse_warnings(pdf, "while reading its objects");

    Outcome outcome;
    outcome.kind = Kind::kPdf;
    outcome.bytes_in = input.size();
    StreamOptimizer streams(context, pdf::image_names(pdf), facts.pdfa_part > 0, outcome);
    for (QPDFObjectHandle obj : objects)
      if (obj.isStream()) streams.run(obj);
    pdf::refuse_warnings(pdf, "while reading its streams");

    // PDF/A-1 forbids object and xref streams; below 1.5 they would need a newer version.
    const bool object_streams = version_number(facts.version) >= 15 && facts.pdfa_part != 1;
    use_best_qpdf_flate_level();
    QPDFWriter writer(pdf);
    writer.setOutputMemory();
    writer.setCompressStreams(false);  // what is worth compressing was compressed above
    writer.setDecodeLevel(qpdf_dl_none);
    writer.setObjectStreamMode(object_streams         ? qpdf_o_generate
                               : facts.pdfa_part == 1 ? qpdf_o_disable
                                                      : qpdf_o_preserve);
    writer.setLinearization(facts.linearized);
    // Keeps /ID's first element; the second becomes a digest of the content, so the same input
    // always gives the same output. Encryption needs the original /ID and its own salt.
    if (facts.encrypted)
      writer.setPreserveEncryption(true);
    else
      writer.setDeterministicID(true);
    if (facts.pdfa_part > 0) writer.setNewlineBeforeEndstream(true);
    writer.write();
    pdf::refuse_warnings(pdf, "while writing it");
    std::shared_ptr<Buffer> buffer = writer.getBufferSharedPointer();

    const Tally& t = streams.tally();
    outcome.detail = describe_work(t, object_streams, facts.linearized);
    if (buffer->getSize() >= input.size()) {
      outcome.action = Action::kKept;
      outcome.reason = Reason::kNoGain;
      outcome.message =
          "the rewritten PDF (" + std::to_string(buffer->getSize()) + " bytes) is not smaller";
      return outcome;
    }
    outcome.bytes.assign(buffer->getBuffer(), buffer->getBuffer() + buffer->getSize());
    outcome.action = Action::kReplaced;
    return outcome;
  });
}

}  // namespace lighten
