// Every file of the shared JPEG corpus through optimize_jpeg, checked by an independent decode;
// every broken file must end in a FormatError, never a crash.
#include <gtest/gtest.h>

#include "formats/jpeg/jpeg_format.h"
#include "formats/jpeg/markers.h"
#include "support/corpus.h"
#include "test_support.h"

namespace lighten::jpeg {
namespace {

using lighten::testing::corpus_files;
using lighten::testing::decode;
using lighten::testing::read_file;
using lighten::testing::TestContext;

std::vector<Bytes> metadata_segments(const Bytes& jpeg, const Layout& l) {
  std::vector<Bytes> out;
  for (const Segment& s : l.segments)
    if (s.is_metadata() && !(s.marker == 0xE2 && starts_with(s.payload, {"MPF\0", 4})))
      out.emplace_back(jpeg.begin() + long(s.offset), jpeg.begin() + long(s.end()));
  return out;
}

void check_file(const std::filesystem::path& path, ScanMode mode) {
  SCOPED_TRACE(path.filename().string() + (mode == ScanMode::kKeep ? " keep" : " smallest"));
  Bytes in = read_file(path);
  Policy p;
  p.jpeg_scans = mode;
  TestContext context(p);
  Outcome out;
  try {
    out = optimize_jpeg(in, context);
  } catch (const FormatError& e) {
    // Only variants that cannot be carried may be refused in the good corpus.
    EXPECT_EQ(e.reason(), Reason::kUnsupportedVariant) << e.what();
    return;
  }
  ASSERT_TRUE(out.replaced());
  Layout li = parse_layout(in);
  Layout lo = parse_layout(out.bytes);
  const bool arithmetic = li.frame.marker == 0xC9 || li.frame.marker == 0xCA;
  // An input whose Huffman tables are already optimal may come out a few bytes larger (and an
  // arithmetic-coded one larger still); the engine then keeps the original.
  if (!arithmetic) {
    EXPECT_LE(out.bytes.size(), in.size() + in.size() / 500 + 64) << "larger output";
  }
  auto a = decode(in);
  auto b = decode(out.bytes);
  ASSERT_TRUE(a.ok && b.ok);
  EXPECT_EQ(a.width, b.width);
  EXPECT_EQ(a.height, b.height);
  EXPECT_EQ(a.components, b.components);
  EXPECT_TRUE(a.samples == b.samples) << "pixels differ";
  EXPECT_TRUE(metadata_segments(in, li) == metadata_segments(out.bytes, lo))
      << "APPn/COM segments differ";
  ByteView ta = li.trailing(in), tb = lo.trailing(out.bytes);
  EXPECT_TRUE(ta.size() == tb.size() && std::equal(ta.begin(), ta.end(), tb.begin()))
      << "data after EOI differs";
  Verdict v = verify_jpeg(in, out.bytes, p);
  EXPECT_TRUE(v.ok) << v.problem;
}

TEST(JpegCorpus, KeepAndSmallestArePixelIdentical) {
  auto files = corpus_files("jpeg");
  LIGHTEN_REQUIRE_CORPUS(files, "jpeg");
  for (const auto& f : files) {
    check_file(f, ScanMode::kKeep);
    check_file(f, ScanMode::kSmallest);
  }
}

TEST(JpegCorpus, BrokenFilesGiveAReason) {
  auto files = corpus_files("broken");
  LIGHTEN_REQUIRE_CORPUS(files, "broken");
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    Bytes in = read_file(f);
    for (ScanMode mode : {ScanMode::kKeep, ScanMode::kSmallest}) {
      Policy p;
      p.jpeg_scans = mode;
      TestContext context(p);
      try {
        Outcome out = optimize_jpeg(in, context);
        // Only a real JPEG under a wrong name may pass, and then it must verify.
        EXPECT_TRUE(verify_jpeg(in, out.bytes, p).ok);
      } catch (const FormatError& e) {
        EXPECT_NE(e.reason(), Reason::kOptimized);
        EXPECT_NE(e.reason(), Reason::kInternalError);
      }
    }
    FileInfo info;
    try {
      describe_jpeg(in, info);
    } catch (const FormatError&) {
    }
  }
}

}  // namespace
}  // namespace lighten::jpeg
