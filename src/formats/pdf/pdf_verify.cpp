// verify_pdf: the output is parsed again and its object graph walked side by side with the
// input's from the catalog and the document information: every dictionary has the same keys and
// values, every stream decodes to the same bytes (Flate inflated by zlib; images whose predictor
// changed decoded by qpdf, predictors undone), and every changed JPEG passes the engine's JPEG
// verifier. Several input streams may become one output stream (identical streams merged) when
// each of them compares equal to it; dictionaries and arrays stay one to one.
// describe_pdf: what `lighten info` shows.
#include <qpdf/QPDFPageDocumentHelper.hh>

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <string>

#include "codecs/deflate.h"
#include "formats/pdf/pdf_document.h"
#include "formats/pdf/pdf_flate_jpeg.h"
#include "formats/pdf/pdf_format.h"
#include "formats/pdf/pdf_streams.h"

namespace lighten {
namespace {

class GraphCompare {
 public:
  explicit GraphCompare(Context& context) : context_(context) {}

  // Empty when the two documents hold the same content; otherwise the first difference.
  std::string run(QPDF& a, QPDF& b) {
    // Written as 1.5 when --pdf-version raise raised it (same_version checks that it may).
    facts_ =
        pdf::image_facts(a, a.getPDFVersion() != b.getPDFVersion() && b.getPDFVersion() == "1.5");
    if (!same(a.getRoot(), b.getRoot(), 0)) return problem_;
    if (!same(a.getTrailer().getKey("/Info"), b.getTrailer().getKey("/Info"), 0)) return problem_;
    // Other trailer entries the writer carries (an application's own, say) lead to objects the
    // stream pass rewrote too; the cross-reference keys are the writer's own.
    static const std::set<std::string> kWritersOwn = {
        "/Root", "/Info", "/Size",  "/Prev",   "/XRefStm", "/ID",         "/Encrypt",
        "/Type", "/W",    "/Index", "/Length", "/Filter",  "/DecodeParms"};
    QPDFObjectHandle ta = a.getTrailer(), tb = b.getTrailer();
    for (const std::string& key : ta.getKeys())
      if (!kWritersOwn.count(key) && tb.hasKey(key) && !same(ta.getKey(key), tb.getKey(key), 0))
        return problem_;
    while (!queue_.empty()) {
      if (context_.out_of_time()) return "the time budget ran out during verification";
      auto [x, y] = queue_.front();
      queue_.pop_front();
      if (!same_content(x, y, 0)) return problem_;
    }
    return {};
  }

  bool pixels_identical() const { return pixels_identical_; }
  int jpegs_checked() const { return jpegs_; }

 private:
  bool fail(QPDFObjectHandle x, const std::string& what) {
    problem_ = what + (x.isIndirect() ? " (object " + x.getObjGen().unparse(' ') + ")" : "");
    return false;
  }

  bool same(QPDFObjectHandle x, QPDFObjectHandle y, int depth) {
    if (x.getTypeCode() != y.getTypeCode()) return fail(x, "an object changed type");
    const bool container = x.isDictionary() || x.isArray() || x.isStream();
    if (container && x.isIndirect() && y.isIndirect()) {
      const auto [it, fresh] = map_.emplace(x.getObjGen(), y.getObjGen());
      if (!fresh) return it->second == y.getObjGen() || fail(x, "references point elsewhere");
      // Only merged streams may share an output object, and each is compared with it in turn.
      const auto [back, first] = reverse_.emplace(y.getObjGen(), x.getObjGen());
      if (!first && !x.isStream()) return fail(x, "two objects became one");
      queue_.emplace_back(x, y);
      return true;
    }
    return same_content(x, y, depth);
  }

  bool same_content(QPDFObjectHandle x, QPDFObjectHandle y, int depth) {
    if (depth > pdf::kMaxDirectDepth) return fail(x, "objects nest too deeply to compare");
    switch (x.getTypeCode()) {
      case ::ot_null:
        return true;
      case ::ot_boolean:
        return x.getBoolValue() == y.getBoolValue() || fail(x, "a boolean changed");
      case ::ot_integer:
        return x.getIntValue() == y.getIntValue() || fail(x, "an integer changed");
      case ::ot_real:
        return x.getNumericValue() == y.getNumericValue() || fail(x, "a number changed");
      case ::ot_name:
        return x.getName() == y.getName() || fail(x, "a name changed");
      case ::ot_string:
        return x.getStringValue() == y.getStringValue() || fail(x, "a string changed");
      case ::ot_array: {
        const int n = x.getArrayNItems();
        if (n != y.getArrayNItems()) return fail(x, "an array changed length");
        for (int i = 0; i < n; ++i)
          if (!same(x.getArrayItem(i), y.getArrayItem(i), depth + 1)) return false;
        return true;
      }
      case ::ot_dictionary:
        return same_dict(x, y, depth, false);
      case ::ot_stream:
        return same_dict(x.getDict(), y.getDict(), depth, true) && same_data(x, y);
      default:
        return x.unparse() == y.unparse() || fail(x, "an unusual object changed");
    }
  }

  // Filters and their parameters: equal types and values (same_content alone takes a null for
  // anything).
  bool same_direct(QPDFObjectHandle x, QPDFObjectHandle y) {
    return x.getTypeCode() == y.getTypeCode() && same_content(x, y, 0);
  }

  // Stream dictionaries may differ in /Length, and in /Filter when an unfiltered stream was
  // deflated; same_data checks the filters.
  bool same_dict(QPDFObjectHandle x, QPDFObjectHandle y, int depth, bool stream) {
    std::set<std::string> xk = x.getKeys(), yk = y.getKeys();
    if (stream) {
      for (auto* s : {&xk, &yk}) s->erase("/Length"), s->erase("/Filter"), s->erase("/DecodeParms");
    }
    if (xk != yk) return fail(x, "a dictionary's keys changed");
    for (const std::string& k : xk)
      if (!same(x.getKey(k), y.getKey(k), depth + 1)) return false;
    return true;
  }

  // What the expansion budget leaves for one more stream to decode to.
  uint64_t expansion_left() const {
    const uint64_t max = context_.policy().limits.max_expanded_bytes;
    return max > expanded_ ? max - expanded_ : 0;
  }

  // qpdf's own decoding (zlib and its predictor code), independent of the optimiser's encoder.
  Bytes decoded(QPDFObjectHandle stream) {
    std::shared_ptr<Buffer> data = stream.getStreamData(qpdf_dl_generalized);
    expanded_ += data->getSize();
    if (expanded_ > context_.policy().limits.max_expanded_bytes)
      throw FormatError(Reason::kLimitExceeded, 0, "streams expand past the expansion budget");
    return Bytes(data->getBuffer(), data->getBuffer() + data->getSize());
  }

  // Compact mode: a photographic Flate image as JPEG within the floor (pdf_flate_jpeg).
  bool same_photo(QPDFObjectHandle x, const Bytes& jpeg) {
    if (!pdf::may_become_jpeg(x, context_.policy(), facts_))
      return fail(x, "a Flate image that must stay exact became a JPEG");
    double score = 0;
    const Bytes samples = decoded(x);
    // The JPEG's decode and the metric's two images, about three times the samples more.
    const MemoryHold hold = context_.hold_memory(4 * uint64_t(samples.size()));
    const std::string problem = pdf::check_photo_jpeg(x, samples, jpeg, context_.policy(), &score);
    if (!problem.empty()) return fail(x, problem);
    pixels_identical_ = false;
    ++jpegs_;
    return true;
  }

  bool same_data(QPDFObjectHandle x, QPDFObjectHandle y) {
    QPDFObjectHandle xd = x.getDict(), yd = y.getDict();
    const std::string fx = pdf::sole_filter(x), fy = pdf::sole_filter(y);
    const bool same_filters = same_direct(xd.getKey("/Filter"), yd.getKey("/Filter")) &&
                              same_direct(xd.getKey("/DecodeParms"), yd.getKey("/DecodeParms"));
    problem_.clear();
    const Bytes a = pdf::raw_data(x), b = pdf::raw_data(y);
    if (same_filters && a == b) return true;
    if (fx.empty() && fy == "/FlateDecode" && !yd.hasKey("/DecodeParms"))
      return inflates_alike(b, a, false, expansion_left(), DeflateWrapper::kZlib) ||
             fail(x, "a deflated stream decodes to other bytes");
    const bool x_plain = fx.empty() && !xd.hasKey("/DecodeParms");
    if (!same_filters && (fx == "/FlateDecode" || x_plain) && fy == "/FlateDecode" &&
        pdf::is_image(x)) {
      const Bytes before = decoded(x);
      // The output's samples and qpdf's buffer of them.
      const MemoryHold hold = context_.hold_memory(3 * uint64_t(before.size()));
      return decoded(y) == before || fail(x, "a Flate image decodes to other samples");
    }
    if (!same_filters && (fx == "/FlateDecode" || x_plain) && fy == "/DCTDecode" &&
        pdf::is_image(x) && !yd.hasKey("/DecodeParms"))
      return same_photo(x, b);
    if (!same_filters) return fail(x, "a stream's filters changed");
    // Compared as both inflate: neither stream is held whole.
    if (fx == "/FlateDecode")
      return inflates_alike(b, a, true, expansion_left(), DeflateWrapper::kZlib) ||
             fail(x, "a Flate stream decodes to other bytes");
    if (fx == "/DCTDecode") {
      const Verdict v = context_.verify_embedded_under(
          a, b, pdf::jpeg_image_policy(x, a, context_.policy(), facts_));
      if (!v.ok) return fail(x, "a JPEG image: " + v.problem);
      pixels_identical_ = pixels_identical_ && v.quality.pixels_identical;
      ++jpegs_;
      return true;
    }
    return fail(x, "a " + fx + " stream changed");
  }

  Context& context_;
  std::map<QPDFObjGen, QPDFObjGen> map_;
  std::map<QPDFObjGen, QPDFObjGen> reverse_;  // output object -> the first input mapped to it
  pdf::ImageFacts facts_;                     // the input's masks and redefined device spaces
  std::deque<std::pair<QPDFObjectHandle, QPDFObjectHandle>> queue_;
  std::string problem_;
  uint64_t expanded_ = 0;
  bool pixels_identical_ = true;
  int jpegs_ = 0;
};

// The version stays, or (with the policy's consent) an unencrypted file below 1.5 became 1.5.
bool same_version(QPDF& a, QPDF& b, const Policy& policy) {
  if (a.getPDFVersion() == b.getPDFVersion() && a.getExtensionLevel() == b.getExtensionLevel())
    return true;
  return policy.pdf_version == PdfVersionPolicy::kRaise && !a.isEncrypted() &&
         a.getPDFVersion() < "1.5" && a.getPDFVersion().size() == 3 && b.getPDFVersion() == "1.5" &&
         b.getExtensionLevel() == 0;
}

}  // namespace

Verdict verify_pdf(ByteView input, ByteView output, Context& context) {
  // With `repair`, the output is compared with what qpdf reconstructed from the input.
  std::unique_ptr<QPDF> a = pdf::open_pdf(input, "input", context.policy().repair);
  std::unique_ptr<QPDF> b = pdf::open_pdf(output, "output");
  return pdf::guard_qpdf([&]() -> Verdict {
    if (a->isEncrypted() != b->isEncrypted()) return {false, "encryption changed", {}};
    if (!same_version(*a, *b, context.policy())) return {false, "the PDF version changed", {}};
    if (a->isLinearized() && !b->isLinearized()) return {false, "no longer linearised", {}};
    if (b->isLinearized() && !b->checkLinearization())
      return {false, "the output's linearisation does not check", {}};
    const size_t pages = QPDFPageDocumentHelper(*a).getAllPages().size();
    if (QPDFPageDocumentHelper(*b).getAllPages().size() != pages)
      return {false, "the page count changed", {}};
    GraphCompare compare(context);
    const std::string problem = compare.run(*a, *b);
    if (!problem.empty()) return {false, problem, {}};
    if (b->anyWarnings()) return {false, "qpdf warns about the output", {}};
    // (A file qpdf reconstructed under `repair` is written without it.)
    const ByteView tail_a = pdf::data_after_eof(input), tail_b = pdf::data_after_eof(output);
    if (!context.policy().repair &&
        !std::equal(tail_a.begin(), tail_a.end(), tail_b.begin(), tail_b.end()))
      return {false, "the data after %%EOF changed", {}};
    Verdict v;
    v.ok = true;
    v.quality.pixels_identical = compare.pixels_identical();
    return v;
  });
}

void describe_pdf(ByteView input, FileInfo& info) {
  std::unique_ptr<QPDF> doc = pdf::open_pdf(input, "input");
  pdf::guard_qpdf([&] {
    QPDF& pdf = *doc;
    const pdf::PdfFacts facts = pdf::inspect(pdf, input);
    auto add = [&](const char* name, std::string value) {
      info.properties.emplace_back(name, std::move(value));
    };
    auto yes_no = [](bool b) { return std::string(b ? "yes" : "no"); };
    add("version",
        facts.version + (facts.extension_level
                             ? " (extension level " + std::to_string(facts.extension_level) + ")"
                             : ""));
    add("pages", std::to_string(QPDFPageDocumentHelper(pdf).getAllPages().size()));
    add("encrypted", yes_no(facts.encrypted));
    add("linearised", yes_no(facts.linearized));
    add("signed", facts.signed_ ? "yes: " + facts.signature_reason : "no");
    add("PDF/A", facts.pdfa_part ? std::to_string(facts.pdfa_part) + facts.pdfa_conformance : "no");
    add("incremental updates", facts.incremental ? "yes (" + facts.incremental_sign + ")" : "no");
    const std::vector<QPDFObjectHandle> objects = pdf.getAllObjects();
    add("objects", std::to_string(objects.size()));
    std::map<std::string, int> images;
    uint64_t image_bytes = 0, other_bytes = 0;
    for (QPDFObjectHandle obj : objects) {
      if (!obj.isStream()) continue;
      QPDFObjectHandle length = obj.getDict().getKey("/Length");
      const uint64_t size =
          length.isInteger() && length.getIntValue() > 0 ? uint64_t(length.getIntValue()) : 0;
      if (pdf::is_image(obj)) {
        const std::string f = pdf::sole_filter(obj);
        ++images[f.empty() ? "unfiltered" : f == "?" ? "filter chain" : f.substr(1)];
        image_bytes += size;
      } else {
        other_bytes += size;
      }
    }
    std::string list;
    for (const auto& [f, n] : images)
      list += (list.empty() ? "" : ", ") + std::to_string(n) + " " + f;
    add("images", list.empty() ? "none" : list);
    add("image stream bytes", std::to_string(image_bytes));
    add("other stream bytes", std::to_string(other_bytes));
    if (pdf.anyWarnings()) add("warnings", std::to_string(pdf.numWarnings()) + " from qpdf");
  });
}

}  // namespace lighten
