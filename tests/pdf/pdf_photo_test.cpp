// `compact` mode only: photographic Flate images become JPEGs within the floor; masks, images
// whose exact values matter and every other mode keep their samples exactly.
#include <gtest/gtest.h>
#include <qpdf/QPDF.hh>
#include <qpdf/QPDFPageDocumentHelper.hh>

#include <cmath>
#include <memory>
#include <string>

#include "formats/pdf/pdf_flate_jpeg.h"
#include "formats/pdf/pdf_format.h"
#include "formats/pdf/pdf_image_facts.h"
#include "lighten/lighten.h"
#include "pdf/pdf_maker.h"

namespace lighten {
namespace {

using testing::as_bytes;
using testing::make_pdf;
using testing::stream_object;

constexpr int kWidth = 256, kHeight = 192;

// Smooth shapes under sensor-like noise: what a scanned photograph holds.
std::string photo_samples() {
  std::string s;
  uint32_t seed = 1;
  for (int y = 0; y < kHeight; ++y)
    for (int x = 0; x < kWidth; ++x)
      for (int c = 0; c < 3; ++c) {
        seed = seed * 1103515245u + 12345u;
        const double v = 128 + 60 * std::sin(x / (9.0 + c)) + 50 * std::cos(y / (13.0 - c)) +
                         double(int(seed >> 27) - 16) * 0.6;
        s += char(std::lround(std::fmin(255, std::fmax(0, v))));
      }
  return s;
}

std::string gray_of(const std::string& rgb) {
  std::string g;
  for (size_t i = 0; i + 2 < rgb.size(); i += 3)
    g += char((uint8_t(rgb[i]) + uint8_t(rgb[i + 1]) + uint8_t(rgb[i + 2])) / 3);
  return g;
}

// A page showing /Im0 (RGB photo with a gray soft mask, object 6) and /Im1 (the same photo).
std::vector<std::string> photo_page(const std::string& im1_extra = "") {
  const std::string photo = testing::zlib_fast(photo_samples());
  const std::string size = " /Width " + std::to_string(kWidth) + " /Height " +
                           std::to_string(kHeight) + " /BitsPerComponent 8 /Filter /FlateDecode ";
  return {
      "<< /Type /Catalog /Pages 2 0 R >>",
      "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
      "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 512 200] /Resources << /XObject << /Im0 5 0 "
      "R /Im1 7 0 R >> >> /Contents 4 0 R >>",
      stream_object("", "q 256 0 0 192 0 0 cm /Im0 Do Q q 256 0 0 192 256 0 cm /Im1 Do Q"),
      stream_object("/Type /XObject /Subtype /Image /ColorSpace /DeviceRGB /SMask 6 0 R" + size,
                    photo),
      stream_object("/Type /XObject /Subtype /Image /ColorSpace /DeviceGray" + size,
                    testing::zlib_fast(gray_of(photo_samples()))),
      stream_object("/Type /XObject /Subtype /Image /ColorSpace /DeviceRGB /Interpolate true" +
                        size + im1_extra,
                    photo + " "),  // a byte apart: not merged with /Im0
  };
}

std::unique_ptr<QPDF> open(const std::vector<uint8_t>& bytes) {
  auto q = std::make_unique<QPDF>();
  q->processMemoryFile("test", reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return q;
}

QPDFObjectHandle image(QPDF& q, const char* name) {
  return QPDFPageDocumentHelper(q)
      .getAllPages()[0]
      .getObjectHandle()
      .getKey("/Resources")
      .getKey("/XObject")
      .getKey(name);
}

std::string filter_of(QPDFObjectHandle image) {
  return image.getDict().getKey("/Filter").unparse();
}

Policy compact() {
  Policy p;
  p.mode = Mode::kCompact;
  return p;
}

TEST(PdfPhoto, CompactModeTurnsPhotographsIntoJpegsWithinTheFloor) {
  const auto input = as_bytes(make_pdf(photo_page()));
  const Outcome o = optimize(input, compact());
  ASSERT_TRUE(o.replaced()) << reason_name(o.reason) << ": " << o.message;
  EXPECT_NE(o.detail.find("2 flate images as JPEG"), std::string::npos) << o.detail;
  EXPECT_FALSE(o.quality.pixels_identical);
  auto out = open(o.bytes);
  for (const char* name : {"/Im0", "/Im1"}) {
    SCOPED_TRACE(name);
    QPDFObjectHandle im = image(*out, name);
    EXPECT_EQ(filter_of(im), "/DCTDecode");
    EXPECT_EQ(im.getDict().getKey("/Width").getIntValue(), kWidth);
    EXPECT_EQ(im.getDict().getKey("/ColorSpace").unparse(), "/DeviceRGB");
    EXPECT_FALSE(im.getDict().hasKey("/DecodeParms"));
  }
  // The soft mask keeps its exact samples.
  QPDFObjectHandle mask = image(*out, "/Im0").getDict().getKey("/SMask");
  EXPECT_EQ(filter_of(mask), "/FlateDecode");
  auto samples = mask.getStreamData(qpdf_dl_generalized);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(samples->getBuffer()), samples->getSize()),
            gray_of(photo_samples()));
  // A second run does no further lossy work.
  const Outcome again = optimize(o.bytes, compact());
  if (again.replaced()) {
    EXPECT_TRUE(again.quality.pixels_identical);
  }
  EXPECT_EQ(again.detail.find("as JPEG"), std::string::npos) << again.detail;

  // The verifier takes the JPEGs only under the same policy.
  EXPECT_TRUE(verify_pdf(input, o.bytes, *std::make_unique<testing::PdfTestContext>(compact())).ok);
  Policy high;
  high.mode = Mode::kHigh;
  EXPECT_FALSE(verify_pdf(input, o.bytes, *std::make_unique<testing::PdfTestContext>(Policy{})).ok);
  EXPECT_FALSE(verify_pdf(input, o.bytes, *std::make_unique<testing::PdfTestContext>(high)).ok);
}

TEST(PdfPhoto, OtherModesAndExactImagesKeepTheirSamples) {
  Policy high;
  high.mode = Mode::kHigh;
  for (const Policy& policy : {Policy{}, high}) {
    const Outcome o = optimize(as_bytes(make_pdf(photo_page())), policy);
    ASSERT_TRUE(o.replaced()) << o.message;
    EXPECT_EQ(o.detail.find("as JPEG"), std::string::npos) << o.detail;
  }
  // Colour-key masking (/Mask) and /Decode depend on exact values.
  for (const char* extra : {"/Mask [0 10 0 10 0 10]", "/Decode [1 0 1 0 1 0]"}) {
    const Outcome o = optimize(as_bytes(make_pdf(photo_page(extra))), compact());
    ASSERT_TRUE(o.replaced()) << o.message;
    EXPECT_NE(o.detail.find("1 flate images as JPEG"), std::string::npos) << extra << o.detail;
    EXPECT_EQ(filter_of(image(*open(o.bytes), "/Im1")), "/FlateDecode") << extra;
  }
  // Nor where the document redefines DeviceRGB: viewers that follow /DefaultRGB show other
  // colours than the metric would score.
  std::vector<std::string> redefined = photo_page();
  redefined[2].replace(redefined[2].find(">> /Contents"), 0,
                       "/ColorSpace << /DefaultRGB [/CalRGB << /WhitePoint [0.9505 1 1.089] >>] "
                       ">> ");
  const Outcome defaulted = optimize(as_bytes(make_pdf(redefined)), compact());
  ASSERT_TRUE(defaulted.replaced()) << defaulted.message;
  EXPECT_EQ(defaulted.detail.find("as JPEG"), std::string::npos) << defaulted.detail;
  // Without the quality marker a re-run could not tell the JPEG is lighten's: no conversion.
  Policy unmarked = compact();
  unmarked.quality_marker = QualityMarker::kOmit;
  const Outcome o = optimize(as_bytes(make_pdf(photo_page())), unmarked);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(o.detail.find("as JPEG"), std::string::npos) << o.detail;
}

// Only images of at most 64 MP and the policy's pixel limit become JPEGs (the search holds about
// 7 bytes a pixel: a 12000x12000 page took 1.03 GB from a 978 kB file), and the search stops
// once the time budget is spent.
TEST(PdfPhoto, LargeImagesAndSpentBudgetsStayFlate) {
  Policy capped = compact();
  capped.limits.max_pixels = uint64_t(kWidth) * kHeight - 1;
  const Outcome o = optimize(as_bytes(make_pdf(photo_page())), capped);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(o.detail.find("as JPEG"), std::string::npos) << o.detail;
  std::vector<std::string> huge = photo_page();
  huge[6].replace(huge[6].find("/Width " + std::to_string(kWidth)),
                  7 + std::to_string(kWidth).size(), "/Width 9000");
  huge[6].replace(huge[6].find("/Height " + std::to_string(kHeight)),
                  8 + std::to_string(kHeight).size(), "/Height 8000");
  const std::vector<uint8_t> huge_pdf = as_bytes(make_pdf(huge)),
                             plain_pdf = as_bytes(make_pdf(photo_page()));  // QPDF reads them
  EXPECT_FALSE(pdf::may_become_jpeg(image(*open(huge_pdf), "/Im1"), compact(), pdf::ImageFacts{}));
  EXPECT_TRUE(pdf::may_become_jpeg(image(*open(plain_pdf), "/Im1"), compact(), pdf::ImageFacts{}));
  // The search itself stops once the budget is spent, not only the walk over the streams.
  auto q = open(plain_pdf);
  QPDFObjectHandle im1 = image(*q, "/Im1");
  const std::shared_ptr<Buffer> data = im1.getStreamData(qpdf_dl_generalized);
  const Bytes samples(data->getBuffer(), data->getBuffer() + data->getSize());
  EXPECT_TRUE(pdf::photo_as_jpeg(im1, samples, compact(), {}).has_value());
  int asked = 0;
  EXPECT_THROW(pdf::photo_as_jpeg(im1, samples, compact(), [&] { return ++asked > 1; }),
               FormatError);
  EXPECT_EQ(asked, 2);
}

}  // namespace
}  // namespace lighten
