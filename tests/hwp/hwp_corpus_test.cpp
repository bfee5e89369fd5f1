// Every HWP document of the shared corpus, in lossless and visually-lossless mode: each output
// parses as a compound file with the same storage tree, every stream but the optimised images
// inflates to the same bytes, every image decodes (to the same pixels when lossless), a second
// run finds nothing more, and broken or truncated inputs end in a reason, never a crash.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <optional>

#include "formats/cfb/compound_file.h"
#include "formats/hwp/hwp_document.h"
#include "formats/hwp/hwp_format.h"
#include "formats/hwp/hwp_records.h"
#include "hwp/hwp_maker.h"
#include "lighten/lighten.h"
#include "support/corpus.h"
#include "support/direct_context.h"
#include "support/jpeg_maker.h"
#include "support/png_maker.h"

namespace lighten {
namespace {

using testing::DirectContext;

Bytes content_of(const Bytes& raw) {
  auto inflated = hwp::inflate_stream(raw, 256u << 20);
  return inflated ? inflated->content : raw;
}

// The promises checked from the outside, without the optimiser's own verifier.
void expect_same_document(const Bytes& in, const Bytes& out, bool lossless) {
  const auto a = cfb::CompoundFile::parse(in);
  const auto b = cfb::CompoundFile::parse(out);
  ASSERT_EQ(a.entries().size(), b.entries().size());
  for (size_t i = 0; i < a.entries().size(); ++i) {
    EXPECT_EQ(a.entries()[i].path, b.entries()[i].path);
    EXPECT_EQ(a.entries()[i].type, b.entries()[i].type);
    EXPECT_EQ(a.entry_record(i), b.entry_record(i)) << a.entries()[i].path;
  }
  for (const std::string& path : a.stream_paths()) {
    const Bytes x = *a.read_stream(path), y = *b.read_stream(path);
    if (x == y) continue;
    const Bytes cx = content_of(x), cy = content_of(y);
    if (cx == cy) continue;
    const bool image_stream = path.starts_with("BinData/") || path == "PrvImage";
    ASSERT_TRUE(image_stream) << path << " changed";
    const Kind kind = sniff(cx);
    ASSERT_EQ(sniff(cy), kind) << path;
    if (kind == Kind::kJpeg) {
      const Bytes px = testing::decode_jpeg_pixels(cx), py = testing::decode_jpeg_pixels(cy);
      ASSERT_FALSE(py.empty()) << path << " does not decode";
      if (lossless) {
        EXPECT_EQ(px, py) << path;
      }
    } else if (kind == Kind::kPng) {
      const Bytes px = testing::decode_png_pixels(cx), py = testing::decode_png_pixels(cy);
      ASSERT_FALSE(py.empty()) << path << " does not decode";
      if (lossless) {
        EXPECT_EQ(px, py) << path;
      }
    } else {
      ADD_FAILURE() << path << ": a " << kind_name(kind) << " changed";
    }
  }
}

TEST(HwpCorpus, EveryDocumentKeepsItsPromises) {
  const auto files = testing::corpus_files("hwp");
  LIGHTEN_REQUIRE_CORPUS(files, "hwp");
  for (const Mode mode : {Mode::kLossless, Mode::kVisuallyLossless}) {
    Policy policy;
    policy.mode = mode;
    const bool lossless = mode == Mode::kLossless;
    uint64_t total_in = 0, total_out = 0;
    for (const auto& path : files) {
      SCOPED_TRACE(path.filename().string());
      const Bytes in = testing::read_file(path);
      DirectContext context(policy);
      Outcome o;
      try {
        o = optimize_hwp(in, context);
      } catch (const FormatError& e) {
        std::printf("%-20s %-18s left alone: %s (%s)\n", path.filename().c_str(),
                    lossless ? "lossless" : "visually-lossless",
                    std::string(reason_name(e.reason())).c_str(), e.what());
        EXPECT_TRUE(e.reason() == Reason::kEncrypted || e.reason() == Reason::kSigned) << e.what();
        total_in += in.size(), total_out += in.size();
        continue;
      }
      const size_t out_size = o.replaced() ? o.bytes.size() : in.size();
      total_in += in.size(), total_out += out_size;
      std::printf("%-20s %-18s %8zu -> %8zu bytes (%5.1f%%) %s\n", path.filename().c_str(),
                  lossless ? "lossless" : "visually-lossless", in.size(), out_size,
                  100.0 * (1.0 - double(out_size) / double(in.size())), o.detail.c_str());
      if (!o.replaced()) continue;
      EXPECT_LT(o.bytes.size(), in.size());
      const Verdict v = verify_hwp(in, o.bytes, context);
      EXPECT_TRUE(v.ok) << v.problem;
      expect_same_document(in, o.bytes, lossless);
      const Outcome again = optimize_hwp(o.bytes, context);
      EXPECT_FALSE(again.replaced()) << "a second run changed it again: " << again.detail;
    }
    std::printf("%-20s %-18s %8llu -> %8llu bytes (%5.1f%%)\n", "total",
                lossless ? "lossless" : "visually-lossless", (unsigned long long)total_in,
                (unsigned long long)total_out, 100.0 * (1.0 - double(total_out) / total_in));
  }
}

// Issue 8's goal on a picture-heavy document: an HWP whose pictures are the 16 camera photos of
// ../shared/oracles/README.md (as claim forms carry them) shrinks by at least 40 % in
// visually-lossless mode, every picture at its floor (checked by the engine's verifier). A
// measurement of the release build: too slow under the sanitizers, which check the same paths
// on the corpus documents above.
TEST(HwpCorpus, PictureHeavyDocumentShrinksByFortyPercent) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "a release-build measurement (16 camera photos in visually-lossless mode)";
#endif
  const auto dir = testing::shared_dir() / "corpus" / "jpeg";
  std::vector<std::filesystem::path> photos;
  for (const char* name :
       {"canon_20d_vert", "canon_5d", "canon_lr_22mp", "dimage_ex_221212", "fuji_f40fd",
        "galaxy_s7", "iphone6plus", "iphone_hdr", "jolla", "leica_t", "lumia800", "motog",
        "nikon_d90", "nokia83", "noritsu_scan", "olympus_fe230"})
    if (std::filesystem::exists(dir / (std::string(name) + ".jpg")))
      photos.push_back(dir / (std::string(name) + ".jpg"));
  LIGHTEN_REQUIRE_CORPUS(photos, "jpeg");
  testing::HwpRecipe recipe;
  uint16_t id = 1;
  for (const auto& photo : photos)
    recipe.items.push_back({.id = id++, .extension = "jpg", .content = testing::read_file(photo)});
  const Bytes in = testing::make_hwp(recipe);
  Policy policy;
  policy.mode = Mode::kVisuallyLossless;
  // Sixteen 5-22 MP photos scored several times each: on a busy 2-core machine that can pass
  // the default 300 s, and this test is about the bytes, not the clock.
  policy.limits.time_budget_s = 3600;
  const Outcome o = optimize(in, policy);
  ASSERT_TRUE(o.replaced()) << o.message;
  const double saved = 100.0 * double(in.size() - o.bytes.size()) / double(in.size());
  std::printf("picture-heavy HWP: %zu -> %zu bytes (%.1f %% saved): %s\n", in.size(),
              o.bytes.size(), saved, o.detail.c_str());
  EXPECT_GE(saved, 40.0);
  expect_same_document(in, o.bytes, false);
}

TEST(HwpCorpus, BrokenAndTruncatedInputsEndInAReason) {
  auto files = testing::corpus_files("broken");
  LIGHTEN_REQUIRE_CORPUS(files, "broken");
  DirectContext context;
  for (const auto& path : files) {
    const Bytes in = testing::read_file(path);
    try {
      const Outcome o = optimize_hwp(in, context);
      ADD_FAILURE() << path.filename() << " is not an HWP document yet was taken";
    } catch (const FormatError& e) {
      std::printf("%-28s %s\n", path.filename().c_str(),
                  std::string(reason_name(e.reason())).c_str());
    }
  }
  for (const auto& path : testing::corpus_files("hwp")) {
    const Bytes in = testing::read_file(path);
    for (size_t keep : {in.size() / 3, in.size() / 2, in.size() - 700}) {
      const Bytes cut(in.begin(), in.begin() + keep);
      try {
        const Outcome o = optimize_hwp(cut, context);
        // Cutting only unused sectors leaves a valid document.
        if (o.replaced()) {
          EXPECT_TRUE(verify_hwp(cut, o.bytes, context).ok);
        }
      } catch (const FormatError& e) {
        EXPECT_NE(e.reason(), Reason::kInternalError);
      }
    }
  }
}

// The picture info is read at its place in real documents: every picture shape of the corpus
// names one of the BinData items its DocInfo declares (by their order, from 1), with an effect
// and levels the format defines; so does every image fill of DocInfo's border and background
// definitions and of the drawing shapes.
TEST(HwpCorpus, PictureShapesNameDeclaredItems) {
  const auto files = testing::corpus_files("hwp");
  LIGHTEN_REQUIRE_CORPUS(files, "hwp");
  size_t shapes = 0, fills = 0;
  for (const auto& path : files) {
    SCOPED_TRACE(path.filename().string());
    const Bytes in = testing::read_file(path);
    std::optional<cfb::CompoundFile> file;
    std::optional<hwp::FileHeader> header;
    try {
      file = cfb::CompoundFile::parse(in);
      header = hwp::read_file_header(*file);
      hwp::refuse_protected(*header, *file);
    } catch (const FormatError&) {
      continue;  // broken and protected documents: other tests
    }
    const Bytes doc_info = hwp::doc_info_records(*file, *header, 64u << 20);
    const size_t declared = hwp::bin_data_items(doc_info).size();
    // The corpus's fills hold no gradient beside an image: each reads as a fill type.
    auto expect_readable = [&](const std::vector<hwp::FillLook>& looks) {
      for (const hwp::FillLook& fill : looks) {
        ++fills;
        EXPECT_FALSE(fill.unread);
        if (fill.unread) continue;
        EXPECT_GE(fill.look.bin_item, 1u);
        EXPECT_LE(fill.look.bin_item, declared);
        EXPECT_LE(fill.look.effect, 3) << int(fill.look.effect);
        EXPECT_LE(std::abs(int(fill.look.brightness)), 100);
        EXPECT_LE(std::abs(int(fill.look.contrast)), 100);
      }
    };
    expect_readable(hwp::border_fill_looks(doc_info));
    for (const std::string& stream : file->stream_paths()) {
      if (!stream.starts_with("BodyText/Section")) continue;
      const Bytes raw = *file->read_stream(stream);
      const Bytes section = header->compressed() ? content_of(raw) : raw;
      expect_readable(hwp::shape_fill_looks(section));
      for (const hwp::PictureLook& look : hwp::picture_looks(section)) {
        ++shapes;
        EXPECT_GE(look.bin_item, 1u);
        EXPECT_LE(look.bin_item, declared);
        EXPECT_LE(look.effect, 3) << int(look.effect);
        EXPECT_LE(std::abs(int(look.brightness)), 100);
        EXPECT_LE(std::abs(int(look.contrast)), 100);
      }
    }
  }
  EXPECT_GT(shapes, 0u);
  std::printf("%zu picture shapes, %zu image fills\n", shapes, fills);
}

}  // namespace
}  // namespace lighten
