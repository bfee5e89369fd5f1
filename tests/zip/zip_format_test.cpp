// ZIP documents through the public API: media inside are optimised like files on disk, every
// other part keeps its inflated bytes, order and mimetype stay, protected documents are left.
#include <gtest/gtest.h>
#include <unistd.h>
#include <filesystem>

#include "codecs/deflate.h"
#include "formats/zip/zip_archive.h"
#include "formats/zip/zip_format.h"
#include "lighten/lighten.h"
#include "lighten/report.h"
#include "support/corpus.h"
#include "support/direct_context.h"
#include "support/jpeg_maker.h"
#include "support/recording_gate.h"
#include "support/zip_maker.h"

namespace lighten {
namespace {

namespace fs = std::filesystem;
using testing::make_zip;
using testing::text_bytes;
using testing::ZipItem;

std::string xml_body(int repeat) {
  std::string s = "<?xml version=\"1.0\"?><w:document>";
  for (int i = 0; i < repeat; ++i)
    s += "<w:p><w:r><w:t>paragraph " + std::to_string(i % 37) + " of the claim</w:t></w:r></w:p>";
  return s + "</w:document>";
}

Bytes content_of(const ZipEntry& e) {
  return e.method == kZipMethodDeflate
             ? inflate_exact(e.data, e.uncompressed_size, DeflateWrapper::kRaw)
             : Bytes(e.data.begin(), e.data.end());
}

std::vector<ZipItem> docx_items(const std::vector<uint8_t>& jpeg) {
  return {{.name = "[Content_Types].xml", .content = text_bytes("<Types/>")},
          {.name = "word/document.xml", .content = text_bytes(xml_body(400))},
          {.name = "word/media/image1.jpeg", .content = jpeg},
          {.name = "docProps/core.xml", .content = text_bytes("<cp:coreProperties/>")}};
}

TEST(ZipFormat, DocxShrinksAndKeepsEveryPart) {
  const auto jpeg = testing::make_jpeg({.width = 320, .height = 240, .quality = 95});
  const auto docx = make_zip(docx_items(jpeg));
  ASSERT_EQ(sniff(docx), Kind::kDocx);
  const Outcome o = optimize(docx, Policy{});
  ASSERT_TRUE(o.replaced()) << reason_name(o.reason) << ": " << o.message;
  EXPECT_LT(o.bytes.size(), docx.size());
  EXPECT_TRUE(o.quality.pixels_identical);
  EXPECT_NE(o.detail.find("1 jpeg optimised"), std::string::npos) << o.detail;

  const ZipArchive before = read_zip(docx);
  const ZipArchive after = read_zip(o.bytes);
  ASSERT_EQ(before.entries.size(), after.entries.size());
  for (size_t i = 0; i < before.entries.size(); ++i) {
    EXPECT_EQ(before.entries[i].name, after.entries[i].name);
    EXPECT_EQ(before.entries[i].mod_time, after.entries[i].mod_time);
    const Bytes x = content_of(before.entries[i]), y = content_of(after.entries[i]);
    if (before.entries[i].name.ends_with(".jpeg")) {
      EXPECT_LT(y.size(), x.size());
      EXPECT_EQ(testing::decode_jpeg_pixels(y), testing::decode_jpeg_pixels(x));
    } else {
      EXPECT_EQ(x, y) << before.entries[i].name;
    }
  }
  // Idempotent: a second pass finds nothing worth writing.
  const Outcome again = optimize(o.bytes, Policy{});
  EXPECT_FALSE(again.replaced()) << again.detail;
}

// A deflated part inflates in the ZIP optimiser itself (an XML part is no item the engine
// takes): the caller's gate is told of the part and its deflated copy before it is inflated,
// when optimising and when verifying.
TEST(ZipFormat, InflatedPartsAreToldToTheMemoryGate) {
  const std::string body = xml_body(40000);
  auto items = docx_items(testing::make_jpeg({.width = 32, .height = 32, .quality = 95}));
  items[1].content = text_bytes(body);
  testing::RecordingGate gate;
  const Outcome o = optimize(make_zip(items), Policy{}, gate);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(gate.largest_hold, 2 * body.size());
  EXPECT_EQ(gate.holds_of(2 * body.size()), 2u);  // optimising, then verifying
  EXPECT_EQ(gate.held, 0u);
  // What the caller counted for the file already covers as much: only the rest is asked for.
  testing::RecordingGate counted;
  counted.allowance_bytes = body.size();
  EXPECT_TRUE(optimize(make_zip(items), Policy{}, counted).replaced());
  EXPECT_EQ(counted.largest_hold, body.size());
  EXPECT_EQ(counted.held, 0u);
  testing::RecordingGate covered;
  covered.allowance_bytes = 2 * body.size();
  EXPECT_TRUE(optimize(make_zip(items), Policy{}, covered).replaced());
  EXPECT_EQ(covered.largest_hold, 0u);

  // A stored part is copied out of the archive and deflated too.
  items[1].deflate = false;
  testing::RecordingGate stored;
  EXPECT_TRUE(optimize(make_zip(items), Policy{}, stored).replaced());
  EXPECT_EQ(stored.holds_of(2 * body.size()), 2u);
  EXPECT_EQ(stored.held, 0u);

  // In a perceptual mode every XML part is read for picture effects first.
  items[1].deflate = true;
  Policy high;
  high.mode = Mode::kHigh;
  testing::RecordingGate effects;
  EXPECT_TRUE(optimize(make_zip(items), high, effects).replaced());
  EXPECT_EQ(effects.holds_of(body.size()), 2u);  // optimising, then verifying
  EXPECT_EQ(effects.held, 0u);
}

// A picture the document shows through a colour key (<a:clrChange>, "Set Transparent Colour"),
// a black-and-white threshold or raised contrast: changes within the floor would show, so in a
// perceptual mode every picture of the package is optimised losslessly (and verified so). A
// washed-out picture (negative contrast) hides changes: requantised as usual.
TEST(ZipFormat, PicturesShownThroughEffectsStayLossless) {
  const auto jpeg = testing::make_jpeg({.width = 320, .height = 240, .quality = 97});
  Policy high;
  high.mode = Mode::kHigh;
  auto picture_after = [&](const std::string& blip) {
    auto items = docx_items(jpeg);
    items[1].content = text_bytes("<w:document><w:drawing><a:blip r:embed=\"rId4\">" + blip +
                                  "</a:blip></w:drawing>" + xml_body(40) + "</w:document>");
    const Outcome o = optimize(make_zip(items), high);
    EXPECT_TRUE(o.replaced()) << o.message;
    const ZipArchive after = read_zip(o.bytes);
    return std::make_pair(o, content_of(after.entries[2]));
  };
  for (const std::string effect :
       {"<a:clrChange><a:clrFrom><a:srgbClr val=\"FFFFFF\"/></a:clrFrom><a:clrTo><a:srgbClr "
        "val=\"FFFFFF\"><a:alpha val=\"0\"/></a:srgbClr></a:clrTo></a:clrChange>",
        "<a:biLevel thresh=\"50000\"/>", "<a:lum bright=\"10000\" contrast=\"40000\"/>",
        // ODF's black and white, in either quote and with spaces around '=' (LibreOffice reads
        // both; only the double-quoted form without spaces was found).
        "<style:graphic-properties draw:color-mode='mono'/>",
        "<style:graphic-properties draw:color-mode = \"mono\"/>"}) {
    SCOPED_TRACE(effect);
    const auto [o, picture] = picture_after(effect);
    EXPECT_EQ(testing::decode_jpeg_pixels(picture), testing::decode_jpeg_pixels(jpeg));
    EXPECT_TRUE(o.quality.pixels_identical);
    EXPECT_NE(o.detail.find("pictures optimised losslessly"), std::string::npos) << o.detail;
  }
  // A font's PANOSE contrast (HWPX headers carry typeInfo contrast="2") is no picture effect.
  const auto [font, font_picture] = picture_after(
      "</a:blip><hh:typeInfo familyType=\"FCAT_GOTHIC\" contrast=\"2\"/><a:blip>"
      "<hc:img mycontrast=\"5\" contrast=\"0\"/>");
  EXPECT_NE(testing::decode_jpeg_pixels(font_picture), testing::decode_jpeg_pixels(jpeg));
  const auto [washed, picture] = picture_after("<a:lum bright=\"70000\" contrast=\"-70000\"/>");
  EXPECT_NE(testing::decode_jpeg_pixels(picture), testing::decode_jpeg_pixels(jpeg));
  EXPECT_LT(picture.size(), jpeg.size() * 3 / 4);
}

// Hancom writes a picture's contrast on <hc:img>; older drawings (VML) key out a colour, threshold
// to black and white or change the gain in <v:imagedata>, in document parts and in .vml parts.
TEST(ZipFormat, HwpxAndVmlPictureEffectsKeepPicturesLossless) {
  const auto jpeg = testing::make_jpeg({.width = 320, .height = 240, .quality = 97});
  Policy high;
  high.mode = Mode::kHigh;
  const std::string vml_picture = "<v:shape><v:imagedata o:relid=\"rId4\" ";
  for (const auto& [part, text] : std::vector<std::pair<std::string, std::string>>{
           {"word/document.xml",
            "<hc:img binaryItemIDRef=\"image1\" bright=\"0\" contrast=\"50\" "
            "effect=\"REAL_PIC\"/>"},
           // As XML allows: a line break after the name, spaces around '=', single quotes, a
           // '+'; a bullet's picture in the header, with another prefix or none.
           {"word/document.xml",
            "<hc:img\n\tbinaryItemIDRef=\"image1\" contrast = ' +60' effect=\"REAL_PIC\"/>"},
           {"word/document.xml", "<hh:bullet useImage=\"1\"><hh:img contrast=\"60\"/>"},
           {"word/document.xml", "<img contrast=\"60\"/>"},
           {"word/document.xml", "<hc:img binaryItemIDRef=\"image1\" effect=\"PATTERN_8_8\"/>"},
           {"word/document.xml", vml_picture + "chromakey=\"white\"/></v:shape>"},
           {"word/document.xml", vml_picture + "BiLevel=\"t\"/></v:shape>"},
           {"xl/drawings/vmlDrawingHF1.vml", vml_picture + "gain=\"19661f\"/></v:shape>"}}) {
    SCOPED_TRACE(text);
    auto items = docx_items(jpeg);
    items.push_back({.name = part == "word/document.xml" ? "word/header1.xml" : part,
                     .content = text_bytes(text)});
    const Outcome o = optimize(make_zip(items), high);
    ASSERT_TRUE(o.replaced()) << o.message;
    EXPECT_EQ(testing::decode_jpeg_pixels(content_of(read_zip(o.bytes).entries[2])),
              testing::decode_jpeg_pixels(jpeg));
    EXPECT_NE(o.detail.find("pictures optimised losslessly"), std::string::npos) << o.detail;
  }
  // Neither without an effect: a plain <hc:img> and a plain <v:imagedata> are requantised.
  for (const std::string& text :
       {std::string("<hc:img binaryItemIDRef=\"image1\" contrast=\"0\"/>"),
        vml_picture + "o:title=\"\"/></v:shape>"}) {
    auto items = docx_items(jpeg);
    items.push_back({.name = "word/header1.xml", .content = text_bytes(text)});
    const Outcome o = optimize(make_zip(items), high);
    ASSERT_TRUE(o.replaced()) << o.message;
    EXPECT_EQ(o.detail.find("pictures optimised losslessly"), std::string::npos) << o.detail;
  }
}

// A document requantised in a perceptual mode reports its worst picture's score, for the
// journal and the report.
TEST(ZipFormat, ADocumentReportsItsWorstPicturesScore) {
  Policy high;
  high.mode = Mode::kHigh;
  const Outcome o = optimize(
      make_zip(docx_items(testing::make_jpeg({.width = 320, .height = 240, .quality = 97}))), high);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_FALSE(o.quality.pixels_identical);
  ASSERT_TRUE(o.quality.ssimulacra2.has_value()) << o.detail;
  EXPECT_GE(*o.quality.ssimulacra2, 80.0);
  // The journal keeps the detail, and reports read the score from it: a document's detail
  // named no score, so its row in the CSV and HTML report had none.
  const std::optional<double> reported = ssimulacra2_from_detail(o.detail);
  ASSERT_TRUE(reported.has_value()) << o.detail;
  EXPECT_NEAR(*reported, *o.quality.ssimulacra2, 0.005) << o.detail;
}

TEST(ZipFormat, MimetypeStaysFirstStoredAndIdentical) {
  const auto hwpx = make_zip(
      {{.name = "mimetype", .content = text_bytes("application/hwp+zip"), .deflate = false},
       {.name = "Contents/section0.xml", .content = text_bytes(xml_body(300))},
       {.name = "BinData/image1.jpg",
        .content = testing::make_jpeg({.width = 200, .height = 150})}});
  ASSERT_EQ(sniff(hwpx), Kind::kHwpx);
  const Outcome o = optimize(hwpx, Policy{});
  ASSERT_TRUE(o.replaced()) << o.message;
  const ZipArchive a = read_zip(hwpx), b = read_zip(o.bytes);
  EXPECT_EQ(b.entries[0].name, "mimetype");
  EXPECT_EQ(b.entries[0].method, kZipMethodStored);
  EXPECT_EQ(b.entries[0].local_offset, 0u);
  EXPECT_TRUE(std::equal(a.entries[0].data.begin(), a.entries[0].data.end(),
                         b.entries[0].data.begin(), b.entries[0].data.end()));
  // The first bytes readers check for the mimetype are unchanged.
  EXPECT_TRUE(std::equal(hwpx.begin(), hwpx.begin() + 30 + 8 + 19, o.bytes.begin()));
}

// EPUB and ODF readers look for the mimetype in the first local header, whatever the central
// directory's order: the local order is kept, and the verifier checks it.
TEST(ZipFormat, LocalHeadersKeepTheirOrderWhereTheDirectoryListsThemOtherwise) {
  const auto epub = make_zip(
      {{.name = "mimetype", .content = text_bytes("application/epub+zip"), .deflate = false},
       {.name = "META-INF/container.xml", .content = text_bytes(xml_body(100))},
       {.name = "OEBPS/content.opf", .content = text_bytes(xml_body(200))}},
      "", {1, 0, 2});
  ASSERT_EQ(sniff(epub), Kind::kEpub);
  const Outcome o = optimize(epub, Policy{});
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(sniff(o.bytes), Kind::kEpub);
  const ZipArchive b = read_zip(o.bytes);
  ASSERT_EQ(b.entries.size(), 3u);
  EXPECT_EQ(b.entries[1].name, "mimetype");  // the directory's order, kept
  EXPECT_EQ(b.entries[1].local_offset, 0u);
  EXPECT_EQ(b.entries[1].method, kZipMethodStored);
  EXPECT_TRUE(std::equal(epub.begin(), epub.begin() + 30 + 8 + 20, o.bytes.begin()));
  EXPECT_LT(b.entries[0].local_offset, b.entries[2].local_offset);
  // An output whose local headers were put in the directory's order fails verification.
  ZipArchive reordered = read_zip(o.bytes);
  for (size_t i = 0; i < reordered.entries.size(); ++i) reordered.entries[i].local_offset = i;
  testing::DirectContext context;
  EXPECT_TRUE(verify_zip(epub, o.bytes, context).ok);
  const Verdict wrong = verify_zip(epub, write_zip(reordered), context);
  EXPECT_FALSE(wrong.ok);
  EXPECT_EQ(wrong.problem, "the order of the entries' local headers changed");
}

// Hands every item back "optimised" as the bytes it is given: smaller than the item, yet
// incompressible where the item deflated well (a picture whose compressible EXIF thumbnail was
// optimised away).
class ReplacingContext final : public Context {
 public:
  explicit ReplacingContext(Bytes replacement) : replacement_(std::move(replacement)) {}
  const Policy& policy() const override { return policy_; }
  unsigned depth() const override { return 0; }
  bool out_of_time() const override { return false; }
  Outcome optimize_embedded_under(ByteView bytes, std::string_view, const Policy&) override {
    Outcome o;
    o.kind = sniff(bytes);
    o.action = Action::kReplaced;
    o.bytes = replacement_;
    return o;
  }
  Verdict verify_embedded_under(ByteView, ByteView, const Policy&) override {
    return {true, {}, {}};
  }

 private:
  Policy policy_;
  Bytes replacement_;
};

TEST(ZipFormat, APictureThatDeflatesWorseKeepsItsEntry) {
  Bytes compressible = {0xFF, 0xD8, 0xFF, 0xE1, 0x20, 0x00};
  compressible.resize(12000, 0);
  Bytes noisy = {0xFF, 0xD8, 0xFF, 0xE1, 0x20, 0x00};
  for (uint32_t x = 1; noisy.size() < 11000;)
    noisy.push_back(uint8_t((x = x * 1103515245 + 12345) >> 24));
  ASSERT_EQ(sniff(compressible), Kind::kJpeg);
  auto items = docx_items(compressible);
  items[2].deflate = true;
  const auto docx = make_zip(items);
  ReplacingContext context(noisy);
  const Outcome o = optimize_zip(docx, context);
  // The picture's entry stays as it was; the document part is re-deflated.
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(o.detail.find("jpeg optimised"), std::string::npos) << o.detail;
  EXPECT_EQ(content_of(read_zip(o.bytes).entries[2]), compressible);
  EXPECT_LT(o.bytes.size(), docx.size());
}

// `zip` with its end record in ZIP64 form (as `zip -fz` and Office's large files write it): the
// end record's count and offset are all ones, the true ones in a ZIP64 end record that a
// locator before it points to.
Bytes with_zip64_end(const Bytes& archive) {
  const size_t eocd = archive.size() - 22;
  auto u16 = [&](size_t at) { return uint64_t(archive[at] | archive[at + 1] << 8); };
  auto u32 = [&](size_t at) { return u16(at) | u16(at + 2) << 16; };
  const uint64_t entries = u16(eocd + 10), cd_size = u32(eocd + 12), cd_offset = u32(eocd + 16);
  Bytes out(archive.begin(), archive.begin() + long(eocd));
  auto put = [&](uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out.push_back(uint8_t(v >> (8 * i)));
  };
  const uint64_t end64 = out.size();
  put(0x06064b50, 4), put(44, 8), put(45, 2), put(45, 2), put(0, 4), put(0, 4);
  put(entries, 8), put(entries, 8), put(cd_size, 8), put(cd_offset, 8);
  put(0x07064b50, 4), put(0, 4), put(end64, 8), put(1, 4);
  put(0x06054b50, 4), put(0, 2), put(0, 2), put(0xFFFF, 2), put(0xFFFF, 2);
  put(0xFFFFFFFF, 4), put(0xFFFFFFFF, 4), put(0, 2);
  return out;
}

TEST(ZipFormat, ADocumentWithAZip64EndRecordIsStillADocument) {
  const Bytes docx =
      with_zip64_end(make_zip(docx_items(testing::make_jpeg({.width = 320, .height = 240}))));
  EXPECT_EQ(sniff(docx), Kind::kDocx);
  const Outcome o = optimize(docx, Policy{});
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(sniff(o.bytes), Kind::kDocx);
}

// `zip -fz` gives every local header ZIP64 sizes, the stored mimetype's among them: the media
// type is read up to the next entry.
TEST(ZipFormat, AnEpubZipWroteWithZip64HeadersIsAnEpub) {
  if (std::system("zip -v > /dev/null 2>&1") != 0) GTEST_SKIP() << "zip is absent";
  const fs::path dir = fs::temp_directory_path() / ("lighten_z64_" + std::to_string(::getpid()));
  fs::create_directories(dir / "META-INF");
  testing::write_file(dir / "mimetype", text_bytes("application/epub+zip"));
  testing::write_file(dir / "META-INF" / "container.xml", text_bytes(xml_body(50)));
  const std::string book = (dir / "book.epub").string();
  ASSERT_EQ(std::system(("cd " + dir.string() + " && zip -q -X -0 -fz " + book +
                         " mimetype && zip -q -X -r -fz " + book + " META-INF")
                            .c_str()),
            0);
  const Bytes epub = testing::read_file(book);
  fs::remove_all(dir);
  EXPECT_EQ(sniff(epub), Kind::kEpub);
}

// A deflate stream that ends before its entry does: the bytes after it are no reader's, and a
// re-deflated entry would drop them.
TEST(ZipFormat, BytesAfterAnEntrysDeflateStreamLeaveTheDocumentAlone) {
  auto items = docx_items(testing::make_jpeg({.width = 64, .height = 48}));
  items[1].after_stream = text_bytes("HIDDEN: kept by nobody but this archive");
  const auto docx = make_zip(items);
  const Outcome o = optimize(docx, Policy{});
  EXPECT_FALSE(o.replaced());
  EXPECT_EQ(o.reason, Reason::kUnsupportedVariant);
  EXPECT_NE(o.message.find("follow the end of word/document.xml's deflate stream"),
            std::string::npos)
      << o.message;
}

// ZIP64 sizes that add up past 2^64 must not wrap to a small total that passes the budget.
TEST(ZipFormat, DeclaredSizesThatWrapAroundAreStillOverTheBudget) {
  const uint64_t big = uint64_t(1) << 31;
  const auto docx =
      make_zip({{.name = "[Content_Types].xml", .content = text_bytes("<T/>")},
                {.name = "word/document.xml", .content = text_bytes("<w/>"), .declared_size = big},
                {.name = "word/other.bin",
                 .content = text_bytes("bzip2 data"),
                 .deflate = false,
                 .method = 12,
                 .declared_size = ~uint64_t(0) - big + 50}});
  const Outcome o = optimize(docx, Policy{});
  EXPECT_FALSE(o.replaced());
  EXPECT_EQ(o.reason, Reason::kLimitExceeded) << o.message;
}

// A recorded size far beyond what the stream holds is found out as the stream ends.
TEST(ZipFormat, ARecordedSizeTheStreamDoesNotHoldIsCorrupt) {
  const auto docx = make_zip({{.name = "[Content_Types].xml", .content = text_bytes("<T/>")},
                              {.name = "word/document.xml",
                               .content = text_bytes(xml_body(50)),
                               .declared_size = 60'000'000}});
  const Outcome o = optimize(docx, Policy{});
  EXPECT_EQ(o.reason, Reason::kCorrupt) << o.message;
}

// "PK\5\6" inside the archive comment is not the end record: the document is still one.
TEST(ZipFormat, AnEndSignatureInsideTheCommentIsPassedOver) {
  std::string comment = "embedded: PK\x05\x06";
  comment += std::string(18, '\0');
  const auto docx = make_zip(docx_items(testing::make_jpeg({.width = 64, .height = 48})), comment);
  EXPECT_EQ(sniff(docx), Kind::kDocx);
  const Outcome o = optimize(docx, Policy{});
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_EQ(read_zip(o.bytes).comment, text_bytes(comment));
}

// Effects are looked for in linear time: a part of unclosed elements cannot hold a worker.
TEST(ZipFormat, EffectsAreFoundAmongManyElementsAndUnclosedOnesEndTheSearch) {
  std::string slide = "<p:sld>";
  for (int i = 0; i < 20000; ++i) slide += "<a:lum bright=\"10\"/>";
  slide += "<a:lum contrast=\"20000\"/></p:sld>";
  std::string unclosed;
  for (int i = 0; i < 150000; ++i) unclosed += "<a:lum ";
  const auto jpeg = testing::make_jpeg({.width = 320, .height = 240, .quality = 95});
  for (const auto& [text, effect] : {std::pair{slide, true}, std::pair{unclosed, false}}) {
    const auto pptx = make_zip({{.name = "[Content_Types].xml", .content = text_bytes("<Types/>")},
                                {.name = "ppt/slides/slide1.xml", .content = text_bytes(text)},
                                {.name = "ppt/media/image1.jpeg", .content = jpeg}});
    Policy high;
    high.mode = Mode::kHigh;
    const Outcome o = optimize(pptx, high);
    ASSERT_TRUE(o.replaced()) << o.message;
    EXPECT_EQ(o.detail.find("pictures optimised losslessly") != std::string::npos, effect)
        << o.detail;
  }
}

TEST(ZipFormat, SignedDocumentsAreLeftAlone) {
  auto items = docx_items(testing::make_jpeg({.width = 200, .height = 150}));
  items.push_back({.name = "_xmlsignatures/sig1.xml", .content = text_bytes("<Signature/>")});
  const Outcome o = optimize(make_zip(items), Policy{});
  EXPECT_EQ(o.reason, Reason::kSigned) << o.message;
}

TEST(ZipFormat, SignedAndHashedPackagesAreLeftAloneAsPlainZip) {
  // OPC (XPS, VSIX), NuGet, MSIX/APPX and JAR signatures and MSIX's block map, each in an
  // archive lighten would otherwise optimise under --plain-zip optimize.
  Policy p;
  p.plain_zip = PlainZipPolicy::kOptimize;
  const auto image = testing::make_jpeg({.width = 200, .height = 150});
  const Bytes unsigned_package =
      make_zip({{.name = "content/logo.jpg", .content = image, .deflate = false}});
  ASSERT_TRUE(optimize(unsigned_package, p).replaced());
  for (const char* part :
       {"package/services/digital-signature/xml-signature/sig.psdsxs", ".signature.p7s",
        "AppxSignature.p7x", "AppxBlockMap.xml", "META-INF/CERT.SF", "META-INF/signatures.xml"}) {
    const Bytes package =
        make_zip({{.name = "content/logo.jpg", .content = image, .deflate = false},
                  {.name = part, .content = text_bytes("<signed/>")}});
    const Outcome o = optimize(package, p);
    EXPECT_EQ(o.reason, Reason::kSigned) << part << ": " << o.message;
    EXPECT_NE(o.message.find(part), std::string::npos) << o.message;
  }
}

// OPC lets the signature origin lie at any part name; the origin's relationship part names each
// signature by type. PKWARE's per-entry signature (extra field 0x0015) covers the entry's data.
TEST(ZipFormat, SignaturesFoundByTheirRelationshipOrExtraFieldAreLeftAlone) {
  const auto jpeg = testing::make_jpeg({.width = 200, .height = 150});
  auto items = docx_items(jpeg);
  items.push_back({.name = "_rels/.rels",
                   .content = text_bytes(
                       "<Relationships><Relationship Id=\"rId9\" Type=\"http://schemas."
                       "openxmlformats.org/package/2006/relationships/digital-signature/origin\" "
                       "Target=\"package/sig/origin.psdor\"/></Relationships>")});
  items.push_back({.name = "package/sig/origin.psdor", .content = {}, .deflate = false});
  // An origin without signatures (they were removed) signs nothing.
  ASSERT_TRUE(optimize(make_zip(items), Policy{}).replaced());
  items.push_back(
      {.name = "package/sig/_rels/origin.psdor.rels",
       .content = text_bytes(
           "<Relationships><Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/"
           "package/2006/relationships/digital-signature/signature\" Target=\"sig1.xml\"/>"
           "</Relationships>")});
  items.push_back({.name = "package/sig/sig1.xml", .content = text_bytes("<Signature/>")});
  Outcome o = optimize(make_zip(items), Policy{});
  EXPECT_EQ(o.reason, Reason::kSigned) << o.message;
  EXPECT_NE(o.message.find("origin.psdor.rels"), std::string::npos) << o.message;

  Policy plain;
  plain.plain_zip = PlainZipPolicy::kOptimize;
  const std::vector<uint8_t> signature_field = {0x15, 0x00, 0x04, 0x00, 1, 2, 3, 4};
  o = optimize(
      make_zip({{.name = "logo.jpg", .content = jpeg, .deflate = false, .extra = signature_field}}),
      plain);
  EXPECT_EQ(o.reason, Reason::kSigned) << o.message;
  EXPECT_NE(o.message.find("0x0015"), std::string::npos) << o.message;
}

// A package of many manifests each inflating to 16 MiB was inflated whole (2 s a MB of input,
// past the time budget) before its repeated names or its expansion were refused; `lighten info`
// inflated them all too.
TEST(ZipFormat, ManyLargeManifestsAreRefusedBeforeTheyAreInflated) {
  std::vector<ZipItem> items = {
      {.name = "mimetype", .content = text_bytes("application/hwp+zip"), .deflate = false}};
  for (int i = 0; i < 5; ++i)
    items.push_back({.name = "META-INF/manifest.xml", .content = Bytes(15u << 20, ' ')});
  const Bytes package = make_zip(items);
  ASSERT_EQ(sniff(package), Kind::kHwpx);
  const Outcome o = optimize(package, Policy{});
  EXPECT_EQ(o.reason, Reason::kLimitExceeded) << o.message;
  FileInfo info;
  describe_zip(package, info);
  std::string protection;
  for (const auto& [key, value] : info.properties)
    if (key == "protection") protection = value;
  EXPECT_NE(protection.find("64 MiB"), std::string::npos) << protection;
}

// Streaming readers (Java's ZipInputStream) show the local header's time: it is kept as it was,
// apart from the central directory's.
TEST(ZipFormat, ALocalHeadersOwnTimeIsKept) {
  auto items = docx_items(testing::make_jpeg({.width = 200, .height = 150}));
  for (ZipItem& item : items) item.local_time = 0x1234;
  const Outcome o = optimize(make_zip(items), Policy{});
  ASSERT_TRUE(o.replaced()) << o.message;
  for (const ZipEntry& e : read_zip(o.bytes).entries) {
    EXPECT_EQ(e.local_mod_time, 0x1234) << e.name;
    EXPECT_EQ(e.mod_time, 0x6000) << e.name;
  }
}

// Some HWPX writers separate folders with backslashes; Hancom reads META-INF\signatures.xml
// and META-INF\manifest.xml as the parts they name.
TEST(ZipFormat, SignaturesAndPasswordsBehindBackslashedNamesAreFound) {
  const std::vector<ZipItem> hwpx = {
      {.name = "mimetype", .content = text_bytes("application/hwp+zip"), .deflate = false},
      {.name = "Contents\\section0.xml", .content = text_bytes(xml_body(50))},
      {.name = "BinData\\image1.jpg",
       .content = testing::make_jpeg({.width = 200, .height = 150}),
       .deflate = false}};
  ASSERT_EQ(sniff(make_zip(hwpx)), Kind::kHwpx);
  ASSERT_TRUE(optimize(make_zip(hwpx), Policy{}).replaced());
  auto signed_package = hwpx;
  signed_package.push_back(
      {.name = "META-INF\\signatures.xml", .content = text_bytes("<signatures/>")});
  EXPECT_EQ(optimize(make_zip(signed_package), Policy{}).reason, Reason::kSigned);
  auto protected_package = hwpx;
  protected_package.push_back(
      {.name = "META-INF\\manifest.xml",
       .content = text_bytes("<odf:file-entry><odf:encryption-data/></odf:file-entry>")});
  EXPECT_EQ(optimize(make_zip(protected_package), Policy{}).reason, Reason::kEncrypted);
}

// Two parts of one name (OPC ignores case) make a package no rule reads one way: damaged.
TEST(ZipFormat, APackageNamingAPartTwiceIsDamaged) {
  const auto jpeg = testing::make_jpeg({.width = 200, .height = 150});
  for (const char* again : {"word/document.xml", "Word/Document.XML"}) {
    auto items = docx_items(jpeg);
    items.push_back({.name = again, .content = text_bytes("<w:document/>")});
    const Outcome o = optimize(make_zip(items), Policy{});
    EXPECT_EQ(o.reason, Reason::kCorrupt) << again << ": " << o.message;
    EXPECT_NE(o.message.find(again), std::string::npos) << o.message;
  }
}

TEST(ZipFormat, EncryptedEntriesAreLeftAlone) {
  auto items = docx_items(testing::make_jpeg({.width = 200, .height = 150}));
  items[1].flags = 1;  // "encrypted" bit
  const Outcome o = optimize(make_zip(items), Policy{});
  EXPECT_EQ(o.reason, Reason::kEncrypted) << o.message;
}

TEST(ZipFormat, OdfPasswordProtectionIsDetected) {
  const auto odt =
      make_zip({{.name = "mimetype",
                 .content = text_bytes("application/vnd.oasis.opendocument.text"),
                 .deflate = false},
                {.name = "content.xml", .content = text_bytes(xml_body(50))},
                {.name = "META-INF/manifest.xml",
                 .content = text_bytes(
                     "<manifest:file-entry><manifest:encryption-data/></manifest:file-entry>")}});
  EXPECT_EQ(optimize(odt, Policy{}).reason, Reason::kEncrypted);
}

TEST(ZipFormat, BrokenCrcIsLeftAloneWithAReason) {
  auto docx = make_zip(docx_items(testing::make_jpeg({.width = 200, .height = 150})));
  // Flip the CRC of the first entry in the central directory.
  const ZipArchive archive = read_zip(docx);
  size_t cd = archive.entries.back().span_end;
  docx[cd + 16] ^= 0xFF;
  const Outcome o = optimize(docx, Policy{});
  EXPECT_EQ(o.action, Action::kKept);
  EXPECT_EQ(o.reason, Reason::kCorrupt) << o.message;
  EXPECT_NE(o.message.find("CRC"), std::string::npos) << o.message;
}

// The leading mimetype is written back byte for byte, but its CRC is checked like any part's:
// a damaged one was carried into the output, CRC error and all.
TEST(ZipFormat, ADamagedMimetypeLeavesTheDocumentAlone) {
  auto hwpx = make_zip(
      {{.name = "mimetype", .content = text_bytes("application/hwp+zip"), .deflate = false},
       {.name = "Contents/section0.xml", .content = text_bytes(xml_body(300))}});
  ASSERT_EQ(sniff(hwpx), Kind::kHwpx);
  const ZipArchive archive = read_zip(hwpx);
  const size_t central = archive.entries.back().span_end;
  hwpx[14] ^= 0x01;            // the local header's CRC
  hwpx[central + 16] ^= 0x01;  // and the directory's, so that the two agree
  const Outcome o = optimize(hwpx, Policy{});
  EXPECT_EQ(o.action, Action::kKept);
  EXPECT_EQ(o.reason, Reason::kCorrupt) << o.message;
  EXPECT_NE(o.message.find("CRC of mimetype"), std::string::npos) << o.message;
}

// `lighten info` printed a deflated mimetype's compressed bytes.
TEST(ZipFormat, InfoReadsADeflatedMimetype) {
  const auto package =
      make_zip({{.name = "mimetype", .content = text_bytes("application/hwp+zip"), .deflate = true},
                {.name = "Contents/section0.xml", .content = text_bytes(xml_body(30))}});
  FileInfo info;
  describe_zip(package, info);
  std::string mimetype;
  for (const auto& [key, value] : info.properties)
    if (key == "mimetype") mimetype = value;
  EXPECT_EQ(mimetype, "application/hwp+zip");
}

TEST(ZipFormat, ATruncatedDocumentIsKnownByItsLocalHeadersAndSaysTruncated) {
  const auto docx = make_zip(docx_items(testing::make_jpeg({.width = 200, .height = 150})));
  const Bytes cut(docx.begin(), docx.begin() + long(docx.size() / 2));
  EXPECT_EQ(sniff(cut), Kind::kDocx);
  const Outcome o = optimize(cut, Policy{});
  EXPECT_EQ(o.action, Action::kKept);
  EXPECT_EQ(o.reason, Reason::kTruncated) << o.message;
  // Cut inside the first local header: nothing to tell it by.
  EXPECT_EQ(sniff(ByteView(docx).first(20)), Kind::kZip);
}

TEST(ZipFormat, PlainZipOnlyWhenThePolicyAllows) {
  const auto zip = make_zip({{.name = "notes.txt", .content = text_bytes(xml_body(300))}});
  ASSERT_EQ(sniff(zip), Kind::kZip);
  EXPECT_EQ(optimize(zip, Policy{}).reason, Reason::kSkipped);
  Policy p;
  p.plain_zip = PlainZipPolicy::kOptimize;
  EXPECT_TRUE(optimize(zip, p).replaced());
}

TEST(ZipFormat, ZipBombIsRefusedBeforeInflating) {
  // 200 MB of zeros deflate to about 200 kB.
  const auto zip = make_zip({{.name = "[Content_Types].xml", .content = text_bytes("<T/>")},
                             {.name = "word/document.xml", .content = Bytes(200u << 20, 0)}});
  Policy p;
  p.limits.max_expansion_ratio = 100;
  const Outcome o = optimize(zip, p);
  EXPECT_EQ(o.reason, Reason::kLimitExceeded) << o.message;
}

TEST(ZipFormat, NestedArchivesStopAtTheDepthLimit) {
  const auto inner = make_zip(docx_items(testing::make_jpeg({.width = 200, .height = 150})));
  const auto outer =
      make_zip({{.name = "[Content_Types].xml", .content = text_bytes("<T/>")},
                {.name = "word/embeddings/inner.docx", .content = inner, .deflate = false}});
  Policy p;
  p.limits.max_depth = 0;  // the inner document would be depth 1
  const Outcome o = optimize(outer, p);
  if (o.replaced()) {
    const ZipArchive b = read_zip(o.bytes);
    EXPECT_EQ(content_of(b.entries[1]), inner);  // left as it was
  }
  p.limits.max_depth = 4;
  const Outcome deeper = optimize(outer, p);
  ASSERT_TRUE(deeper.replaced()) << deeper.message;
  EXPECT_LT(deeper.bytes.size(), outer.size());
}

}  // namespace
}  // namespace lighten
