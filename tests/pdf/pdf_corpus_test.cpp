// Every PDF of the shared corpus and of its broken files, checked by independent readers: qpdf
// --check passes on every output, poppler renders the first pages to the same pixels at 100 dpi
// and extracts the same text, the page count stays, and nothing gets larger. Files lighten
// leaves alone say why.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "lighten/lighten.h"
#include "support/corpus.h"

namespace lighten {
namespace {

namespace fs = std::filesystem;

// Long documents: the first pages tell enough, and keep the test under a few minutes.
constexpr int kPagesToRender = 10;

bool have_tools() {
  return std::system("qpdf --version >/dev/null 2>&1") == 0 &&
         std::system("pdftoppm -v >/dev/null 2>&1") == 0 &&
         std::system("pdftotext -v >/dev/null 2>&1") == 0;
}

// Standard output of `command`, read as bytes.
std::string capture(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 1 << 16> buffer;
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  pclose(pipe);
  return out;
}

// Single-quoted for the shell (corpus names hold no quotes). Built by append: GCC 12 warns
// falsely (-Wrestrict) on "'" + string + "'".
std::string quoted(const fs::path& p) {
  std::string q = "'";
  q += p.string();
  q += '\'';
  return q;
}

struct Rendered {
  std::string pixels, text, pages;
};

Rendered render(const fs::path& pdf) {
  const std::string last = " -l " + std::to_string(kPagesToRender) + " ";
  return {capture("pdftoppm -r 100" + last + quoted(pdf) + " 2>/dev/null"),
          capture("pdftotext" + last + quoted(pdf) + " - 2>/dev/null"),
          capture("qpdf --show-npages " + quoted(pdf) + " 2>/dev/null")};
}

struct Totals {
  uint64_t before = 0, after = 0;
  int optimised = 0, left = 0;
};

void check_file(const fs::path& file, Totals& totals, const Policy& policy = {}) {
  SCOPED_TRACE(file.filename().string());
  const std::vector<uint8_t> input = testing::read_file(file);
  const Outcome o = optimize(input, policy);
  totals.before += input.size();
  totals.after += o.replaced() ? o.bytes.size() : input.size();
  if (!o.replaced()) {
    ++totals.left;
    EXPECT_FALSE(o.message.empty()) << reason_name(o.reason);
    std::printf("  %-24s left alone: %s: %s\n", file.filename().c_str(),
                std::string(reason_name(o.reason)).c_str(), o.message.c_str());
    return;
  }
  ++totals.optimised;
  EXPECT_LT(o.bytes.size(), input.size());
  EXPECT_EQ(sniff(o.bytes), Kind::kPdf);
  const fs::path out =
      fs::temp_directory_path() / ("lighten-pdf-corpus-" + std::to_string(::getpid()) + ".pdf");
  testing::write_file(out, o.bytes);
  EXPECT_EQ(std::system(("qpdf --check " + quoted(out) + " >/dev/null 2>&1").c_str()), 0)
      << "qpdf --check fails on the output";
  const Rendered a = render(file), b = render(out);
  fs::remove(out);
  EXPECT_FALSE(a.pixels.empty());
  EXPECT_TRUE(a.pixels == b.pixels) << "pages render differently";
  EXPECT_TRUE(a.text == b.text) << "extracted text differs";
  EXPECT_EQ(a.pages, b.pages);
  // A second run finds nothing more.
  EXPECT_FALSE(optimize(o.bytes, policy).replaced());
  std::printf("  %-24s %9zu -> %9zu (%s)\n", file.filename().c_str(), input.size(), o.bytes.size(),
              o.detail.c_str());
}

TEST(PdfCorpus, EveryOutputChecksRendersAndReadsTheSame) {
  const auto files = testing::corpus_files("pdf");
  LIGHTEN_REQUIRE_CORPUS(files, "pdf");
  if (!have_tools()) GTEST_SKIP() << "needs qpdf and poppler-utils (scripts/install-deps)";
  Totals t;
  for (const auto& f : files) check_file(f, t);
  EXPECT_GT(t.optimised, 0);
  EXPECT_LT(t.after, t.before);
  std::printf("pdf corpus: %d optimised, %d left alone, %llu -> %llu bytes (%.2f%% saved)\n",
              t.optimised, t.left, (unsigned long long)t.before, (unsigned long long)t.after,
              100.0 * double(t.before - t.after) / double(t.before));
}

TEST(PdfCorpus, BrokenPdfsAreLeftAloneOrStayValid) {
  const auto files = testing::corpus_files("broken");
  LIGHTEN_REQUIRE_CORPUS(files, "broken");
  if (!have_tools()) GTEST_SKIP() << "needs qpdf and poppler-utils (scripts/install-deps)";
  Totals t;
  for (const auto& f : files) {
    const std::vector<uint8_t> input = testing::read_file(f);
    if (sniff(input) != Kind::kPdf && !input.empty()) continue;  // a docx named .pdf is a docx
    if (sniff(input) != Kind::kPdf && f.extension() != ".pdf") continue;  // by content
    check_file(f, t);
  }
  EXPECT_GT(t.left, 0) << "the damaged PDFs must be left alone";
}

// With --repair, what qpdf reconstructs is written: every output checks, renders and reads like
// the damaged input does in poppler (which repairs it its own way), and more files are written.
TEST(PdfCorpus, BrokenPdfsWithRepairAreWrittenAsReconstructed) {
  const auto files = testing::corpus_files("broken");
  LIGHTEN_REQUIRE_CORPUS(files, "broken");
  if (!have_tools()) GTEST_SKIP() << "needs qpdf and poppler-utils (scripts/install-deps)";
  Policy repair;
  repair.repair = true;
  Totals plain, repaired;
  for (const auto& f : files) {
    const std::vector<uint8_t> input = testing::read_file(f);
    if (sniff(input) != Kind::kPdf) continue;
    plain.optimised += optimize(input, Policy{}).replaced();
    check_file(f, repaired, repair);
  }
  EXPECT_GT(repaired.optimised, plain.optimised) << "no reconstructed file was written";
}

}  // namespace
}  // namespace lighten
