#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lighten/kind.h"
#include "lighten/lighten.h"
#include "support/corpus.h"
#include "support/zip_maker.h"

namespace lighten {
namespace {

std::vector<uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }
template <size_t N>
std::vector<uint8_t> bytes_of(const char (&s)[N]) {  // keeps embedded NULs
  return {s, s + N - 1};
}

std::vector<uint8_t> tiny_zip(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::vector<testing::ZipItem> items;
  for (const auto& [name, content] : entries)
    items.push_back({.name = name, .content = testing::text_bytes(content), .deflate = false});
  return testing::make_zip(items);
}

TEST(Sniff, MagicNumbers) {
  EXPECT_EQ(sniff(bytes_of("\xFF\xD8\xFF\xE0")), Kind::kJpeg);
  EXPECT_EQ(sniff(bytes_of("\x89PNG\r\n\x1a\n....")), Kind::kPng);
  EXPECT_EQ(sniff(bytes_of("GIF89a")), Kind::kGif);
  EXPECT_EQ(sniff(bytes_of("RIFF\0\0\0\0WEBPVP8 ")), Kind::kWebp);
  EXPECT_EQ(sniff(bytes_of("RIFF\0\0\0\0AVI LIST")), Kind::kAvi);
  EXPECT_EQ(sniff(bytes_of(std::string("RIFF\0\0\0\0WAVEfmt ", 16))), Kind::kRiff);
  EXPECT_EQ(sniff(bytes_of(std::string("\0\0\0\x18"
                                       "ftypisom",
                                       12))),
            Kind::kMp4);
  EXPECT_EQ(sniff(bytes_of(std::string("\0\0\0\x14"
                                       "ftypqt  ",
                                       12))),
            Kind::kMov);
  EXPECT_EQ(sniff(bytes_of(std::string("\0\0\0\x18"
                                       "ftypheic",
                                       12))),
            Kind::kHeif);
  EXPECT_EQ(sniff(bytes_of("%PDF-1.7\n")), Kind::kPdf);
  EXPECT_EQ(sniff(bytes_of(std::string(100, ' ') + "%PDF-1.4\n1 0 obj")), Kind::kPdf);
  // Past the first byte, a header needs an object after it: a note that mentions one is text.
  EXPECT_EQ(sniff(bytes_of("a note about the %PDF-1.4 header")), Kind::kUnknown);
  EXPECT_EQ(sniff(bytes_of(std::string(100, ' ') + "%PDF-x 1 0 obj")), Kind::kUnknown);
  EXPECT_EQ(sniff(bytes_of(std::string("II*\0", 4))), Kind::kTiff);
  EXPECT_EQ(sniff(bytes_of("hello world")), Kind::kUnknown);
  EXPECT_EQ(sniff({}), Kind::kUnknown);
  // An SOI alone is a JPEG cut short (optimising it says `truncated`); SOI and then not a marker
  // is no JPEG.
  EXPECT_EQ(sniff(bytes_of("\xFF\xD8")), Kind::kJpeg);
  EXPECT_EQ(sniff(bytes_of("\xFF\xD8\x00")), Kind::kUnknown);
}

TEST(Sniff, ZipDocumentsByContent) {
  EXPECT_EQ(sniff(tiny_zip({{"[Content_Types].xml", "<x/>"}, {"ppt/presentation.xml", ""}})),
            Kind::kPptx);
  EXPECT_EQ(sniff(tiny_zip({{"[Content_Types].xml", "<x/>"}, {"word/document.xml", ""}})),
            Kind::kDocx);
  EXPECT_EQ(sniff(tiny_zip({{"[Content_Types].xml", "<x/>"}, {"xl/workbook.xml", ""}})),
            Kind::kXlsx);
  EXPECT_EQ(sniff(tiny_zip({{"mimetype", "application/hwp+zip"}, {"Contents/section0.xml", ""}})),
            Kind::kHwpx);
  EXPECT_EQ(sniff(tiny_zip({{"mimetype", "application/epub+zip"}})), Kind::kEpub);
  EXPECT_EQ(sniff(tiny_zip({{"mimetype", "application/vnd.oasis.opendocument.text"}})), Kind::kOdt);
  EXPECT_EQ(sniff(tiny_zip({{"META-INF/MANIFEST.MF", "Manifest-Version: 1.0"}})), Kind::kJar);
  EXPECT_EQ(sniff(tiny_zip({{"a.txt", "a"}})), Kind::kZip);
  // Without its mimetype an HWPX is known by its OWPML parts (by either separator), and only so:
  // a plain archive with a "Contents/sections.txt" stays a plain archive (--plain-zip leave).
  for (const char* part :
       {"Contents/section12.xml", "Contents\\section0.xml", "Contents/header.xml"})
    EXPECT_EQ(sniff(tiny_zip({{part, "<x/>"}, {"notes.txt", "n"}})), Kind::kHwpx) << part;
  for (const char* part : {"Contents/sections.txt", "Contents/section.xml",
                           "Contents/header.xml.bak", "Contents/sectionA.xml"})
    EXPECT_EQ(sniff(tiny_zip({{part, "<x/>"}, {"notes.txt", "n"}})), Kind::kZip) << part;
}

TEST(Sniff, TruncatedZipDirectoryDoesNotThrow) {
  auto zip = tiny_zip({{"[Content_Types].xml", "<x/>"}, {"word/document.xml", ""}});
  zip.resize(zip.size() - 30);
  EXPECT_NO_THROW(sniff(zip));
}

// LibreOffice writes every deflated entry with a data descriptor, and [Content_Types].xml well
// after the first entry: an archive cut before its directory is still told by its local headers.
TEST(Sniff, TruncatedDocumentsWithDataDescriptorsAreTold) {
  std::vector<testing::ZipItem> items;
  for (const char* name : {"_rels/.rels", "word/document.xml", "docProps/app.xml",
                           "[Content_Types].xml", "word/media/image1.png"})
    items.push_back({.name = name,
                     .content = testing::text_bytes(std::string(300, 'x') + name),
                     .data_descriptor = true});
  std::vector<uint8_t> zip = testing::make_zip(items);
  EXPECT_EQ(sniff(zip), Kind::kDocx);
  const std::string text(zip.begin(), zip.end());
  const size_t last = text.rfind("word/media/image1.png", text.find("PK\x01\x02"));
  ASSERT_NE(last, std::string::npos);
  zip.resize(last + 40);  // into the last entry's data: no central directory
  EXPECT_EQ(sniff(zip), Kind::kDocx);
  const Outcome o = optimize(zip, Policy{});
  EXPECT_FALSE(o.replaced());
  EXPECT_EQ(o.reason, Reason::kTruncated) << o.message;
}

// A mimetype entry written to a stream has its size in a data descriptor after it.
TEST(Sniff, MimetypeWithADataDescriptorIsRead) {
  const std::vector<uint8_t> odt = testing::make_zip(
      {{.name = "mimetype",
        .content = testing::text_bytes("application/vnd.oasis.opendocument.text"),
        .deflate = false,
        .data_descriptor = true},
       {.name = "content.xml", .content = testing::text_bytes("<x/>"), .data_descriptor = true}});
  EXPECT_EQ(sniff(odt), Kind::kOdt);
}

TEST(Sniff, NamesRoundTrip) {
  for (Kind k : {Kind::kJpeg, Kind::kPptx, Kind::kHwp, Kind::kMov, Kind::kUnknown})
    EXPECT_EQ(kind_from_name(kind_name(k)), k);
}

TEST(Sniff, CorpusKindsMatchTheirFolders) {
  const auto jpegs = testing::corpus_files("jpeg");
  LIGHTEN_REQUIRE_CORPUS(jpegs, "jpeg");
  for (const auto& f : jpegs) EXPECT_EQ(sniff(testing::read_file(f)), Kind::kJpeg) << f;
  for (const auto& f : testing::corpus_files("pdf"))
    EXPECT_EQ(sniff(testing::read_file(f)), Kind::kPdf) << f;
  for (const auto& f : testing::corpus_files("png"))
    EXPECT_EQ(sniff(testing::read_file(f)), Kind::kPng) << f;
  for (const auto& f : testing::corpus_files("hwpx"))
    EXPECT_EQ(sniff(testing::read_file(f)), Kind::kHwpx) << f;
  for (const auto& f : testing::corpus_files("hwp")) {
    const Kind k = sniff(testing::read_file(f));
    EXPECT_TRUE(k == Kind::kHwp || k == Kind::kCfb) << f << " " << kind_name(k);
  }
}

}  // namespace
}  // namespace lighten
