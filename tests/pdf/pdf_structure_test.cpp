// PDF structure work: linearised files keep linearised at their smallest, versions below 1.5 are
// raised only with the policy's consent, identical streams merge (and the verifier accepts
// exactly that), Flate images get PNG predictors without changing a sample, and files qpdf had
// to reconstruct are written only with `repair`.
#include <gtest/gtest.h>
#include <malloc.h>
#include <qpdf/QPDF.hh>
#include <qpdf/QPDFPageDocumentHelper.hh>
#include <qpdf/QPDFWriter.hh>

#include <memory>
#include <string>

#include "formats/pdf/pdf_format.h"
#include "lighten/lighten.h"
#include "pdf/pdf_maker.h"
#include "support/recording_gate.h"

namespace lighten {
namespace {

using testing::as_bytes;
using testing::make_pdf;
using testing::stream_object;

std::unique_ptr<QPDF> open(const std::vector<uint8_t>& bytes) {
  auto q = std::make_unique<QPDF>();
  q->processMemoryFile("test", reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return q;
}

std::string decoded(QPDFObjectHandle stream) {
  auto b = stream.getStreamData(qpdf_dl_generalized);
  return {reinterpret_cast<const char*>(b->getBuffer()), b->getSize()};
}

std::string text_of(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

std::vector<QPDFPageObjectHelper> pages_of(QPDF& q) {
  return QPDFPageDocumentHelper(q).getAllPages();
}

QPDFObjectHandle xobject(QPDFPageObjectHelper& page, const char* name) {
  return page.getObjectHandle().getKey("/Resources").getKey("/XObject").getKey(name);
}

std::string content(int variant) {
  std::string s = "q 64 0 0 48 0 0 cm /Im0 Do Q q 1 0 0 1 100 100 cm /Fm0 Do Q\n";
  for (int i = 0; i < 200; ++i)
    s += std::to_string((i * 7 + variant) % 97) + " " + std::to_string(i % 53) + " m 90 120 l S\n";
  return s;
}

// 8-bit RGB samples that vary smoothly: what PNG predictors are for.
std::string gradient_rgb(int width, int height) {
  std::string s;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      s += char(x * 3 + y);
      s += char(y * 2 + (x * x) / 64);
      s += char(x + y * 3);
    }
  return s;
}

std::string image_object(const std::string& samples, int width, int height,
                         const std::string& extra = "") {
  return stream_object("/Type /XObject /Subtype /Image /Width " + std::to_string(width) +
                           " /Height " + std::to_string(height) +
                           " /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode " +
                           extra,
                       testing::zlib_fast(samples));
}

// Two pages, each with its own content stream, image and form (using that image); `same` makes
// the second page's objects copies of the first's.
std::vector<std::string> two_pages(bool same) {
  const std::string image = image_object(gradient_rgb(64, 48), 64, 48);
  std::string changed = gradient_rgb(64, 48);
  changed[10] = 'x';  // not replace(): GCC 12 warns falsely (-Wrestrict) once it is inlined
  const std::string other = image_object(changed, 64, 48);
  auto form = [](int image_obj) {
    return stream_object(
        "/Type /XObject /Subtype /Form /BBox [0 0 10 10] /Resources << /XObject "
        "<< /Im1 " +
            std::to_string(image_obj) + " 0 R >> >>",
        "q 10 0 0 10 0 0 cm /Im1 Do Q");
  };
  auto page = [](int contents, int image_obj, int form_obj) {
    return "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Resources << /XObject << /Im0 " +
           std::to_string(image_obj) + " 0 R /Fm0 " + std::to_string(form_obj) +
           " 0 R >> >> /Contents " + std::to_string(contents) + " 0 R >>";
  };
  return {
      "<< /Type /Catalog /Pages 2 0 R >>",
      "<< /Type /Pages /Kids [3 0 R 7 0 R] /Count 2 >>",
      page(4, 5, 6),
      stream_object("/Filter /FlateDecode", testing::zlib_fast(content(0))),
      image,
      form(5),
      page(8, 9, 10),
      stream_object("/Filter /FlateDecode", testing::zlib_fast(content(same ? 0 : 1))),
      same ? image : other,
      form(9),
  };
}

std::vector<uint8_t> qpdf_write(const std::vector<uint8_t>& pdf, bool linearize,
                                qpdf_object_stream_e mode) {
  auto q = open(pdf);
  QPDFWriter w(*q);
  w.setOutputMemory();
  w.setCompressStreams(false);
  w.setDecodeLevel(qpdf_dl_none);
  w.setObjectStreamMode(mode);
  w.setLinearization(linearize);
  w.setDeterministicID(true);
  w.write();
  auto b = w.getBufferSharedPointer();
  return {b->getBuffer(), b->getBuffer() + b->getSize()};
}

TEST(PdfStructure, LinearisedFilesStayLinearisedInTheSmallerObjectStreamMode) {
  const auto input = qpdf_write(as_bytes(make_pdf(two_pages(false), "1.6")), true, qpdf_o_generate);
  ASSERT_TRUE(open(input)->isLinearized());
  const Outcome o = optimize(input, Policy{});
  ASSERT_TRUE(o.replaced()) << reason_name(o.reason) << ": " << o.message;
  auto out = open(o.bytes);
  EXPECT_TRUE(out->isLinearized());
  EXPECT_TRUE(out->checkLinearization());
  // Neither object stream mode writes the optimised document smaller than lighten did.
  EXPECT_LE(o.bytes.size(), qpdf_write(o.bytes, true, qpdf_o_generate).size());
  EXPECT_LE(o.bytes.size(), qpdf_write(o.bytes, true, qpdf_o_disable).size());
  EXPECT_FALSE(optimize(o.bytes, Policy{}).replaced());
}

// qpdf's writer stores the catalog's XMP uncompressed unless told otherwise: outside PDF/A the
// compressed packet must reach the output (linearised or not), and read back unchanged.
TEST(PdfStructure, CatalogXmpStaysCompressedOutsidePdfA) {
  const std::string xmp = "<?xpacket begin=\"\"?><x:xmpmeta xmlns:x=\"adobe:ns:meta/\"/>" +
                          std::string(2000, ' ') + "<?xpacket end=\"w\"?>";
  auto objects = two_pages(false);
  objects[0] = "<< /Type /Catalog /Pages 2 0 R /Metadata 11 0 R >>";
  objects.push_back(stream_object("/Type /Metadata /Subtype /XML", xmp));
  const auto plain = as_bytes(make_pdf(objects, "1.6"));
  for (const auto& input : {plain, qpdf_write(plain, true, qpdf_o_generate)}) {
    const Outcome o = optimize(input, Policy{});
    ASSERT_TRUE(o.replaced()) << o.message;
    auto out = open(o.bytes);
    QPDFObjectHandle metadata = out->getRoot().getKey("/Metadata");
    EXPECT_TRUE(metadata.getDict().getKey("/Filter").isNameAndEquals("/FlateDecode"));
    EXPECT_LT(metadata.getRawStreamData()->getSize(), 200u);
    EXPECT_EQ(decoded(metadata), xmp);
  }
}

TEST(PdfStructure, VersionIsRaisedOnlyWhenThePolicySays) {
  const auto input = as_bytes(make_pdf(two_pages(false), "1.4"));
  const Outcome kept = optimize(input, Policy{});
  ASSERT_TRUE(kept.replaced()) << kept.message;
  EXPECT_EQ(open(kept.bytes)->getPDFVersion(), "1.4");
  EXPECT_EQ(text_of(kept.bytes).find("/ObjStm"), std::string::npos);

  Policy raise;
  raise.pdf_version = PdfVersionPolicy::kRaise;
  const Outcome raised = optimize(input, raise);
  ASSERT_TRUE(raised.replaced()) << raised.message;
  EXPECT_EQ(open(raised.bytes)->getPDFVersion(), "1.5");
  EXPECT_NE(text_of(raised.bytes).find("/ObjStm"), std::string::npos);
  EXPECT_NE(text_of(raised.bytes).find("/XRef"), std::string::npos);
  EXPECT_NE(raised.detail.find("raised from 1.4 to 1.5"), std::string::npos) << raised.detail;
  EXPECT_LT(raised.bytes.size(), kept.bytes.size());
  EXPECT_FALSE(optimize(raised.bytes, raise).replaced());

  // The verifier accepts the new version only under the same consent.
  testing::PdfTestContext keep_context, raise_context(raise);
  EXPECT_FALSE(verify_pdf(input, raised.bytes, keep_context).ok);
  EXPECT_TRUE(verify_pdf(input, raised.bytes, raise_context).ok);
  // Nor does it accept a version lowered.
  EXPECT_FALSE(
      verify_pdf(as_bytes(make_pdf(two_pages(false), "1.6")), raised.bytes, raise_context).ok);
}

TEST(PdfStructure, PdfA1IsNotRaised) {
  const std::string xmp =
      "<?xpacket begin=\"\"?><x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF><rdf:Description "
      "xmlns:pdfaid=\"http://www.aiim.org/pdfa/ns/id/\" pdfaid:part=\"1\" "
      "pdfaid:conformance=\"B\"/></rdf:RDF></x:xmpmeta><?xpacket end=\"w\"?>";
  auto objects = two_pages(false);
  objects[0] = "<< /Type /Catalog /Pages 2 0 R /Metadata 11 0 R >>";
  objects.push_back(stream_object("/Type /Metadata /Subtype /XML", xmp));
  Policy raise;
  raise.pdf_version = PdfVersionPolicy::kRaise;
  const Outcome o = optimize(as_bytes(make_pdf(objects, "1.4")), raise);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(open(o.bytes)->getPDFVersion(), "1.4");
  EXPECT_EQ(text_of(o.bytes).find("/ObjStm"), std::string::npos);
  EXPECT_EQ(o.detail.find("raised"), std::string::npos);
}

// PDF/X fixes the version too (X-1a:2001 at 1.3): by its document information key, or by an
// output intent of its subtype.
TEST(PdfStructure, PdfXIsNotRaised) {
  Policy raise;
  raise.pdf_version = PdfVersionPolicy::kRaise;
  for (const bool by_intent : {false, true}) {
    SCOPED_TRACE(by_intent ? "output intent" : "document information");
    auto objects = two_pages(false);
    objects.push_back("<< /Title (press) /GTS_PDFXVersion (PDF/X-1:2001) >>");
    if (by_intent)
      objects[0] =
          "<< /Type /Catalog /Pages 2 0 R /OutputIntents [<< /Type /OutputIntent /S /GTS_PDFX "
          "/OutputConditionIdentifier (CGATS TR 001) >>] >>";
    const std::string info = by_intent ? "" : "/Info " + std::to_string(objects.size()) + " 0 R";
    const Outcome o = optimize(as_bytes(make_pdf(objects, "1.3", info)), raise);
    ASSERT_TRUE(o.replaced()) << o.message;
    EXPECT_EQ(open(o.bytes)->getPDFVersion(), "1.3");
    EXPECT_EQ(text_of(o.bytes).find("/ObjStm"), std::string::npos);
  }
}

TEST(PdfStructure, IdenticalStreamsBecomeOneObject) {
  const auto input = as_bytes(make_pdf(two_pages(true)));
  const Outcome o = optimize(input, Policy{});
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_NE(o.detail.find("3 identical streams merged"), std::string::npos) << o.detail;
  auto out = open(o.bytes);
  auto pages = pages_of(*out);
  ASSERT_EQ(pages.size(), 2u);
  EXPECT_EQ(xobject(pages[0], "/Im0").getObjGen(), xobject(pages[1], "/Im0").getObjGen());
  // The forms became equal once their images merged.
  EXPECT_EQ(xobject(pages[0], "/Fm0").getObjGen(), xobject(pages[1], "/Fm0").getObjGen());
  EXPECT_EQ(pages[0].getObjectHandle().getKey("/Contents").getObjGen(),
            pages[1].getObjectHandle().getKey("/Contents").getObjGen());
  int images = 0;
  for (auto& obj : out->getAllObjects())
    images += obj.isStream() && obj.getDict().getKey("/Subtype").isNameAndEquals("/Image");
  EXPECT_EQ(images, 1);
  auto in = open(input);
  EXPECT_EQ(decoded(xobject(pages_of(*in)[1], "/Im0")), decoded(xobject(pages[1], "/Im0")));
  EXPECT_FALSE(optimize(o.bytes, Policy{}).replaced());

  // Different streams stay apart.
  const Outcome apart = optimize(as_bytes(make_pdf(two_pages(false))), Policy{});
  ASSERT_TRUE(apart.replaced());
  EXPECT_EQ(apart.detail.find("merged"), std::string::npos) << apart.detail;
}

TEST(PdfStructure, VerifierAcceptsMergedStreamsOnlyWhenEqual) {
  testing::PdfTestContext context;
  // Page 2 pointing at page 1's image: right when the images were equal, wrong otherwise.
  auto merged = two_pages(true);
  merged[6] =
      "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Resources << /XObject << /Im0 5 0 R "
      "/Fm0 6 0 R >> >> /Contents 4 0 R >>";
  const auto output = as_bytes(make_pdf(merged));
  EXPECT_TRUE(verify_pdf(as_bytes(make_pdf(two_pages(true))), output, context).ok);
  auto differing = two_pages(true);
  differing[8] = two_pages(false)[8];
  const Verdict wrong = verify_pdf(as_bytes(make_pdf(differing)), output, context);
  EXPECT_FALSE(wrong.ok);
  EXPECT_NE(wrong.problem.find("decodes to other bytes"), std::string::npos) << wrong.problem;

  // Two equal dictionaries made one: not a merge lighten makes, so not accepted.
  auto fonts = two_pages(true);
  fonts.push_back("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
  fonts.push_back("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
  auto with_font = [](std::string page, int font) {
    return page.replace(page.find("/Resources <<") + 13, 0,
                        " /Font << /F1 " + std::to_string(font) + " 0 R >>");
  };
  fonts[2] = with_font(fonts[2], 11);
  fonts[6] = with_font(fonts[6], 12);
  auto one_font = fonts;
  one_font[6] = with_font(two_pages(true)[6], 11);
  const Verdict dict = verify_pdf(as_bytes(make_pdf(fonts)), as_bytes(make_pdf(one_font)), context);
  EXPECT_FALSE(dict.ok);
  EXPECT_NE(dict.problem.find("two objects became one"), std::string::npos) << dict.problem;
}

std::string big_endian_16(const std::vector<unsigned>& samples) {
  std::string s;
  for (unsigned v : samples) s += char(v >> 8), s += char(v);
  return s;
}

TEST(PdfStructure, FlateImagesGetPngPredictorsWithTheSameSamples) {
  // 8-bit RGB without a predictor, and 16-bit gray with the TIFF predictor.
  const int w = 96, h = 64;
  std::vector<unsigned> gray, tiff;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      // Rows alike, neighbours in a row not: the TIFF predictor does badly, PNG's Up well.
      const unsigned ux = unsigned(x), uy = unsigned(y);  // wraps, by design
      gray.push_back((ux * ux * ux * 7919u + uy * ((ux * 13u) % 7u + 1u)) & 0xffffu);
      tiff.push_back((gray.back() - (x ? gray[gray.size() - 2] : 0)) & 0xffff);
    }
  auto objects = two_pages(false);
  objects[4] = image_object(gradient_rgb(w, h), w, h);
  objects[8] = stream_object(
      "/Type /XObject /Subtype /Image /Width 96 /Height 64 /ColorSpace /DeviceGray "
      "/BitsPerComponent 16 /Filter /FlateDecode /DecodeParms << /Predictor 2 /Colors 1 "
      "/BitsPerComponent 16 /Columns 96 >>",
      testing::zlib_fast(big_endian_16(tiff)));
  const auto input = as_bytes(make_pdf(objects));
  const Outcome o = optimize(input, Policy{});
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_NE(o.detail.find("2 flate images with PNG predictors"), std::string::npos) << o.detail;
  auto in = open(input), out = open(o.bytes);
  auto pin = pages_of(*in), pout = pages_of(*out);
  for (int page = 0; page < 2; ++page) {
    SCOPED_TRACE(page);
    QPDFObjectHandle before = xobject(pin[page], "/Im0"), after = xobject(pout[page], "/Im0");
    EXPECT_EQ(after.getDict().getKey("/DecodeParms").getKey("/Predictor").getIntValue(), 15);
    EXPECT_EQ(decoded(before), decoded(after));
    EXPECT_LT(after.getRawStreamData()->getSize(), before.getRawStreamData()->getSize());
  }
  EXPECT_EQ(decoded(xobject(pout[1], "/Im0")), big_endian_16(gray));
  EXPECT_FALSE(optimize(o.bytes, Policy{}).replaced());

  // One changed sample in a predicted image is caught by the verifier.
  testing::PdfTestContext context;
  EXPECT_TRUE(verify_pdf(input, o.bytes, context).ok);
  auto changed = objects;
  changed[4] = image_object(gradient_rgb(w, h).replace(500, 1, "\x01"), w, h);
  const Verdict v = verify_pdf(as_bytes(make_pdf(changed)), o.bytes, context);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.problem.find("other samples"), std::string::npos) << v.problem;
}

TEST(PdfStructure, UnfilteredImagesAreDeflatedWithPngPredictors) {
  const int w = 96, h = 64;
  auto objects = two_pages(false);
  objects[4] = stream_object(
      "/Type /XObject /Subtype /Image /Width 96 /Height 64 /ColorSpace /DeviceRGB "
      "/BitsPerComponent 8",
      gradient_rgb(w, h));
  const auto input = as_bytes(make_pdf(objects));
  const Outcome o = optimize(input, Policy{});
  ASSERT_TRUE(o.replaced()) << o.message;
  auto in = open(input), out = open(o.bytes);
  QPDFObjectHandle before = xobject(pages_of(*in)[0], "/Im0"),
                   after = xobject(pages_of(*out)[0], "/Im0");
  EXPECT_TRUE(after.getDict().getKey("/Filter").isNameAndEquals("/FlateDecode"));
  EXPECT_EQ(after.getDict().getKey("/DecodeParms").getKey("/Predictor").getIntValue(), 15);
  EXPECT_EQ(decoded(after), gradient_rgb(w, h));
  EXPECT_EQ(decoded(before), decoded(after));
  EXPECT_FALSE(optimize(o.bytes, Policy{}).replaced());
}

// A Flate image's samples are the PDF optimiser's own to decode (no item goes to the engine):
// the caller's gate is told of them, and of the candidates beside them, before they are made and
// again before the verifier decodes input and output side by side.
TEST(PdfStructure, DecodedImagesAreToldToTheMemoryGate) {
  const int w = 640, h = 480;
  const uint64_t samples = uint64_t(w) * h * 3;
  auto objects = two_pages(false);
  objects[4] = image_object(gradient_rgb(w, h), w, h);
  const auto input = as_bytes(make_pdf(objects));
  testing::RecordingGate gate;
  const Outcome o = optimize(input, Policy{}, gate);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_NE(o.detail.find("flate images with PNG predictors"), std::string::npos) << o.detail;
  // Optimising: the samples, the PNG filters' rows and their filtered copy, and the candidates;
  // verifying: the input's and the output's samples and qpdf's buffer.
  EXPECT_EQ(gate.holds_of(4 * samples), 1u);
  EXPECT_EQ(gate.holds_of(3 * samples), 1u);
  EXPECT_EQ(gate.largest_hold, 4 * samples);
  EXPECT_EQ(gate.held, 0u);
}

// A gate that notes, at each hold, how much of the heap was in use: memory asked for before it
// is allocated finds the heap without it.
class HeapNotingGate final : public MemoryGate {
 public:
  uint64_t admit(std::span<const uint8_t> item, const Policy&) override { return item.size(); }
  uint64_t admit_bytes(uint64_t bytes) override {
    const struct mallinfo2 heap = mallinfo2();
    holds.push_back({bytes, heap.uordblks + heap.hblkhd});  // large blocks are mapped apart
    return bytes;
  }
  void release(uint64_t) noexcept override {}
  std::vector<std::pair<uint64_t, size_t>> holds;  // bytes held, heap in use then
};

// A few kilobytes of Flate may decode to gigabytes: such a stream is counted first and its
// memory held before it is allocated, once (a 3 MB stream of zeros took 6.4 GB, the growing
// buffer's copies included, before anything was told to the memory budget).
TEST(PdfStructure, AStreamThatDecodesLargeIsHeldBeforeItIsAllocated) {
  constexpr size_t kDecoded = 48 << 20;
  auto objects = two_pages(false);
  objects[3] =
      stream_object("/Filter /FlateDecode", testing::zlib_fast(std::string(kDecoded, ' ')));
  const auto input = as_bytes(make_pdf(objects));
  ASSERT_LT(input.size(), kDecoded / 100);
  HeapNotingGate gate;
  const Outcome o = optimize(input, Policy{}, gate);
  ASSERT_TRUE(o.replaced()) << o.message;
  const auto first = std::find_if(gate.holds.begin(), gate.holds.end(),
                                  [](const auto& h) { return h.first >= kDecoded; });
  ASSERT_NE(first, gate.holds.end());
  EXPECT_EQ(first->first, kDecoded);
  EXPECT_LT(first->second, kDecoded);  // the decoded bytes were not yet on the heap
}

// Arrays nested as deep as qpdf reads them (500) are compared, not refused as a failed
// verification that asks for a report.
TEST(PdfStructure, ObjectsNestedAsDeepAsQpdfReadsAreVerified) {
  auto objects = two_pages(false);
  const std::string deep = std::string(490, '[') + "1" + std::string(490, ']');
  objects[0] = "<< /Type /Catalog /Pages 2 0 R /Extra " + deep + " >>";
  const Outcome o = optimize(as_bytes(make_pdf(objects)), Policy{});
  EXPECT_TRUE(o.replaced()) << reason_name(o.reason) << ": " << o.message;
  // Identical streams to merge beside it: the merge walked only 256 deep and called the file
  // corrupt.
  auto same = two_pages(true);
  same[0] = objects[0];
  const Outcome merged = optimize(as_bytes(make_pdf(same)), Policy{});
  EXPECT_NE(merged.reason, Reason::kCorrupt) << merged.message;
  EXPECT_TRUE(merged.replaced()) << reason_name(merged.reason) << ": " << merged.message;
}

// A file whose header says 1.4 but which holds object streams (readers take them): written
// without them, its version kept, rather than raised by qpdf and refused as a failed
// verification; with --pdf-version raise the object streams stay and the version says 1.5.
TEST(PdfStructure, ObjectStreamsUnderAnOldHeaderAreWrittenOutUnlessRaised) {
  std::vector<uint8_t> input =
      qpdf_write(as_bytes(make_pdf(two_pages(false))), false, qpdf_o_generate);
  const std::string header = "%PDF-1.5";
  ASSERT_TRUE(std::equal(header.begin(), header.end(), input.begin()));
  input[7] = '4';
  ASSERT_GT(open(input)->getAllObjects().size(), 0u);
  const Outcome kept = optimize(input, Policy{});
  EXPECT_NE(kept.reason, Reason::kVerifyFailed) << kept.message;
  if (kept.replaced()) {
    EXPECT_EQ(open(kept.bytes)->getPDFVersion(), "1.4");
    EXPECT_EQ(testing::as_string(kept.bytes).find("/ObjStm"), std::string::npos);
  }
  Policy raise;
  raise.pdf_version = PdfVersionPolicy::kRaise;
  const Outcome raised = optimize(input, raise);
  ASSERT_TRUE(raised.replaced()) << raised.message;
  EXPECT_EQ(open(raised.bytes)->getPDFVersion(), "1.5");
}

// A linearised file's two xref sections are no update, also once bytes are appended (qpdf then
// stops calling it linearised); the word "startxref" in a content stream is no xref section.
// Neither file is refused as incrementally updated; a real update still is.
TEST(PdfStructure, OnlyXrefSectionsReadersStartFromCountAsUpdates) {
  const std::string tail = "appended by a scanner\n";
  std::vector<uint8_t> linearised =
      qpdf_write(as_bytes(make_pdf(two_pages(false), "1.6")), true, qpdf_o_generate);
  linearised.insert(linearised.end(), tail.begin(), tail.end());
  ASSERT_FALSE(open(linearised)->isLinearized());
  const Outcome o = optimize(linearised, Policy{});
  ASSERT_TRUE(o.replaced()) << reason_name(o.reason) << ": " << o.message;
  EXPECT_EQ(testing::as_string(o.bytes).substr(o.bytes.size() - tail.size()), tail);

  auto objects = two_pages(false);
  objects[3] = stream_object("", "BT /F1 12 Tf (startxref 12) Tj ET\n% startxref 40\n");
  const Outcome worded = optimize(as_bytes(make_pdf(objects)), Policy{});
  EXPECT_TRUE(worded.replaced()) << reason_name(worded.reason) << ": " << worded.message;

  const std::string updated = testing::append_update(
      make_pdf(two_pages(false)), 2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", 11);
  const Outcome refused = optimize(as_bytes(updated), Policy{});
  EXPECT_EQ(refused.reason, Reason::kUnsupportedVariant) << refused.message;
  EXPECT_NE(refused.message.find("incremental updates"), std::string::npos) << refused.message;
  // Readers never read the first revision's startxref: a stale one (here one byte off) is
  // harmless to them, and the trailer's /Prev still tells the update (it was merged, the first
  // revision lost).
  {
    std::string stale = updated;
    const size_t keyword = stale.find("startxref");
    ASSERT_NE(keyword, std::string::npos);
    const size_t digit = stale.find_first_of("0123456789", keyword) + 1;
    stale[digit] = stale[digit] == '9' ? '8' : char(stale[digit] + 1);
    const Outcome o = optimize(as_bytes(stale), Policy{});
    EXPECT_EQ(o.reason, Reason::kUnsupportedVariant) << o.message;
    EXPECT_NE(o.message.find("/Prev"), std::string::npos) << o.message;
  }
  // The word in a comment is no linearised file: the update is still one (it was merged, the
  // first revision lost). Only a first object that is a linearisation dictionary stating the
  // length of a revision counts.
  {
    const std::string base = make_pdf(two_pages(false), "1.5\n%/Linearized 1 (some tool's note)");
    const std::string update = testing::append_update(
        base, 2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", int(two_pages(false).size()) + 1);
    const Outcome o = optimize(as_bytes(update), Policy{});
    EXPECT_EQ(o.reason, Reason::kUnsupportedVariant) << o.message;
  }
  // The keyword right after a delimiter (">>startxref"), as compact writers put it, counts too.
  std::string compact = updated;
  for (size_t at = compact.find(">>\nstartxref"); at != std::string::npos;
       at = compact.find(">>\nstartxref", at))
    compact[at] = '\n', compact[at + 1] = compact[at + 2] = '>';  // every offset stays
  ASSERT_EQ(compact.find(">>\nstartxref"), std::string::npos);
  ASSERT_NE(compact.find("\n>>startxref"), std::string::npos);
  const Outcome also = optimize(as_bytes(compact), Policy{});
  EXPECT_EQ(also.reason, Reason::kUnsupportedVariant) << also.message;
}

// A comment after the header moves every object away from where the xref table says it is.
std::string with_shifted_offsets(const std::string& pdf) {
  std::string broken = pdf;
  broken.insert(broken.find('\n') + 1, "% 12 bytes\n");
  return broken;
}

TEST(PdfStructure, ReconstructedFilesAreWrittenOnlyWithRepair) {
  const auto input = as_bytes(with_shifted_offsets(make_pdf(two_pages(false))));
  const Outcome refused = optimize(input, Policy{});
  EXPECT_FALSE(refused.replaced());
  EXPECT_EQ(refused.reason, Reason::kCorrupt) << refused.message;
  EXPECT_NE(refused.message.find("--repair"), std::string::npos) << refused.message;

  Policy repair;
  repair.repair = true;
  const Outcome o = optimize(input, repair);
  ASSERT_TRUE(o.replaced()) << reason_name(o.reason) << ": " << o.message;
  EXPECT_NE(o.detail.find("structure repaired"), std::string::npos) << o.detail;
  EXPECT_FALSE(o.warnings.empty());
  auto out = open(o.bytes);
  out->getAllObjects();
  EXPECT_FALSE(out->anyWarnings());
  auto pages = pages_of(*out);
  ASSERT_EQ(pages.size(), 2u);
  const auto unbroken = as_bytes(make_pdf(two_pages(false)));  // qpdf reads it lazily
  auto original = open(unbroken);
  EXPECT_EQ(decoded(xobject(pages[1], "/Im0")), decoded(xobject(pages_of(*original)[1], "/Im0")));
  // The repaired output is a sound file: another run has nothing to repair or gain.
  EXPECT_FALSE(optimize(o.bytes, repair).replaced());
  EXPECT_FALSE(optimize(o.bytes, Policy{}).replaced());
}

}  // namespace
}  // namespace lighten
