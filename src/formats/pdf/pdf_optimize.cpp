// optimize_pdf: the stream pass (pdf_streams) shrinks what streams hold, identical streams merge
// (pdf_dedup), and qpdf rewrites the structure: object streams where the version and conformance
// allow (the version raised to 1.5 only with the policy's consent), unreferenced objects gone,
// linearised files linearised again. With `repair`, files qpdf had to reconstruct are written
// as reconstructed.
#include <qpdf/Pl_Flate.hh>
#include <qpdf/QPDFWriter.hh>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "formats/pdf/pdf_dedup.h"
#include "formats/pdf/pdf_document.h"
#include "formats/pdf/pdf_flate_jpeg.h"
#include "formats/pdf/pdf_format.h"
#include "formats/pdf/pdf_streams.h"

namespace lighten {
namespace {

using pdf::PdfFacts;

// Below this size (and for every linearised file, whose hint tables weigh against object
// streams) both object stream modes are written and the smaller kept: writing is cheap next to
// the stream pass.
constexpr size_t kTryBothObjectStreamModesBelow = 4u << 20;

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
                      "has incremental updates (" + facts.incremental_sign +
                          "); rewriting would merge its revisions");
}

// Encrypted files are not raised: their encryption parameters were chosen for their version.
// Nor are PDF/A-1 and PDF/X files, whose standards fix the version (PDF/X-1a:2001 at 1.3).
bool may_raise_version(const PdfFacts& facts, const Policy& policy) {
  return policy.pdf_version == PdfVersionPolicy::kRaise && version_number(facts.version) < 15 &&
         facts.pdfa_part != 1 && !facts.pdfx && !facts.encrypted;
}

struct WriteSettings {
  bool linearize = false;
  bool encrypted = false;
  bool pdfa = false;
  bool raise_version = false;
};

std::shared_ptr<Buffer> write_pdf(QPDF& pdf, const WriteSettings& s, qpdf_object_stream_e mode) {
  // qpdf writes the catalog's XMP uncompressed unless told to leave the stream as it is; the
  // stream pass already chose its encoding (left alone in PDF/A, compressed elsewhere).
  QPDFObjectHandle metadata = pdf.getRoot().getKey("/Metadata");
  if (metadata.isStream()) metadata.setFilterOnWrite(false);
  QPDFWriter writer(pdf);
  writer.setOutputMemory();
  writer.setCompressStreams(false);  // what is worth compressing was compressed above
  writer.setDecodeLevel(qpdf_dl_none);
  writer.setObjectStreamMode(mode);
  writer.setLinearization(s.linearize);
  if (s.raise_version) writer.setMinimumPDFVersion("1.5");
  // Keeps /ID's first element; the second becomes a digest of the content, so the same input
  // always gives the same output. Encryption needs the original /ID and its own salt.
  if (s.encrypted)
    writer.setPreserveEncryption(true);
  else
    writer.setDeterministicID(true);
  if (s.pdfa) writer.setNewlineBeforeEndstream(true);
  writer.write();
  return writer.getBufferSharedPointer();
}

// The object stream modes to write: generated ones where allowed (also without, for linearised
// and small files, keeping the smaller), none otherwise: under PDF/A-1, or below 1.5, where a
// file that holds object streams all the same (its readers take them) would have its version
// raised by qpdf to keep them.
std::vector<qpdf_object_stream_e> object_stream_modes(const PdfFacts& facts, bool object_streams,
                                                      size_t input_size) {
  if (object_streams) {
    if (facts.linearized || input_size < kTryBothObjectStreamModesBelow)
      return {qpdf_o_generate, qpdf_o_disable};
    return {qpdf_o_generate};
  }
  return {qpdf_o_disable};
}

std::string describe_work(const pdf::StreamTally& t, int merged, bool object_streams,
                          const PdfFacts& facts, bool raised, const std::string& repaired) {
  std::string d;
  auto add = [&](int n, const char* what) {
    if (n > 0) d += (d.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  auto note = [&](const std::string& what) { d += (d.empty() ? "" : "; ") + what; };
  add(t.jpegs, "jpeg optimised");
  add(t.redeflated, "flate streams re-deflated");
  add(t.predicted, "flate images with PNG predictors");
  add(t.photos, "flate images as JPEG");
  add(t.compressed, "streams deflated");
  add(merged, "identical streams merged");
  if (raised) note("PDF version raised from " + facts.version + " to 1.5");
  if (object_streams) note("object streams");
  if (facts.linearized) note("linearised");
  if (!repaired.empty()) note("structure repaired (" + repaired + ")");
  return d.empty() ? "structure rewritten" : d;
}

}  // namespace

Outcome optimize_pdf(ByteView input, Context& context) {
  const Policy& policy = context.policy();
  // qpdf finds a header up to a kilobyte in and counts offsets from it; what comes before it
  // (a mail or web wrapper, another format's header) would not be written again.
  // Whitespace or a byte-order mark alone is no data: it is let go.
  const std::string_view text(reinterpret_cast<const char*>(input.data()), input.size());
  const size_t header = text.substr(0, 1024).find("%PDF-");
  std::string_view before = text.substr(0, std::min(header, text.size()));
  if (before.starts_with("\xEF\xBB\xBF")) before.remove_prefix(3);
  const bool blank =
      before.find_first_not_of(std::string_view("\0\t\n\f\r ", 6)) == std::string_view::npos;
  if (header > 0 && !(header != std::string_view::npos && blank))
    throw FormatError(Reason::kUnsupportedVariant, 0,
                      header == std::string_view::npos
                          ? "no %PDF header in the first kilobyte"
                          : std::to_string(header) +
                                " bytes come before the %PDF header, which a rewritten file "
                                "would not keep");
  std::unique_ptr<QPDF> doc;
  try {
    doc = pdf::open_pdf(input, "input", policy.repair);
  } catch (const FormatError& e) {
    if (policy.repair || e.reason() != Reason::kCorrupt) throw;
    // Said only where qpdf does reconstruct it (a broken cross-reference table, say).
    try {
      (void)pdf::open_pdf(input, "input", true);
    } catch (...) {
      throw e;
    }
    throw FormatError(e.reason(), e.offset(),
                      std::string(e.what()) + "; qpdf can reconstruct it: --repair writes it so");
  }
  return pdf::guard_qpdf([&] {
    QPDF& pdf = *doc;
    // What qpdf had to reconstruct while opening; only reachable with `repair`.
    std::string repaired = pdf::first_warning(pdf);
    const PdfFacts facts = pdf::inspect(pdf, input);
    refuse_protected(facts);
    const std::vector<QPDFObjectHandle> objects = pdf.getAllObjects();
    if (policy.repair) {
      if (repaired.empty()) repaired = pdf::first_warning(pdf);
    } else {
      pdf::refuse_warnings(pdf, "while reading its objects");
    }

    Outcome outcome;
    outcome.kind = Kind::kPdf;
    outcome.bytes_in = input.size();
    pdf::StreamOptimizer streams(context, pdf::image_names(pdf),
                                 pdf::image_facts(pdf, may_raise_version(facts, policy)),
                                 facts.pdfa_part > 0, outcome);
    for (QPDFObjectHandle obj : objects)
      if (obj.isStream()) streams.run(obj);
    if (policy.repair) {
      if (repaired.empty()) repaired = pdf::first_warning(pdf);
    } else {
      pdf::refuse_warnings(pdf, "while reading its streams");
    }
    const int merged = pdf::merge_identical_streams(pdf);

    // PDF/A-1 forbids object and xref streams; below 1.5 they need a newer version.
    const bool raise = may_raise_version(facts, policy);
    const bool object_streams =
        (version_number(facts.version) >= 15 || raise) && facts.pdfa_part != 1;
    use_best_qpdf_flate_level();
    const WriteSettings settings{facts.linearized, facts.encrypted, facts.pdfa_part > 0, raise};
    const auto modes = object_stream_modes(facts, object_streams, input.size());
    std::shared_ptr<Buffer> buffer = write_pdf(pdf, settings, modes.front());
    pdf::refuse_warnings(pdf, "while writing it");
    qpdf_object_stream_e chosen = modes.front();
    // qpdf keeps linearisation state in the QPDF it writes, so a second linearised write of the
    // same QPDF is not sound: the other modes rewrite the first output, parsed anew.
    const std::shared_ptr<Buffer> first = buffer;
    for (size_t i = 1; i < modes.size(); ++i) {
      std::unique_ptr<QPDF> again =
          pdf::open_pdf(ByteView(first->getBuffer(), first->getSize()), "first output");
      std::shared_ptr<Buffer> candidate = write_pdf(*again, settings, modes[i]);
      pdf::refuse_warnings(*again, "while rewriting it");
      if (candidate->getSize() < buffer->getSize()) buffer = candidate, chosen = modes[i];
    }

    outcome.detail =
        describe_work(streams.tally(), merged, chosen == qpdf_o_generate, facts, raise, repaired);
    if (!repaired.empty())
      outcome.warnings.push_back("qpdf reconstructed the structure: " + repaired);
    // Data another tool appended after %%EOF goes after the output's own, as it was (unless
    // qpdf had to reconstruct the file, which such data may have caused).
    const ByteView appended = repaired.empty() ? pdf::data_after_eof(input) : ByteView{};
    const size_t size = buffer->getSize() + appended.size();
    if (size >= input.size()) {
      outcome.action = Action::kKept;
      outcome.reason = Reason::kNoGain;
      outcome.message = "the rewritten PDF (" + std::to_string(size) + " bytes) is not smaller";
      return outcome;
    }
    outcome.bytes.reserve(size);
    outcome.bytes.assign(buffer->getBuffer(), buffer->getBuffer() + buffer->getSize());
    outcome.bytes.insert(outcome.bytes.end(), appended.begin(), appended.end());
    if (!appended.empty())
      outcome.detail += ", " + std::to_string(appended.size()) + " bytes after %%EOF kept";
    outcome.action = Action::kReplaced;
    return outcome;
  });
}

}  // namespace lighten
