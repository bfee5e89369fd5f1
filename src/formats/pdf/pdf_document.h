// Opening a PDF with libqpdf under lighten's rules (no repair, no output on the terminal, qpdf's
// exceptions turned into FormatError) and what the optimiser and verifier need to know about it.
#pragma once

#include <qpdf/QPDF.hh>
#include <qpdf/QPDFObjectHandle.hh>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/bytes.h"
#include "core/context.h"
#include "core/errors.h"

namespace lighten::pdf {

// How deep direct objects are followed: qpdf reads them up to 500 deep, so every document it
// reads is walked whole.
inline constexpr int kMaxDirectDepth = 600;

// Parses `bytes` (which must outlive the result). Without `repair`, no xref reconstruction: a
// file qpdf could only read by repairing it is not ours to rewrite unless the policy says so.
std::unique_ptr<QPDF> open_pdf(ByteView bytes, const std::string& description, bool repair = false);

// Runs `f`, turning whatever qpdf throws into a FormatError with a stable reason.
template <class F>
auto guard_qpdf(F&& f) -> decltype(f());

// Throws kCorrupt when qpdf had to repair or guess anything while reading.
void refuse_warnings(QPDF& pdf, const char* when);
// qpdf's first warning, "" when it has none.
std::string first_warning(QPDF& pdf);

struct PdfFacts {
  std::string version;  // "1.7"
  int extension_level = 0;
  bool encrypted = false;
  bool linearized = false;
  bool signed_ = false;
  std::string signature_reason;  // what made it count as signed
  int pdfa_part = 0;             // 0 when not PDF/A
  std::string pdfa_conformance;  // "B", "A", "U", ...
  bool pdfx = false;             // claims PDF/X (its version is part of the claim)
  int xref_sections = 1;  // startxref keywords with an offset: >1 (beyond linearisation) = updates
  bool incremental = false;
  std::string incremental_sign;  // what shows it: "3 xref sections", or the trailer's /Prev
};

// Looks at the whole file: signatures, PDF/A metadata, encryption, incremental updates.
PdfFacts inspect(QPDF& pdf, ByteView bytes);

// What follows the file's %%EOF (the first after its last startxref; without one, the
// startxref's offset) and its end of line, when that is more than whitespace: data another tool
// appended, which readers skip and the output carries after its own %%EOF.
ByteView data_after_eof(ByteView bytes);

// The stream's one filter ("/FlateDecode"), "" when unfiltered, "?" for a chain or anything odd.
std::string sole_filter(QPDFObjectHandle stream);

bool is_image(QPDFObjectHandle stream);
// Xref and object streams (the writer makes them anew) and streams whose data lives in another
// file: never touched.
bool is_untouchable(QPDFObjectHandle stream);
// An XMP metadata stream: PDF/A keeps it unfiltered, so that tools that do not read PDF find it.
bool is_metadata(QPDFObjectHandle stream);

// "page 3 image /Im0" for images a page names; "image 12 0 R" for the others.
std::map<QPDFObjGen, std::string> image_names(QPDF& pdf);

// Raw (still encoded, decrypted) bytes of a stream.
Bytes raw_data(QPDFObjectHandle stream);

// A stream's data decoded through all its filters by qpdf, held only up to `limit` bytes:
// nullopt when the filters fail; FormatError (kLimitExceeded, naming `what`) when the data
// runs past `limit`. A few kilobytes of chained Flate filters can decode to gigabytes.
std::optional<Bytes> decoded_within(QPDFObjectHandle stream, size_t limit, const std::string& what);

// A Flate stream's bytes inflated within `limit` (FormatError as inflate_bounded's). One that
// could decode to more than a few megabytes is counted first and its memory held with
// `context` (which may wait for room) before it is allocated, once: a 3 MB stream of zeros
// decodes to 3 GB, which growing a buffer would have taken twice. `hold` receives the hold.
Bytes inflate_held(ByteView raw, size_t limit, Context& context, MemoryHold& hold,
                   size_t* consumed = nullptr);

// --- implementation of the template ---
[[noreturn]] void rethrow_as_format_error();

template <class F>
auto guard_qpdf(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const FormatError&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (...) {
    rethrow_as_format_error();
  }
}

}  // namespace lighten::pdf
