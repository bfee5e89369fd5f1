// PDFs through the public API: embedded JPEGs (in pages and form XObjects) are optimised like
// files on disk, Flate streams decode to the same bytes, structure follows the version and
// conformance, and signed, updated, encrypted or broken files are left alone with a reason.
#include <gtest/gtest.h>
#include <qpdf/QPDF.hh>
#include <qpdf/QPDFPageDocumentHelper.hh>
#include <qpdf/QPDFWriter.hh>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "formats/jpeg/coefficients.h"
#include "formats/jpeg/perceptual.h"
#include "formats/pdf/pdf_format.h"
#include "lighten/lighten.h"
#include "pdf/pdf_maker.h"
#include "quality/calibrated_space.h"
#include "quality/colour_profile.h"
#include "quality/floor_score.h"
#include "support/icc_profiles.h"
#include "support/jpeg_maker.h"

namespace lighten {
namespace {

using testing::as_bytes;
using testing::make_pdf;
using testing::stream_object;

std::string drawing_content() {
  std::string s = "BT /F1 12 Tf 20 20 Td (claim form) Tj ET\n";
  s += "q 320 0 0 240 0 0 cm /Im0 Do Q q 1 0 0 1 200 100 cm /Fm0 Do Q\n";
  for (int i = 0; i < 300; ++i)
    s += std::to_string(i % 97) + " " + std::to_string(i % 53) + " m " +
         std::to_string(i % 89 + 10) + " 120 l S\n";
  return s;
}

struct Sample {
  std::vector<uint8_t> rgb_jpeg = testing::make_jpeg({.width = 320, .height = 240, .quality = 95});
  std::vector<uint8_t> gray_jpeg =
      testing::make_jpeg({.width = 100, .height = 100, .components = 1, .quality = 95});

  // Page with a content stream, an image and a form XObject holding another image.
  std::vector<std::string> objects(const std::string& catalog_extra = "") const {
    return {
        "<< /Type /Catalog /Pages 2 0 R " + catalog_extra + " >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 320 240] /Resources << /XObject << /Im0 5 "
        "0 R /Fm0 6 0 R >> /Font << /F1 7 0 R >> >> /Contents 4 0 R >>",
        stream_object("/Filter /FlateDecode", testing::zlib_fast(drawing_content())),
        stream_object("/Type /XObject /Subtype /Image /Width 320 /Height 240 /ColorSpace "
                      "/DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode",
                      testing::as_string(rgb_jpeg)),
        stream_object("/Type /XObject /Subtype /Form /BBox [0 0 100 100] /Resources << /XObject "
                      "<< /Im1 8 0 R >> >>",
                      "q 100 0 0 100 0 0 cm /Im1 Do Q"),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        stream_object("/Type /XObject /Subtype /Image /Width 100 /Height 100 /ColorSpace "
                      "/DeviceGray /BitsPerComponent 8 /Decode [1 0] /Filter /DCTDecode",
                      testing::as_string(gray_jpeg)),
    };
  }
  std::string pdf(const std::string& version = "1.5") const { return make_pdf(objects(), version); }
};

std::unique_ptr<QPDF> open(const std::vector<uint8_t>& bytes, const char* password = "") {
  auto q = std::make_unique<QPDF>();
  q->processMemoryFile("test", reinterpret_cast<const char*>(bytes.data()), bytes.size(), password);
  return q;
}

// Decoded with `level`; qpdf_dl_none gives the encoded (raw) bytes.
std::vector<uint8_t> data_of(QPDFObjectHandle stream, qpdf_stream_decode_level_e level) {
  auto buffer = level == qpdf_dl_none ? stream.getRawStreamData() : stream.getStreamData(level);
  return {buffer->getBuffer(), buffer->getBuffer() + buffer->getSize()};
}

std::string text_of(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

std::vector<uint8_t> encrypt(const std::string& pdf, const char* user, const char* owner) {
  QPDF q;
  q.processMemoryFile("plain", pdf.data(), pdf.size());
  QPDFWriter w(q);
  w.setOutputMemory();
  w.setCompressStreams(false);
  w.setDecodeLevel(qpdf_dl_none);
  w.setR6EncryptionParameters(user, owner, true, true, true, true, true, true, qpdf_r3p_full, true);
  w.write();
  auto b = w.getBufferSharedPointer();
  return {b->getBuffer(), b->getBuffer() + b->getSize()};
}

// Every image keeps its dictionary and decodes to the same pixels; the content stream decodes
// to the same bytes.
void expect_same_content(const std::vector<uint8_t>& before, const std::vector<uint8_t>& after,
                         const char* password = "") {
  auto a = open(before, password), b = open(after, password);
  auto pa = QPDFPageDocumentHelper(*a).getAllPages(), pb = QPDFPageDocumentHelper(*b).getAllPages();
  ASSERT_EQ(pa.size(), pb.size());
  EXPECT_EQ(data_of(pa[0].getObjectHandle().getKey("/Contents"), qpdf_dl_generalized),
            data_of(pb[0].getObjectHandle().getKey("/Contents"), qpdf_dl_generalized));
  auto ia = pa[0].getImages(), ib = pb[0].getImages();
  ASSERT_EQ(ia.size(), ib.size());
  for (auto& [name, image] : ia) {
    SCOPED_TRACE(name);
    QPDFObjectHandle other = ib.at(name);
    for (const char* key : {"/Width", "/Height", "/ColorSpace", "/BitsPerComponent", "/Filter"})
      EXPECT_EQ(image.getDict().getKey(key).unparse(), other.getDict().getKey(key).unparse())
          << key;
    const auto x = data_of(image, qpdf_dl_none), y = data_of(other, qpdf_dl_none);
    EXPECT_EQ(testing::decode_jpeg_pixels(x), testing::decode_jpeg_pixels(y));
    EXPECT_FALSE(testing::decode_jpeg_pixels(y).empty());
  }
}

TEST(PdfFormat, ShrinksImagesInPagesAndFormsAndStreams) {
  const Sample s;
  const auto input = as_bytes(s.pdf());
  ASSERT_EQ(sniff(input), Kind::kPdf);
  const Outcome o = optimize(input, Policy{});
  ASSERT_TRUE(o.replaced()) << reason_name(o.reason) << ": " << o.message;
  EXPECT_LT(o.bytes.size(), input.size());
  EXPECT_TRUE(o.quality.pixels_identical);
  EXPECT_NE(o.detail.find("2 jpeg optimised"), std::string::npos) << o.detail;
  EXPECT_NE(o.detail.find("re-deflated"), std::string::npos) << o.detail;
  expect_same_content(input, o.bytes);
  // The form XObject's own image was found and optimised too.
  auto b = open(o.bytes);
  QPDFObjectHandle form = QPDFPageDocumentHelper(*b)
                              .getAllPages()[0]
                              .getObjectHandle()
                              .getKey("/Resources")
                              .getKey("/XObject")
                              .getKey("/Fm0");
  QPDFObjectHandle im1 = form.getDict().getKey("/Resources").getKey("/XObject").getKey("/Im1");
  EXPECT_LT(data_of(im1, qpdf_dl_none).size(), s.gray_jpeg.size());
  EXPECT_EQ(im1.getDict().getKey("/Decode").unparse(), "[ 1 0 ]");
  EXPECT_EQ(b->getPDFVersion(), "1.5");
  EXPECT_NE(text_of(o.bytes).find("/ObjStm"), std::string::npos);
}

// The luma sampling factor of a JPEG's first component (SOF byte 11 high nibble).
int luma_sampling(const std::vector<uint8_t>& jpeg) {
  for (size_t i = 2; i + 12 < jpeg.size(); ++i)
    if (jpeg[i] == 0xFF && (jpeg[i + 1] == 0xC0 || jpeg[i + 1] == 0xC1 || jpeg[i + 1] == 0xC2))
      return jpeg[i + 11] >> 4;
  return 0;
}

// The sample PDF with `photo` as both its images, each with `decode_parms` (may be empty)
// added to its DCT image dictionary, optimised in `high`: the two images' data as written.
// `extra` objects are numbered from 9 on.
std::pair<std::vector<uint8_t>, std::vector<uint8_t>> images_after_high(
    const std::vector<uint8_t>& photo, const std::string& im0_parms, const std::string& im1_parms,
    const std::string& colour_space = "/DeviceRGB", const std::vector<std::string>& extra = {}) {
  const std::string image = "/Type /XObject /Subtype /Image /Width 320 /Height 240 /ColorSpace " +
                            colour_space + " /BitsPerComponent 8 /Filter /DCTDecode";
  auto objects = Sample{}.objects();
  objects[4] = stream_object(image + im0_parms, testing::as_string(photo));
  objects[7] = stream_object(image + im1_parms, testing::as_string(photo));
  objects.insert(objects.end(), extra.begin(), extra.end());
  Policy p;
  p.mode = Mode::kHigh;
  const Outcome o = optimize(as_bytes(make_pdf(objects)), p);
  EXPECT_TRUE(o.replaced()) << o.message;
  if (!o.replaced()) return {};
  auto b = open(o.bytes);
  QPDFObjectHandle page = QPDFPageDocumentHelper(*b).getAllPages()[0].getObjectHandle();
  QPDFObjectHandle im0 = page.getKey("/Resources").getKey("/XObject").getKey("/Im0");
  QPDFObjectHandle im1 = page.getKey("/Resources")
                             .getKey("/XObject")
                             .getKey("/Fm0")
                             .getDict()
                             .getKey("/Resources")
                             .getKey("/XObject")
                             .getKey("/Im1");
  return {data_of(im0, qpdf_dl_none), data_of(im1, qpdf_dl_none)};
}

// A 4:4:4 photo may become 4:2:0 in a perceptual mode, but not one whose DecodeParms set
// /ColorTransform: its planes may not be what libjpeg decodes them as.
TEST(PdfFormat, ColorTransformImagesKeepTheirSampling) {
  const auto photo = testing::make_jpeg({.width = 320,
                                         .height = 240,
                                         .quality = 97,
                                         .h_samp = 1,
                                         .v_samp = 1,
                                         .smooth_chroma = true});
  const auto [im0, im1] = images_after_high(photo, " /DecodeParms << /ColorTransform 1 >>", "");
  EXPECT_EQ(luma_sampling(im0), 1);
  EXPECT_EQ(luma_sampling(im1), 2);
}

// The transform byte of a JPEG's Adobe segment (payload "Adobe", version, flags0, flags1,
// transform); -1 without one.
int adobe_transform(const std::vector<uint8_t>& jpeg) {
  const std::string adobe = "\xFF\xEE";
  const std::string text = testing::as_string(jpeg);
  const size_t at = text.find(adobe);
  if (at == std::string::npos || at + 4 + 12 > text.size() || text.compare(at + 4, 5, "Adobe"))
    return -1;
  return jpeg[at + 4 + 11];
}

// RGB planes that an Adobe segment marks (transform 0) may become YCbCr 4:2:0 as in a JPEG file
// when the dictionary sets no /ColorTransform: a viewer follows the segment, which then says 1.
// With /ColorTransform 0 the image is optimised losslessly, as any three-component one with a
// transform other than 1 (the segment should prevail, but viewers differ: caution).
TEST(PdfFormat, AdobeRgbImagesMayBecomeYCbCr420) {
  const auto photo = testing::make_jpeg(
      {.width = 320, .height = 240, .quality = 97, .smooth_chroma = true, .rgb_coded = true});
  ASSERT_EQ(adobe_transform(photo), 0);
  ASSERT_EQ(luma_sampling(photo), 1);
  const auto [im0, im1] = images_after_high(photo, "", " /DecodeParms << /ColorTransform 0 >>");
  ASSERT_FALSE(im0.empty());
  EXPECT_EQ(luma_sampling(im0), 2);
  EXPECT_EQ(adobe_transform(im0), 1);
  EXPECT_LT(im0.size(), photo.size());
  EXPECT_EQ(luma_sampling(im1), 1);
  EXPECT_EQ(adobe_transform(im1), 0);
}

// Every quantisation table segment (DQT) of a JPEG, in order.
std::vector<std::vector<uint8_t>> quantisation_tables(const std::vector<uint8_t>& jpeg) {
  std::vector<std::vector<uint8_t>> tables;
  for (size_t i = 2; i + 4 <= jpeg.size() && jpeg[i] == 0xFF;) {
    const size_t length = size_t(jpeg[i + 2]) << 8 | jpeg[i + 3];
    if (jpeg[i + 1] == 0xDA || i + 2 + length > jpeg.size()) break;
    if (jpeg[i + 1] == 0xDB)
      tables.emplace_back(jpeg.begin() + long(i), jpeg.begin() + long(i + 2 + length));
    i += 2 + length;
  }
  return tables;
}

// SSIMULACRA2 (floor score) of `out` against `in`, both read through `icc` (empty: without a
// profile), as a viewer shows an image of the PDF in that colour space.
double score_shown(const std::vector<uint8_t>& in, const std::vector<uint8_t>& out,
                   const std::vector<uint8_t>& icc, uint32_t components) {
  const std::optional<ProfileColour> colour = ProfileColour::from_icc(icc, components);
  const ProfileColour* c = colour ? &*colour : nullptr;
  const auto a = jpeg::to_metric_image(jpeg::decode_pixels(in), c);
  const auto b = jpeg::to_metric_image(jpeg::decode_pixels(out), c);
  if (!a || !b) return 0;
  return floor_score(*a, *b, {.reference_colour = c, .distorted_colour = c}).score;
}

// A viewer shows an image through its /ColorSpace, not through the JPEG's own ICC segments, and
// the search reads the samples so: through an /ICCBased profile, as sRGB in DeviceRGB or an sRGB
// profile (CMYK in DeviceCMYK rendered by rgb_from_cmyk), through the parameters of a /CalRGB
// space, whatever profile the JPEG carries. Each output meets the floor so read. A CMYK photo
// through a press profile scores far apart from its rendering without one, so the two spaces give
// it different outputs; so does a photo in a wide CalRGB space with gamma 1.8.
TEST(PdfFormat, ImagesAreScoredThroughTheirColourSpace) {
  const auto photo = testing::make_jpeg({.width = 320, .height = 240, .quality = 97});
  const auto cmyk =
      testing::make_jpeg({.width = 320, .height = 240, .components = 4, .quality = 97});
  const std::vector<uint8_t> prophoto = testing::prophoto_rgb_profile();
  const std::vector<uint8_t> srgb = testing::saved_profile(cmsCreate_sRGBProfile());
  const std::vector<uint8_t> press = testing::printed_cmyk_profile();
  const auto tagged = testing::with_icc_segment(photo, prophoto);
  const auto tagged_cmyk = testing::with_icc_segment(cmyk, press);
  const std::string icc_space = "[/ICCBased 9 0 R]", inverted = " /Decode [1 0 1 0 1 0 1 0]";
  // ProPhoto's primaries under D50, as XYZ columns.
  const std::string cal_space =
      "[/CalRGB << /WhitePoint [0.9642 1 0.8249] /Gamma [1.8 1.8 1.8] /Matrix [0.7977 0.2880 0 "
      "0.1352 0.7119 0 0.0313 0.0001 0.8249] >>]";
  const std::vector<uint8_t> cal = calibrated_profile(
      {.white_point = {0.9642, 1, 0.8249},
       .gamma = {1.8, 1.8, 1.8},
       .matrix = {0.7977, 0.2880, 0, 0.1352, 0.7119, 0, 0.0313, 0.0001, 0.8249}});
  ASSERT_FALSE(cal.empty());
  const auto colourful = testing::make_jpeg(
      {.width = 320, .height = 240, .quality = 97, .pixels = testing::colourful_pixels()});
  struct Case {
    const std::vector<uint8_t>& jpeg;
    std::string space;
    const std::vector<uint8_t>& shown_through;  // the /ICCBased profile; empty: a device space
  };
  const std::vector<uint8_t> none;
  std::vector<std::vector<uint8_t>> cmyk_outputs;
  std::vector<uint8_t> cal_output;
  for (const Case& c : {Case{photo, icc_space, prophoto}, Case{tagged, "/DeviceRGB", none},
                        Case{tagged, icc_space, srgb}, Case{tagged, icc_space, prophoto},
                        Case{cmyk, icc_space, press}, Case{tagged_cmyk, "/DeviceCMYK", none},
                        Case{colourful, cal_space, cal}}) {
    const uint32_t components = c.jpeg == cmyk || c.jpeg == tagged_cmyk ? 4 : 3;
    SCOPED_TRACE(c.space + " " + std::to_string(c.shown_through.size()) + " bytes" +
                 (c.jpeg == tagged || c.jpeg == tagged_cmyk ? ", the JPEG tagged" : ""));
    std::vector<std::string> extra;
    if (c.space == icc_space)
      extra.push_back(
          stream_object("/N " + std::to_string(components), testing::as_string(c.shown_through)));
    const auto [im0, im1] = images_after_high(c.jpeg, components == 4 ? inverted : "",
                                              components == 4 ? inverted : "", c.space, extra);
    ASSERT_FALSE(im0.empty());
    EXPECT_NE(quantisation_tables(im0), quantisation_tables(c.jpeg));
    EXPECT_GE(score_shown(c.jpeg, im0, c.shown_through, components), 80.0);
    if (components == 4) cmyk_outputs.push_back(im0);
    if (c.space == cal_space) cal_output = im0;
  }
  ASSERT_EQ(cmyk_outputs.size(), 2u);
  EXPECT_LT(score_shown(cmyk, cmyk_outputs[0], none, 4), 78.0);  // 77.4 rendered without it
  EXPECT_NE(quantisation_tables(cmyk_outputs[0]), quantisation_tables(cmyk_outputs[1]));
  // The CalRGB space reads as the ProPhoto profile of the same primaries reads, and wide enough
  // that the output made for its samples read as sRGB falls under the floor through it (80.04
  // as sRGB, 79.23 through the space; the output made for the space: 80.05, 20,468 bytes against
  // 18,977).
  ASSERT_FALSE(cal_output.empty());
  EXPECT_NEAR(score_shown(colourful, cal_output, cal, 3),
              score_shown(colourful, cal_output, prophoto, 3), 0.02);
  const auto [as_srgb, unused] = images_after_high(colourful, "", "");
  ASSERT_FALSE(as_srgb.empty());
  EXPECT_GE(score_shown(colourful, as_srgb, none, 3), 80.0);
  EXPECT_LT(score_shown(colourful, as_srgb, cal, 3), 80.0);
}

// A context that records the policy each embedded JPEG is verified under and accepts it.
class RecordingContext : public testing::PdfTestContext {
 public:
  using PdfTestContext::PdfTestContext;
  Verdict verify_embedded_under(ByteView, ByteView, const Policy& policy) override {
    policies.push_back(policy);
    return {true, "", {}};
  }
  std::vector<Policy> policies;
};

// The verifier holds each JPEG image to the policy it was optimised under: read through the
// image's colour space (an /ICCBased profile; empty for a device space), and lossless where the
// viewer shows other colours than the search scores (no inverting /Decode for CMYK).
TEST(PdfFormat, TheVerifierReadsEachJpegAsItWasOptimised) {
  const auto cmyk =
      testing::make_jpeg({.width = 320, .height = 240, .components = 4, .quality = 97});
  const auto coarser =
      testing::make_jpeg({.width = 320, .height = 240, .components = 4, .quality = 80});
  const std::vector<uint8_t> press = testing::printed_cmyk_profile();
  const std::string image =
      "/Type /XObject /Subtype /Image /Width 320 /Height 240 /BitsPerComponent 8 /Filter "
      "/DCTDecode /ColorSpace ";
  auto pdf_of = [&](const std::vector<uint8_t>& jpeg) {
    auto objects = Sample{}.objects();
    objects[4] = stream_object(image + "[/ICCBased 9 0 R] /Decode [1 0 1 0 1 0 1 0]",
                               testing::as_string(jpeg));
    objects[7] = stream_object(image + "/DeviceCMYK", testing::as_string(jpeg));
    objects.push_back(stream_object("/N 4", testing::as_string(press)));
    return as_bytes(make_pdf(objects));
  };
  Policy high;
  high.mode = Mode::kHigh;
  RecordingContext context(high);
  EXPECT_TRUE(verify_pdf(pdf_of(cmyk), pdf_of(coarser), context).ok);
  ASSERT_EQ(context.policies.size(), 2u);
  const Policy& shown = context.policies[0];
  ASSERT_TRUE(shown.jpeg_shown_through);
  EXPECT_EQ(*shown.jpeg_shown_through, press);
  EXPECT_EQ(shown.mode, Mode::kHigh);
  const Policy& uninverted = context.policies[1];
  ASSERT_TRUE(uninverted.jpeg_shown_through);
  EXPECT_TRUE(uninverted.jpeg_shown_through->empty());
  EXPECT_EQ(uninverted.mode, Mode::kLossless);
}

// An image's ICC profile is read within a bound, in the optimiser and in the verifier: two Flate
// filters in a row turn a few hundred bytes into 64 MB (into gigabytes, with a third).
TEST(PdfFormat, AnIccProfileThatDecodesPastItsBoundRefusesTheFile) {
  const std::string inner = testing::zlib_fast(std::string(64 << 20, '\0'));
  const std::string bomb = testing::zlib_fast(inner);
  ASSERT_LT(bomb.size(), 2000u);
  auto pdf_of = [&](const std::vector<uint8_t>& jpeg) {
    auto objects = Sample{}.objects();
    objects[4] = stream_object(
        "/Type /XObject /Subtype /Image /Width 320 /Height 240 /ColorSpace [/ICCBased 9 0 R] "
        "/BitsPerComponent 8 /Filter /DCTDecode",
        testing::as_string(jpeg));
    objects.push_back(stream_object("/N 3 /Filter [/FlateDecode /FlateDecode]", bomb));
    return as_bytes(make_pdf(objects));
  };
  const auto pdf = pdf_of(Sample{}.rgb_jpeg);
  Policy high;
  high.mode = Mode::kHigh;
  const Outcome o = optimize(pdf, high);
  EXPECT_EQ(o.reason, Reason::kLimitExceeded) << reason_name(o.reason) << ": " << o.message;
  EXPECT_NE(o.message.find("ICC profile"), std::string::npos) << o.message;
  RecordingContext context(high);
  const auto coarser = testing::make_jpeg({.width = 320, .height = 240, .quality = 80});
  EXPECT_THROW(verify_pdf(pdf, pdf_of(coarser), context), FormatError);
  EXPECT_TRUE(context.policies.empty());
}

// /ColorTransform 0 makes a viewer show a YCbCr-coded photo's planes as RGB: colours the
// perceptual search never scores, with two planes its tables would treat as chroma. Such an
// image is optimised losslessly (same tables), while /ColorTransform 1, the transform the search
// scores in, is requantised as usual.
TEST(PdfFormat, ImagesShownWithoutTheYCbCrTransformAreOnlyOptimisedLosslessly) {
  const auto photo = testing::make_jpeg({.width = 320, .height = 240, .quality = 97});
  ASSERT_FALSE(quantisation_tables(photo).empty());
  const auto [im0, im1] = images_after_high(photo, " /DecodeParms << /ColorTransform 0 >>",
                                            " /DecodeParms << /ColorTransform 1 >>");
  ASSERT_FALSE(im0.empty());
  EXPECT_EQ(quantisation_tables(im0), quantisation_tables(photo));
  EXPECT_NE(quantisation_tables(im1), quantisation_tables(photo));
}

// A CMYK photo is requantised when the viewer shows it as the search scores it: inks whose
// samples hold 255 - ink, as the /Decode array [1 0 1 0 1 0 1 0] says in a PDF. Without that
// array, with a /ColorTransform (YCCK or CMYK, the viewer decides) or in a DeviceN space it
// stays lossless.
TEST(PdfFormat, CmykImagesAreRequantisedOnlyWhenShownAsScored) {
  const auto photo =
      testing::make_jpeg({.width = 320, .height = 240, .components = 4, .quality = 97});
  ASSERT_FALSE(quantisation_tables(photo).empty());
  const std::string inverted = " /Decode [1 0 1 0 1 0 1 0]";
  const auto [im0, im1] = images_after_high(photo, inverted, "", "/DeviceCMYK");
  ASSERT_FALSE(im0.empty());
  EXPECT_NE(quantisation_tables(im0), quantisation_tables(photo));
  EXPECT_LT(im0.size(), photo.size());
  EXPECT_EQ(quantisation_tables(im1), quantisation_tables(photo));
  const auto [im2, im3] = images_after_high(
      photo, inverted + " /DecodeParms << /ColorTransform 0 >>", inverted,
      "[/DeviceN [/C /M /Y /K] /DeviceCMYK << /FunctionType 2 /Domain [0 1] /N 1 >>]");
  ASSERT_FALSE(im2.empty());
  EXPECT_EQ(quantisation_tables(im2), quantisation_tables(photo));
  EXPECT_EQ(quantisation_tables(im3), quantisation_tables(photo));
}

// Three planes are requantised only where a viewer shows them as the metric scores them, as
// sRGB: in DeviceRGB or CalRGB with no /Decode but the identity. In Lab, inverted by /Decode or
// in a CalRGB space that makes no profile, they stay lossless (same sampling, same tables).
TEST(PdfFormat, ThreePlanesAreRequantisedOnlyWhenShownAsRgb) {
  const auto photo =
      testing::make_jpeg({.width = 320, .height = 240, .quality = 97, .h_samp = 1, .v_samp = 1});
  const auto [lab, inverted] =
      images_after_high(photo, "", " /Decode [1 0 1 0 1 0]",
                        "[/Lab << /WhitePoint [0.9505 1 1.089] /Range [-100 100 -100 100] >>]");
  ASSERT_FALSE(lab.empty());
  EXPECT_EQ(quantisation_tables(lab), quantisation_tables(photo));
  EXPECT_EQ(luma_sampling(lab), 1);
  EXPECT_EQ(quantisation_tables(inverted), quantisation_tables(photo));
  const auto [calibrated, identity] = images_after_high(
      photo, "", " /Decode [0 1 0 1 0 1]", "[/CalRGB << /WhitePoint [0.9505 1 1.089] >>]");
  ASSERT_FALSE(calibrated.empty());
  EXPECT_NE(quantisation_tables(calibrated), quantisation_tables(photo));
  EXPECT_NE(quantisation_tables(identity), quantisation_tables(photo));
  // A calibrated space that makes no profile: what a viewer shows is not known. A gamma a
  // profile would store as 0 (every sample white to the metric, so that any level would pass),
  // and a calibrated space without its dictionary.
  const auto [tiny_gamma, tiny_gamma_too] = images_after_high(
      photo, "", "", "[/CalRGB << /WhitePoint [0.9505 1 1.089] /Gamma [0.000001 1 1] >>]");
  ASSERT_FALSE(tiny_gamma.empty());
  EXPECT_EQ(quantisation_tables(tiny_gamma), quantisation_tables(photo));
  const auto [bare, bare_too] = images_after_high(photo, "", "", "[/CalRGB]");
  ASSERT_FALSE(bare.empty());
  EXPECT_EQ(quantisation_tables(bare), quantisation_tables(photo));
}

TEST(PdfFormat, SecondRunFindsNothing) {
  const Outcome first = optimize(as_bytes(Sample{}.pdf()), Policy{});
  ASSERT_TRUE(first.replaced());
  const Outcome second = optimize(first.bytes, Policy{});
  EXPECT_FALSE(second.replaced()) << second.detail;
}

// The Flate filter came with PDF 1.2: an older file's unfiltered streams stay unfiltered (its
// readers may not inflate), a 1.2 file's are compressed.
TEST(PdfFormat, FilesBeforePdf12GetNoFlateStreams) {
  for (const std::string version : {"1.1", "1.2"}) {
    SCOPED_TRACE(version);
    std::vector<std::string> objects = Sample{}.objects();
    std::string content;
    for (int i = 0; i < 200; ++i) content += drawing_content();
    objects[3] = stream_object("", content);
    const Outcome o = optimize(as_bytes(make_pdf(objects, version)), Policy{});
    const bool flate = o.replaced() && text_of(o.bytes).find("/FlateDecode") != std::string::npos;
    EXPECT_EQ(flate, version == "1.2") << o.message << o.detail;
  }
}

// Bytes another tool appended after %%EOF stay after the output's, %%EOF lines of their own
// included; a blank tail does not.
TEST(PdfFormat, DataAfterTheEndStaysAfterTheEnd) {
  const std::string appended = "%appended by a scanner\nPK\x03\x04 not part of the PDF\n";
  for (const std::string& tail : std::vector<std::string>{
           appended, "RECORD-1 %%EOF\nRECORD-2", "a blob that ends as a PDF does\n%%EOF\n"}) {
    SCOPED_TRACE(tail);
    const auto input = as_bytes(Sample{}.pdf() + tail);
    const Outcome o = optimize(input, Policy{});
    ASSERT_TRUE(o.replaced()) << o.message;
    const std::string out = text_of(o.bytes);
    ASSERT_GE(out.size(), tail.size());
    EXPECT_EQ(out.substr(out.size() - tail.size()), tail);
    EXPECT_NE(o.detail.find(std::to_string(tail.size()) + " bytes after %%EOF kept"),
              std::string::npos)
        << o.detail;
    expect_same_content(input, o.bytes);
    EXPECT_FALSE(optimize(o.bytes, Policy{}).replaced());
  }
  const auto input = as_bytes(Sample{}.pdf() + appended);

  // Without a %%EOF the file ends at its startxref's offset: what follows is appended data too.
  std::string unended = Sample{}.pdf();
  ASSERT_EQ(unended.substr(unended.size() - 6), "%%EOF\n");
  unended.resize(unended.size() - 6);
  const std::string signature = "APPENDED-SIGNATURE-BLOCK 0123456789";
  const Outcome kept_tail = optimize(as_bytes(unended + signature), Policy{});
  ASSERT_TRUE(kept_tail.replaced()) << kept_tail.message;
  EXPECT_EQ(text_of(kept_tail.bytes).substr(kept_tail.bytes.size() - signature.size()), signature);

  const Outcome blank = optimize(as_bytes(Sample{}.pdf() + "\r\n\n  \n"), Policy{});
  ASSERT_TRUE(blank.replaced()) << blank.message;
  EXPECT_EQ(blank.detail.find("after %%EOF"), std::string::npos) << blank.detail;

  // The verifier holds the output to the input's tail.
  testing::PdfTestContext context;
  EXPECT_TRUE(verify_pdf(input, input, context).ok);
  const Verdict cut = verify_pdf(input, as_bytes(Sample{}.pdf()), context);
  EXPECT_FALSE(cut.ok);
  EXPECT_EQ(cut.problem, "the data after %%EOF changed");
}

// qpdf reads past bytes before the header, and its output would not carry them.
TEST(PdfFormat, BytesBeforeTheHeaderLeaveTheFileAlone) {
  const Outcome o =
      optimize(as_bytes("Content-Type: application/pdf\r\n\r\n" + Sample{}.pdf()), Policy{});
  EXPECT_EQ(o.reason, Reason::kUnsupportedVariant) << reason_name(o.reason) << ": " << o.message;
  EXPECT_NE(o.message.find("33 bytes come before the %PDF header"), std::string::npos) << o.message;
  // Whitespace or a byte-order mark alone is no data: let go, the file optimised.
  for (const std::string& blank : {std::string("\n"), std::string("\xEF\xBB\xBF\r\n")}) {
    const Outcome b = optimize(as_bytes(blank + Sample{}.pdf()), Policy{});
    ASSERT_TRUE(b.replaced()) << b.message;
    EXPECT_EQ(text_of(b.bytes).rfind("%PDF-", 0), 0u);
  }
}

TEST(PdfFormat, NoObjectStreamsBelowPdf15) {
  const auto input = as_bytes(Sample{}.pdf("1.4"));
  const Outcome o = optimize(input, Policy{});
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(open(o.bytes)->getPDFVersion(), "1.4");
  EXPECT_EQ(text_of(o.bytes).find("/ObjStm"), std::string::npos);
  expect_same_content(input, o.bytes);
}

TEST(PdfFormat, PdfA1KeepsMetadataAndGetsNoObjectStreams) {
  const Sample s;
  const std::string xmp =
      "<?xpacket begin=\"\"?><x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF><rdf:Description "
      "xmlns:pdfaid=\"http://www.aiim.org/pdfa/ns/id/\" pdfaid:part=\"1\" "
      "pdfaid:conformance=\"B\"/></rdf:RDF></x:xmpmeta><?xpacket end=\"w\"?>" +
      std::string(200, ' ');
  auto objects = s.objects("/Metadata 9 0 R");
  objects.push_back(stream_object("/Type /Metadata /Subtype /XML", xmp));
  const auto input = as_bytes(make_pdf(objects, "1.5"));
  const Outcome o = optimize(input, Policy{});
  ASSERT_TRUE(o.replaced()) << o.message;
  const std::string out = text_of(o.bytes);
  EXPECT_EQ(out.find("/ObjStm"), std::string::npos);
  EXPECT_EQ(out.find("/XRef"), std::string::npos);
  EXPECT_NE(out.find(xmp), std::string::npos) << "the XMP packet must stay byte-identical";
  FileInfo info = describe(input);
  bool saw = false;
  for (auto& [k, v] : info.properties) saw = saw || (k == "PDF/A" && v == "1B");
  EXPECT_TRUE(saw);
}

// Outside PDF/A, the XMP stream goes through the optimiser like any stream (qpdf's writer then
// decides how to store it); its packet reads back unchanged.
TEST(PdfFormat, MetadataReadsBackUnchangedOutsidePdfA) {
  const Sample s;
  std::string xmp =
      "<?xpacket begin=\"\"?><x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF><rdf:Description "
      "xmlns:dc=\"http://purl.org/dc/elements/1.1/\"/></rdf:RDF></x:xmpmeta>";
  xmp += std::string(2000, ' ') + "<?xpacket end=\"w\"?>";
  auto objects = s.objects("/Metadata 9 0 R");
  objects.push_back(stream_object("/Type /Metadata /Subtype /XML", xmp));
  const auto input = as_bytes(make_pdf(objects, "1.5"));
  const Outcome o = optimize(input, Policy{});
  ASSERT_TRUE(o.replaced()) << o.message;
  auto doc = open(o.bytes);
  auto metadata = doc->getRoot().getKey("/Metadata");
  ASSERT_TRUE(metadata.isStream());
  auto data = metadata.getStreamData(qpdf_dl_generalized);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(data->getBuffer()), data->getSize()), xmp);
  expect_same_content(input, o.bytes);
}

TEST(PdfFormat, SignedDocumentsAreLeftAlone) {
  auto objects = Sample{}.objects("/AcroForm << /Fields [9 0 R] /SigFlags 3 >>");
  objects.push_back("<< /FT /Sig /T (Signature1) /V 10 0 R >>");
  objects.push_back(
      "<< /Type /Sig /Filter /Adobe.PPKLite /ByteRange [0 100 200 300] "
      "/Contents <0011223344> >>");
  const Outcome o = optimize(as_bytes(make_pdf(objects)), Policy{});
  EXPECT_FALSE(o.replaced());
  EXPECT_EQ(o.reason, Reason::kSigned) << o.message;
  // The same field written directly into the form, under a parent field's /Kids.
  auto direct = Sample{}.objects(
      "/AcroForm << /Fields [<< /T (Parent) /Kids [<< /FT /Sig /T (Signature1) /V << /Type /Sig "
      "/Filter /Adobe.PPKLite /ByteRange [0 100 200 300] /Contents <0011223344> >> >>] >>] >>");
  const Outcome d = optimize(as_bytes(make_pdf(direct)), Policy{});
  EXPECT_EQ(d.reason, Reason::kSigned) << reason_name(d.reason) << ": " << d.message;
  // A signed widget written directly into the page's /Annots and missing from /Fields (the file
  // was rewritten, the signature broken).
  auto annotated = Sample{}.objects();
  annotated[2].insert(annotated[2].rfind(">>"),
                      "/Annots [<< /Type /Annot /Subtype /Widget /FT /Sig /Rect [0 0 0 0] /V << "
                      "/Type /Sig /ByteRange [0 100 200 300] /Contents <0011223344> >> >>] ");
  const Outcome a = optimize(as_bytes(make_pdf(annotated)), Policy{});
  EXPECT_EQ(a.reason, Reason::kSigned) << reason_name(a.reason) << ": " << a.message;
}

// Certificate security: qpdf has no key to open it with, and the file is encrypted, not damaged.
TEST(PdfFormat, CertificateEncryptedFilesAreEncrypted) {
  auto objects = Sample{}.objects();
  objects.push_back(
      "<< /Filter /Adobe.PubSec /SubFilter /adbe.pkcs7.s5 /V 4 /R 4 /Length 128 /Recipients "
      "[<3082>] /CF << /DefaultCryptFilter << /CFM /AESV2 /Recipients [<3082>] >> >> /StmF "
      "/DefaultCryptFilter /StrF /DefaultCryptFilter >>");
  const std::string trailer = "/Encrypt " + std::to_string(objects.size()) +
                              " 0 R /ID [<0123456789abcdef0123456789abcdef>"
                              "<0123456789abcdef0123456789abcdef>]";
  const Outcome o = optimize(as_bytes(make_pdf(objects, "1.6", trailer)), Policy{});
  EXPECT_EQ(o.reason, Reason::kEncrypted) << reason_name(o.reason) << ": " << o.message;
}

TEST(PdfFormat, IncrementalUpdatesAreLeftAlone) {
  const std::string pdf = testing::append_update(
      Sample{}.pdf(), 7, "<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>", 9);
  const Outcome o = optimize(as_bytes(pdf), Policy{});
  EXPECT_FALSE(o.replaced());
  EXPECT_EQ(o.reason, Reason::kUnsupportedVariant) << o.message;
  EXPECT_NE(o.message.find("incremental"), std::string::npos);
}

TEST(PdfFormat, UserPasswordFilesAreLeftAlone) {
  const Outcome o = optimize(encrypt(Sample{}.pdf(), "user", "owner"), Policy{});
  EXPECT_FALSE(o.replaced());
  EXPECT_EQ(o.reason, Reason::kEncrypted) << o.message;
}

TEST(PdfFormat, OwnerOnlyEncryptionIsKept) {
  const auto input = encrypt(Sample{}.pdf(), "", "owner");
  const Outcome o = optimize(input, Policy{});
  ASSERT_TRUE(o.replaced()) << reason_name(o.reason) << ": " << o.message;
  EXPECT_TRUE(open(o.bytes)->isEncrypted());
  int r_in = 0, p_in = 0, r_out = 0, p_out = 0;
  open(input)->isEncrypted(r_in, p_in);
  open(o.bytes)->isEncrypted(r_out, p_out);
  EXPECT_EQ(r_in, r_out);
  EXPECT_EQ(p_in, p_out);
  expect_same_content(input, o.bytes);
}

TEST(PdfFormat, DamagedFilesNeverCrashAndNeverYieldBadOutput) {
  const std::string pdf = Sample{}.pdf();
  std::vector<std::string> variants;
  for (size_t cut : {size_t(0), size_t(9), pdf.size() / 3, pdf.size() / 2, pdf.size() - 40})
    variants.push_back(pdf.substr(0, cut));
  uint32_t seed = 7;
  for (int i = 0; i < 40; ++i) {
    std::string v = pdf;
    for (int k = 0; k < 4; ++k) {
      seed = seed * 1103515245u + 12345u;
      v[(seed >> 8) % v.size()] = char(seed >> 24);
    }
    variants.push_back(v);
  }
  for (const std::string& v : variants) {
    const Outcome o = optimize(as_bytes(v), Policy{});
    if (o.replaced()) {
      EXPECT_NO_THROW(open(o.bytes)->getAllObjects());
    } else {
      EXPECT_FALSE(o.message.empty());
    }
    EXPECT_NO_THROW(describe(as_bytes(v)));
  }
  // Garbage after the header: corrupt, with a reason.
  const Outcome o =
      optimize(as_bytes("%PDF-1.4\n1 0 obj << /Type /Catalog >>\nendobj\n"), Policy{});
  EXPECT_EQ(o.reason, Reason::kCorrupt) << o.message;
}

TEST(PdfFormat, DescribeSaysWhatIsInside) {
  const FileInfo info = describe(as_bytes(Sample{}.pdf()));
  EXPECT_TRUE(info.supported);
  EXPECT_TRUE(info.problem.empty()) << info.problem;
  std::map<std::string, std::string> p(info.properties.begin(), info.properties.end());
  EXPECT_EQ(p["version"], "1.5");
  EXPECT_EQ(p["pages"], "1");
  EXPECT_EQ(p["images"], "2 DCTDecode");
  EXPECT_EQ(p["signed"], "no");
  EXPECT_EQ(p["encrypted"], "no");
}

TEST(PdfFormat, VerifierNoticesChangedContent) {
  const Sample s;
  auto objects = s.objects();
  const auto a = as_bytes(make_pdf(objects));
  objects[6] = "<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>";
  const auto b = as_bytes(make_pdf(objects));
  testing::PdfTestContext context;
  EXPECT_TRUE(verify_pdf(a, a, context).ok);
  const Verdict v = verify_pdf(a, b, context);
  EXPECT_FALSE(v.ok);
  EXPECT_FALSE(v.problem.empty());
  // A changed JPEG goes to the engine's verifier, which this context refuses.
  objects = s.objects();
  objects[4] = stream_object(
      "/Type /XObject /Subtype /Image /Width 320 /Height 240 /ColorSpace "
      "/DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode",
      testing::as_string(testing::make_jpeg({.width = 320, .height = 240})));
  EXPECT_FALSE(verify_pdf(a, as_bytes(make_pdf(objects)), context).ok);
  // A stream only an application's own trailer entry reaches is rewritten like any other, and
  // compared like any other.
  auto with_app_data = [&](const std::string& data) {
    const std::vector<std::string> o = {
        "<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] >>", stream_object("", data)};
    return as_bytes(make_pdf(o, "1.5", "/MyApp 4 0 R"));
  };
  const auto app = with_app_data(std::string(400, 'a'));
  const Outcome o = optimize(app, Policy{});
  ASSERT_TRUE(o.replaced()) << o.message;
  const Verdict same_app = verify_pdf(app, o.bytes, context);
  EXPECT_TRUE(same_app.ok) << same_app.problem;
  const Verdict changed = verify_pdf(app, with_app_data(std::string(400, 'b')), context);
  EXPECT_FALSE(changed.ok);
}

}  // namespace
}  // namespace lighten
