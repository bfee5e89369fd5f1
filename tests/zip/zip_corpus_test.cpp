// Every office, HWPX and broken file of the shared corpus: outputs open in an independent reader
// (Info-ZIP's unzip -t), keep every entry in order with identical inflated bytes except media
// that decode to identical pixels; damaged files are left alone with a reason.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "codecs/deflate.h"
#include "formats/zip/zip_archive.h"
#include "lighten/lighten.h"
#include "support/corpus.h"
#include "support/jpeg_maker.h"
#include "support/png_maker.h"

namespace lighten {
namespace {

bool is_zip_document(Kind k) {
  switch (k) {
    case Kind::kDocx:
    case Kind::kXlsx:
    case Kind::kPptx:
    case Kind::kHwpx:
    case Kind::kOdt:
    case Kind::kOds:
    case Kind::kOdp:
    case Kind::kEpub:
      return true;
    default:
      return false;
  }
}

Bytes content_of(const ZipEntry& e) {
  return e.method == kZipMethodDeflate
             ? inflate_exact(e.data, e.uncompressed_size, DeflateWrapper::kRaw)
             : Bytes(e.data.begin(), e.data.end());
}

bool unzip_accepts(const Bytes& archive) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("lighten-zip-corpus-" + std::to_string(::getpid()) + ".zip");
  testing::write_file(path, archive);
  const int rc = std::system(("unzip -tqq '" + path.string() + "' >/dev/null 2>&1").c_str());
  std::filesystem::remove(path);
  return rc == 0;
}

void check_document(const std::filesystem::path& file, uint64_t& before, uint64_t& after) {
  SCOPED_TRACE(file.filename().string());
  const Bytes input = testing::read_file(file);
  const Outcome o = optimize(input, Policy{});
  before += input.size();
  after += o.replaced() ? o.bytes.size() : input.size();
  if (!o.replaced()) {
    EXPECT_FALSE(o.message.empty());
    return;
  }
  EXPECT_LT(o.bytes.size(), input.size());
  EXPECT_EQ(sniff(o.bytes), sniff(input));
  EXPECT_TRUE(unzip_accepts(o.bytes));
  const ZipArchive a = read_zip(input), b = read_zip(o.bytes);
  ASSERT_EQ(a.entries.size(), b.entries.size());
  for (size_t i = 0; i < a.entries.size(); ++i) {
    SCOPED_TRACE(a.entries[i].name);
    EXPECT_EQ(a.entries[i].name, b.entries[i].name);
    const Bytes x = content_of(a.entries[i]), y = content_of(b.entries[i]);
    if (x == y) continue;
    const Kind item = sniff(x);
    EXPECT_LT(y.size(), x.size());
    if (item == Kind::kJpeg) {
      EXPECT_EQ(testing::decode_jpeg_pixels(y), testing::decode_jpeg_pixels(x));
    } else if (item == Kind::kPng) {
      const auto pixels = testing::decode_png_pixels(x);
      EXPECT_FALSE(pixels.empty());
      EXPECT_EQ(testing::decode_png_pixels(y), pixels);
    } else {
      // Nested documents (an xlsx or a PDF inside a docx) were checked by the engine's verifier.
      EXPECT_TRUE(is_zip_document(item) || item == Kind::kPdf)
          << "only media and nested documents may change";
    }
  }
  if (a.entries[0].name == "mimetype") {
    EXPECT_EQ(b.entries[0].local_offset, 0u);
    EXPECT_TRUE(std::equal(a.entries[0].data.begin(), a.entries[0].data.end(),
                           b.entries[0].data.begin(), b.entries[0].data.end()));
  }
  // A second run changes nothing.
  EXPECT_FALSE(optimize(o.bytes, Policy{}).replaced());
}

TEST(ZipCorpus, OfficeAndHwpxDocuments) {
  auto files = testing::corpus_files("office");
  const auto hwpx = testing::corpus_files("hwpx");
  files.insert(files.end(), hwpx.begin(), hwpx.end());
  LIGHTEN_REQUIRE_CORPUS(files, "office");
  uint64_t before = 0, after = 0;
  size_t documents = 0;
  for (const auto& f : files) {
    if (!is_zip_document(sniff(testing::read_file(f)))) continue;
    ++documents;
    check_document(f, before, after);
  }
  EXPECT_GT(documents, 0u);
  EXPECT_LT(after, before);
  std::printf("zip documents: %zu files, %llu -> %llu bytes (%.2f%% saved)\n", documents,
              (unsigned long long)before, (unsigned long long)after,
              100.0 * double(before - after) / double(before));
}

TEST(ZipCorpus, BrokenFilesAreLeftAloneWithAReason) {
  const auto files = testing::corpus_files("broken");
  LIGHTEN_REQUIRE_CORPUS(files, "broken");
  for (const auto& f : files) {
    const Bytes input = testing::read_file(f);
    const Outcome o = optimize(input, Policy{});
    SCOPED_TRACE(f.filename().string());
    if (o.replaced()) {
      // Whatever lighten changes must be a valid file of the same kind.
      EXPECT_EQ(sniff(o.bytes), sniff(input));
      if (is_zip_document(sniff(input))) {
        EXPECT_TRUE(unzip_accepts(o.bytes));
      }
    } else {
      EXPECT_FALSE(o.message.empty()) << reason_name(o.reason);
    }
  }
}

}  // namespace
}  // namespace lighten
