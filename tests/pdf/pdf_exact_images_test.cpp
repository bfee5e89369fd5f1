// JPEG images of a PDF whose exact samples matter, or whose colours viewers read otherwise than
// the perceptual search would: optimised losslessly in every mode, their tables as they were;
// and images of files too old for progressive scans, which keep theirs.
#include <gtest/gtest.h>
#include <qpdf/QPDF.hh>
#include <qpdf/QPDFPageDocumentHelper.hh>

#include <string>
#include <vector>

#include "formats/jpeg/markers.h"
#include "lighten/lighten.h"
#include "pdf/pdf_maker.h"
#include "support/icc_profiles.h"
#include "support/jpeg_maker.h"

namespace lighten {
namespace {

using testing::as_bytes;
using testing::as_string;
using testing::make_pdf;
using testing::stream_object;

// The payload of every DQT segment of a JPEG, in order.
std::vector<std::vector<uint8_t>> quantisation_tables(const std::vector<uint8_t>& jpeg) {
  std::vector<std::vector<uint8_t>> tables;
  for (const jpeg::Segment& s : jpeg::parse_layout(jpeg).segments)
    if (s.marker == 0xDB) tables.emplace_back(s.payload.begin(), s.payload.end());
  return tables;
}

std::vector<uint8_t> raw(QPDFObjectHandle stream) {
  auto buffer = stream.getRawStreamData();
  return {buffer->getBuffer(), buffer->getBuffer() + buffer->getSize()};
}

// The first page's resources of `pdf`, read into `q`.
QPDFObjectHandle first_page_resources(QPDF& q, const std::vector<uint8_t>& pdf) {
  q.processMemoryFile("out", reinterpret_cast<const char*>(pdf.data()), pdf.size());
  return QPDFPageDocumentHelper(q).getAllPages()[0].getObjectHandle().getKey("/Resources");
}

// The resources of a form XObject or pattern stream.
QPDFObjectHandle resources_of(QPDFObjectHandle stream) {
  return stream.getDict().getKey("/Resources");
}

// A page drawing two 320x240 JPEG images (/Im0 object 4 with `im0_entries` added to its
// dictionary, /Im1 object 5 with `im1_entries`), `extra` objects numbered from 7 on, entries
// added to the page's resources, the catalog and the page, optimised in `high`: the two images as
// written, and Im0's /SMask when it has one.
struct Images {
  std::vector<uint8_t> im0, im1, im0_mask;
  std::vector<uint8_t> pdf;  // the whole output
};
Images after_high(const std::vector<uint8_t>& jpeg, const std::string& im0_entries,
                  const std::string& im1_entries, const std::vector<std::string>& extra = {},
                  const std::string& resources_extra = "", const std::string& catalog_extra = "",
                  const std::string& page_extra = "", const std::string& space = "/DeviceRGB") {
  const std::string image = "/Type /XObject /Subtype /Image /Width 320 /Height 240 /ColorSpace " +
                            space + " /BitsPerComponent 8 /Filter /DCTDecode";
  std::vector<std::string> objects = {
      "<< /Type /Catalog /Pages 2 0 R " + catalog_extra + " >>",
      "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
      "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 640 240] /Resources << /XObject << /Im0 4 0 "
      "R /Im1 5 0 R >> " +
          resources_extra + " >> /Contents 6 0 R " + page_extra + " >>",
      stream_object(image + im0_entries, as_string(jpeg)),
      stream_object(image + im1_entries, as_string(jpeg)),
      stream_object("", "q 320 0 0 240 0 0 cm /Im0 Do Q q 320 0 0 240 320 0 cm /Im1 Do Q"),
  };
  objects.insert(objects.end(), extra.begin(), extra.end());
  Policy p;
  p.mode = Mode::kHigh;
  const Outcome o = optimize(as_bytes(make_pdf(objects)), p);
  EXPECT_TRUE(o.replaced()) << o.message;
  if (!o.replaced()) return {};
  QPDF q;
  QPDFObjectHandle xobjects = first_page_resources(q, o.bytes).getKey("/XObject");
  Images out{raw(xobjects.getKey("/Im0")), raw(xobjects.getKey("/Im1")), {}, o.bytes};
  QPDFObjectHandle mask = xobjects.getKey("/Im0").getDict().getKey("/SMask");
  if (mask.isStream()) out.im0_mask = raw(mask);
  return out;
}

// A colour key (/Mask [ranges]) shows or hides each pixel by its exact values, and a soft mask's
// samples are opacity: requantised, pixels would cross the key's bounds or show through. Both
// keep their samples; the same photo without them is requantised.
TEST(PdfExactImages, ColourKeyedImagesAndMasksKeepTheirSamples) {
  const auto photo = testing::make_jpeg({.width = 320, .height = 240, .quality = 97});
  const auto mask =
      testing::make_jpeg({.width = 320, .height = 240, .components = 1, .quality = 97});
  const Images keyed = after_high(photo, " /Mask [240 255 240 255 240 255]", "");
  ASSERT_FALSE(keyed.im0.empty());
  EXPECT_EQ(quantisation_tables(keyed.im0), quantisation_tables(photo));
  EXPECT_NE(quantisation_tables(keyed.im1), quantisation_tables(photo));
  const Images masked =
      after_high(photo, " /SMask 7 0 R", "",
                 {stream_object("/Type /XObject /Subtype /Image /Width 320 /Height 240 /ColorSpace "
                                "/DeviceGray /BitsPerComponent 8 /Filter /DCTDecode",
                                as_string(mask))});
  ASSERT_FALSE(masked.im0_mask.empty());
  EXPECT_EQ(quantisation_tables(masked.im0_mask), quantisation_tables(mask));
  EXPECT_NE(quantisation_tables(masked.im0), quantisation_tables(photo));
}

// A dictionary whose /Width and /Height are not the JPEG frame's (320x240 over 640x480): viewers
// read the samples in the dictionary's rows, a picture the metric never sees. The samples stay;
// the same photo at its own size is requantised (above).
TEST(PdfExactImages, ImagesWhoseDictionarySaysAnotherSizeKeepTheirSamples) {
  const auto big = testing::make_jpeg({.width = 640, .height = 480, .quality = 97});
  const Images out = after_high(big, "", "");
  ASSERT_FALSE(out.im0.empty());
  EXPECT_EQ(quantisation_tables(out.im0), quantisation_tables(big));
  EXPECT_EQ(quantisation_tables(out.im1), quantisation_tables(big));
}

// A graphics state's luminosity soft mask draws its group, and the samples of every image drawn
// there become opacity: they keep their samples, however deep the group draws them (a nested
// form, a tiling pattern, a Type 3 glyph). Under /S /Alpha only their shapes count, and they are
// requantised as the same photo drawn on the page is.
TEST(PdfExactImages, ImagesALuminositySoftMaskDrawsKeepTheirSamples) {
  const auto photo = testing::make_jpeg({.width = 320, .height = 240, .quality = 97});
  auto shade = [](int quality) {
    return testing::make_jpeg({.width = 320, .height = 240, .components = 1, .quality = quality});
  };
  const std::string gray_image =
      "/Type /XObject /Subtype /Image /Width 320 /Height 240 /ColorSpace /DeviceGray "
      "/BitsPerComponent 8 /Filter /DCTDecode";
  for (const bool luminosity : {true, false}) {
    SCOPED_TRACE(luminosity ? "luminosity" : "alpha");
    const Images out = after_high(
        photo, "", "",
        {stream_object("/Type /XObject /Subtype /Form /BBox [0 0 640 240] /Group << /S "
                       "/Transparency /CS /DeviceGray >> /Resources << /XObject << /Fm0 8 0 R "
                       ">> /Pattern << /P0 10 0 R >> /Font << /T3 12 0 R >> >>",
                       "/Fm0 Do /Pattern cs /P0 scn 0 0 640 240 re f BT /T3 1 Tf (a) Tj ET"),
         stream_object("/Type /XObject /Subtype /Form /BBox [0 0 640 240] /Resources << "
                       "/XObject << /Shade 9 0 R >> >>",
                       "q 320 0 0 240 0 0 cm /Shade Do Q"),
         stream_object(gray_image, as_string(shade(97))),
         stream_object("/Type /Pattern /PatternType 1 /PaintType 1 /TilingType 1 /BBox [0 0 "
                       "320 240] /XStep 320 /YStep 240 /Resources << /XObject << /Tile 11 0 R "
                       ">> >>",
                       "q 320 0 0 240 0 0 cm /Tile Do Q"),
         stream_object(gray_image, as_string(shade(95))),
         "<< /Type /Font /Subtype /Type3 /FontBBox [0 0 320 240] /FontMatrix [1 0 0 1 0 0] "
         "/CharProcs << /a 13 0 R >> /Encoding << /Differences [97 /a] >> /FirstChar 97 "
         "/LastChar 97 /Widths [320] /Resources << /XObject << /Glyph 14 0 R >> >> >>",
         stream_object("", "320 0 0 0 320 240 d1 q 320 0 0 240 0 0 cm /Glyph Do Q"),
         stream_object(gray_image, as_string(shade(93)))},
        std::string("/ExtGState << /GS0 << /Type /ExtGState /SMask << /Type /Mask /S ") +
            (luminosity ? "/Luminosity" : "/Alpha") + " /G 7 0 R >> >> >>");
    ASSERT_FALSE(out.pdf.empty());
    QPDF q;
    QPDFObjectHandle group = resources_of(first_page_resources(q, out.pdf)
                                              .getKey("/ExtGState")
                                              .getKey("/GS0")
                                              .getKey("/SMask")
                                              .getKey("/G"));
    QPDFObjectHandle drawn[] = {
        resources_of(group.getKey("/XObject").getKey("/Fm0")).getKey("/XObject").getKey("/Shade"),
        resources_of(group.getKey("/Pattern").getKey("/P0")).getKey("/XObject").getKey("/Tile"),
        group.getKey("/Font")
            .getKey("/T3")
            .getKey("/Resources")
            .getKey("/XObject")
            .getKey("/Glyph")};
    const int qualities[] = {97, 95, 93};
    for (int k = 0; k < 3; ++k) {
      ASSERT_TRUE(drawn[k].isStream()) << k;
      EXPECT_EQ(quantisation_tables(raw(drawn[k])) == quantisation_tables(shade(qualities[k])),
                luminosity)
          << k;
    }
    EXPECT_NE(quantisation_tables(out.im0), quantisation_tables(photo));
  }
  // A group without /Resources of its own draws with the page's (where the mask is set), which
  // the walk does not follow: every image may be a mask, and all keep their samples.
  const Images inherited = after_high(
      photo, "", "",
      {stream_object("/Type /XObject /Subtype /Form /BBox [0 0 640 240] /Group << /S "
                     "/Transparency /CS /DeviceGray >>",
                     "q 320 0 0 240 0 0 cm /Im1 Do Q")},
      "/ExtGState << /GS0 << /Type /ExtGState /SMask << /Type /Mask /S /Luminosity /G 7 0 R >> "
      ">> >>");
  ASSERT_FALSE(inherited.pdf.empty());
  EXPECT_EQ(quantisation_tables(inherited.im1), quantisation_tables(photo));
}

// Three planes numbered 'R', 'G', 'B' with no JFIF or Adobe segment: libjpeg (and so the metric)
// reads them as RGB by the numbers alone, a viewer that follows /ColorTransform (1 unless the
// dictionary says 0) as YCbCr. Lossless, with or without the key; with the Adobe segment that
// says RGB, viewers and libjpeg agree and the image is requantised.
TEST(PdfExactImages, PlanesReadAsRgbByTheirNumbersAloneKeepTheirSamples) {
  const auto adobe_rgb = testing::make_jpeg(
      {.width = 320, .height = 240, .quality = 97, .smooth_chroma = true, .rgb_coded = true});
  const jpeg::Layout layout = jpeg::parse_layout(adobe_rgb);
  std::vector<uint8_t> numbered_rgb = adobe_rgb;
  for (const jpeg::Segment& s : layout.segments)
    if (s.marker == 0xEE)
      numbered_rgb.erase(numbered_rgb.begin() + long(s.offset),
                         numbered_rgb.begin() + long(s.end()));
  ASSERT_EQ(numbered_rgb.size(), adobe_rgb.size() - 16);
  const auto& ids = jpeg::parse_layout(numbered_rgb).frame.components;
  ASSERT_EQ(ids.size(), 3u);
  ASSERT_EQ(ids[0].id, 'R');
  const Images numbered = after_high(numbered_rgb, "", " /DecodeParms << /ColorTransform 1 >>");
  ASSERT_FALSE(numbered.im0.empty());
  EXPECT_EQ(quantisation_tables(numbered.im0), quantisation_tables(numbered_rgb));
  EXPECT_EQ(quantisation_tables(numbered.im1), quantisation_tables(numbered_rgb));
  const Images marked = after_high(adobe_rgb, "", "");
  ASSERT_FALSE(marked.im0.empty());
  EXPECT_NE(quantisation_tables(marked.im0), quantisation_tables(adobe_rgb));
}

// Where the document redefines DeviceRGB (a /DefaultRGB in the resources images are drawn
// with, or an output intent whose profile is not sRGB), viewers that follow it and viewers that
// do not show its DeviceRGB images differently: they keep their samples. An sRGB output intent
// changes nothing a viewer shows, and the images are requantised.
TEST(PdfExactImages, DeviceSpacesTheDocumentRedefinesKeepTheirSamples) {
  const auto photo = testing::make_jpeg({.width = 320, .height = 240, .quality = 97});
  auto profile_object = [](const std::vector<uint8_t>& icc) {
    return stream_object("/N 3", as_string(icc));
  };
  const std::string intent =
      "/OutputIntents [<< /Type /OutputIntent /S /GTS_PDFA1 /OutputConditionIdentifier (x) "
      "/DestOutputProfile 7 0 R >>]";
  const Images defaulted = after_high(photo, "", "", {profile_object(testing::adobe_rgb_profile())},
                                      "/ColorSpace << /DefaultRGB [/ICCBased 7 0 R] >>");
  ASSERT_FALSE(defaulted.im0.empty());
  EXPECT_EQ(quantisation_tables(defaulted.im0), quantisation_tables(photo));
  EXPECT_EQ(quantisation_tables(defaulted.im1), quantisation_tables(photo));
  // [/DeviceRGB], the one-element array form, is the same space (ISO 32000 8.6.3).
  const Images arrayed =
      after_high(photo, "", "", {profile_object(testing::adobe_rgb_profile())},
                 "/ColorSpace << /DefaultRGB [/ICCBased 7 0 R] >>", "", "", "[/DeviceRGB]");
  ASSERT_FALSE(arrayed.im0.empty());
  EXPECT_EQ(quantisation_tables(arrayed.im0), quantisation_tables(photo));
  const Images wide_intent =
      after_high(photo, "", "", {profile_object(testing::adobe_rgb_profile())}, "", intent);
  ASSERT_FALSE(wide_intent.im0.empty());
  EXPECT_EQ(quantisation_tables(wide_intent.im0), quantisation_tables(photo));
  const Images srgb_intent = after_high(
      photo, "", "", {profile_object(testing::saved_profile(cmsCreate_sRGBProfile()))}, "", intent);
  ASSERT_FALSE(srgb_intent.im0.empty());
  EXPECT_NE(quantisation_tables(srgb_intent.im0), quantisation_tables(photo));
  // PDF 2.0 lets a page carry output intents of its own.
  const Images page_intent =
      after_high(photo, "", "", {profile_object(testing::adobe_rgb_profile())}, "", "", intent);
  ASSERT_FALSE(page_intent.im0.empty());
  EXPECT_EQ(quantisation_tables(page_intent.im0), quantisation_tables(photo));
  // Profiles count by their bytes: nine copies of the sRGB profile are one, which changes
  // nothing (as after a run merges them); past eight distinct ones none is read, and every
  // device space counts as redefined.
  auto nine_intents = [&](bool distinct) {
    std::vector<std::string> profiles;
    std::string intents = "/OutputIntents [";
    for (int i = 0; i < 9; ++i) {
      cmsHPROFILE srgb = cmsCreate_sRGBProfile();
      cmsSetHeaderFlags(srgb, distinct ? cmsUInt32Number(i) : 0);  // flags no viewer reads
      profiles.push_back(profile_object(testing::saved_profile(srgb)));
      intents +=
          "<< /Type /OutputIntent /S /GTS_PDFX /OutputConditionIdentifier (x) "
          "/DestOutputProfile " +
          std::to_string(7 + i) + " 0 R >> ";
    }
    return after_high(photo, "", "", profiles, "", intents + "]");
  };
  const Images copies = nine_intents(false);
  ASSERT_FALSE(copies.im0.empty());
  EXPECT_NE(quantisation_tables(copies.im0), quantisation_tables(photo));
  const Images too_many = nine_intents(true);
  ASSERT_FALSE(too_many.im0.empty());
  EXPECT_EQ(quantisation_tables(too_many.im0), quantisation_tables(photo));
  // A /DefaultRGB in an object nothing refers to (which the output drops) decides nothing.
  const Images orphan =
      after_high(photo, "", "",
                 {"<< /ColorSpace << /DefaultRGB [/CalRGB << /WhitePoint [0.9505 1 1.089] >>] "
                  ">> >>"});
  ASSERT_FALSE(orphan.im0.empty());
  EXPECT_NE(quantisation_tables(orphan.im0), quantisation_tables(photo));
}

// Progressive DCT came with PDF 1.3: asked for progressive scans, an older file's JPEG images
// keep their baseline ones, a newer file's become progressive, and so do an older file's that
// --pdf-version raise writes as 1.5 (a second run then finds nothing to do).
TEST(PdfExactImages, ImagesOfFilesBeforePdf13KeepTheirScans) {
  const auto photo = testing::make_jpeg({.width = 320, .height = 240, .quality = 97});
  struct Case {
    std::string version;
    bool raise;
    uint8_t frame;
  };
  for (const Case& c :
       {Case{"1.2", false, 0xC0}, Case{"1.3", false, 0xC2}, Case{"1.2", true, 0xC2}}) {
    SCOPED_TRACE(c.version + (c.raise ? " raised" : ""));
    const std::vector<std::string> objects = {
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 320 240] /Resources << /XObject << /Im0 4 "
        "0 R >> >> /Contents 5 0 R >>",
        stream_object("/Type /XObject /Subtype /Image /Width 320 /Height 240 /ColorSpace "
                      "/DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode",
                      as_string(photo)),
        stream_object("", "q 320 0 0 240 0 0 cm /Im0 Do Q"),
    };
    Policy p;
    p.jpeg_scans = ScanMode::kProgressive;
    if (c.raise) p.pdf_version = PdfVersionPolicy::kRaise;
    const Outcome o = optimize(as_bytes(make_pdf(objects, c.version)), p);
    ASSERT_TRUE(o.replaced()) << o.message;
    QPDF q;
    q.processMemoryFile("out", reinterpret_cast<const char*>(o.bytes.data()), o.bytes.size());
    const std::vector<uint8_t> image = raw(QPDFPageDocumentHelper(q)
                                               .getAllPages()[0]
                                               .getObjectHandle()
                                               .getKey("/Resources")
                                               .getKey("/XObject")
                                               .getKey("/Im0"));
    EXPECT_EQ(jpeg::parse_layout(image).frame.marker, c.frame);
    const Outcome again = optimize(o.bytes, p);
    EXPECT_FALSE(again.replaced()) << again.detail;
  }
}

}  // namespace
}  // namespace lighten
