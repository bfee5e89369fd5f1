// Every .ppt, .xls and .doc of the shared corpus (and the broken ones), in lossless and
// visually-lossless mode: outputs parse again as compound files with the same storage tree,
// every stream but the rewritten ones is byte-identical, pictures in lossless mode decode to
// the same pixels, and files lighten cannot rewrite are left alone with a reason.
#include <gtest/gtest.h>

#include <cstdio>

#include "formats/cfb/compound_file.h"
#include "formats/office_binary/ppt_pictures.h"
#include "formats/office_binary/xls_workbook.h"
#include "lighten/lighten.h"
#include "support/corpus.h"
#include "support/jpeg_maker.h"
#include "support/png_maker.h"

namespace lighten {
namespace {

bool is_office_binary(Kind k) { return k == Kind::kPpt || k == Kind::kXls || k == Kind::kDoc; }

Policy policy_for(Mode mode) {
  Policy p;
  p.mode = mode;
  return p;
}

// The pictures that differ, found by the record-level comparison of the rewritten streams.
std::vector<officeart::PicturePair> changed_pictures(Kind kind, const cfb::CompoundFile& a,
                                                     const cfb::CompoundFile& b) {
  std::vector<officeart::PicturePair> pictures;
  std::string problem;
  if (kind == Kind::kPpt)
    problem = ppt::compare_pictures(
        *a.read_stream("PowerPoint Document"), *a.read_stream("Pictures"),
        *b.read_stream("PowerPoint Document"), *b.read_stream("Pictures"), pictures);
  else
    problem =
        xls::compare_workbooks(*a.read_stream("Workbook"), *b.read_stream("Workbook"), pictures);
  EXPECT_EQ(problem, "");
  return pictures;
}

void check_output(Kind kind, const Bytes& input, const Bytes& output, Mode mode) {
  EXPECT_LT(output.size(), input.size());
  EXPECT_EQ(sniff(output), kind);
  const cfb::CompoundFile a = cfb::CompoundFile::parse(input);
  const cfb::CompoundFile b = cfb::CompoundFile::parse(output);
  ASSERT_EQ(a.entries().size(), b.entries().size());
  for (size_t i = 0; i < a.entries().size(); ++i) {
    const auto& x = a.entries()[i];
    const auto& y = b.entries()[i];
    EXPECT_EQ(x.path, y.path);
    EXPECT_EQ(x.type, y.type);
    const bool rewritten =
        x.path == "Pictures" || x.path == "PowerPoint Document" || x.path == "Workbook";
    if (x.type == cfb::EntryType::kStream && !rewritten) {
      EXPECT_EQ(a.read_stream(x.path), b.read_stream(y.path)) << x.path;
    }
  }
  const auto pictures = changed_pictures(kind, a, b);
  EXPECT_FALSE(pictures.empty());
  for (const auto& p : pictures) {
    SCOPED_TRACE(p.name);
    EXPECT_LT(p.after.size(), p.before.size());
    EXPECT_EQ(sniff(p.after), sniff(p.before));
    if (mode != Mode::kLossless) continue;
    if (sniff(p.before) == Kind::kJpeg) {
      const auto pixels = testing::decode_jpeg_pixels(p.before);
      EXPECT_FALSE(pixels.empty());
      EXPECT_EQ(testing::decode_jpeg_pixels(p.after), pixels);
    } else if (sniff(p.before) == Kind::kPng) {
      const auto pixels = testing::decode_png_pixels(p.before);
      EXPECT_FALSE(pixels.empty());
      EXPECT_EQ(testing::decode_png_pixels(p.after), pixels);
    }
  }
}

TEST(OfficeBinaryCorpus, PptXlsDocInBothModes) {
  std::vector<std::filesystem::path> files;
  for (const auto& f : testing::corpus_files("office"))
    if (is_office_binary(sniff(testing::read_file(f)))) files.push_back(f);
  LIGHTEN_REQUIRE_CORPUS(files, "office (.ppt/.xls/.doc)");
  if (!describe(testing::read_file(files[0])).supported)
    GTEST_SKIP() << "PPT/XLS/DOC are not in src/engine/registry.cpp yet";
  for (Mode mode : {Mode::kLossless, Mode::kVisuallyLossless}) {
    uint64_t ppt_before = 0, ppt_after = 0;
    for (const auto& f : files) {
      SCOPED_TRACE(f.filename().string());
      const Bytes input = testing::read_file(f);
      const Kind kind = sniff(input);
      const Outcome o = optimize(input, policy_for(mode));
      std::printf("%-18s %-17s %8zu -> %8zu bytes  %s %s\n", f.filename().c_str(),
                  mode == Mode::kLossless ? "lossless" : "visually-lossless", input.size(),
                  o.replaced() ? o.bytes.size() : input.size(),
                  std::string(reason_name(o.reason)).c_str(),
                  (o.replaced() ? o.detail : o.message).c_str());
      if (kind == Kind::kPpt) {
        ppt_before += input.size();
        ppt_after += o.replaced() ? o.bytes.size() : input.size();
      }
      if (kind == Kind::kDoc) {
        EXPECT_FALSE(o.replaced());
        EXPECT_EQ(o.reason, Reason::kUnsupportedVariant);
        continue;
      }
      if (!o.replaced()) {
        EXPECT_FALSE(o.message.empty());
        continue;
      }
      check_output(kind, input, o.bytes, mode);
      // A second run does no further work.
      EXPECT_FALSE(optimize(o.bytes, policy_for(mode)).replaced());
    }
    if (ppt_before)
      std::printf("ppt (%s): %.1f%% saved\n",
                  mode == Mode::kLossless ? "lossless" : "visually-lossless",
                  100.0 * double(ppt_before - ppt_after) / double(ppt_before));
  }
}

TEST(OfficeBinaryCorpus, BrokenFilesAreLeftAloneWithAReason) {
  const auto files = testing::corpus_files("broken");
  LIGHTEN_REQUIRE_CORPUS(files, "broken");
  for (const auto& f : files) {
    const Bytes input = testing::read_file(f);
    const Kind kind = sniff(input);
    if (!is_office_binary(kind)) continue;
    SCOPED_TRACE(f.filename().string());
    if (!describe(input).supported) GTEST_SKIP() << "PPT/XLS/DOC are not registered yet";
    for (Mode mode : {Mode::kLossless, Mode::kVisuallyLossless}) {
      const Outcome o = optimize(input, policy_for(mode));
      if (o.replaced())
        check_output(kind, input, o.bytes, mode);
      else
        EXPECT_FALSE(o.message.empty()) << reason_name(o.reason);
    }
  }
}

}  // namespace
}  // namespace lighten
