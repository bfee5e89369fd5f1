// The engine's promises, independent of any one format: reasons, never larger, verification,
// budgets for nested items.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <vector>

#include "engine/engine_context.h"
#include "lighten/lighten.h"
#include "support/jpeg_maker.h"
#include "support/recording_gate.h"
#include "support/zip_maker.h"

namespace lighten {
namespace {

TEST(Engine, EmptyInputIsKeptWithAReason) {
  const Outcome o = optimize({}, Policy{});
  EXPECT_EQ(o.action, Action::kKept);
  EXPECT_EQ(o.reason, Reason::kEmpty);
  EXPECT_FALSE(o.message.empty());
}

TEST(Engine, UnknownKindsAreReportedAsUnsupported) {
  const std::string text = "just some text, not an image";
  const Outcome o =
      optimize({reinterpret_cast<const uint8_t*>(text.data()), text.size()}, Policy{});
  EXPECT_EQ(o.reason, Reason::kUnsupportedKind);
  EXPECT_EQ(o.bytes_out, o.bytes_in);
  EXPECT_TRUE(o.bytes.empty());
}

TEST(Engine, PerceptualModesMeetTheirFloor) {
  Policy p;
  p.mode = Mode::kHigh;
  const auto jpeg = testing::make_jpeg({.width = 320, .height = 240, .quality = 97});
  const Outcome o = optimize(jpeg, p);
  EXPECT_EQ(o.kind, Kind::kJpeg);
  ASSERT_EQ(o.action, Action::kReplaced) << reason_name(o.reason) << ": " << o.message;
  ASSERT_TRUE(o.quality.ssimulacra2.has_value());
  EXPECT_GE(*o.quality.ssimulacra2, 80.0);
  EXPECT_LT(o.bytes_out, o.bytes_in);
}

TEST(Engine, TooLargeInputsAreLeftAlone) {
  Policy p;
  p.limits.max_input_bytes = 100;
  const auto jpeg = testing::make_jpeg({});
  EXPECT_EQ(optimize(jpeg, p).reason, Reason::kLimitExceeded);
}

TEST(Engine, UnoptimisedJpegShrinksAndIsVerified) {
  const auto jpeg = testing::make_jpeg({.width = 320, .height = 240, .quality = 92});
  const Outcome o = optimize(jpeg, Policy{});
  ASSERT_EQ(o.action, Action::kReplaced) << reason_name(o.reason) << ": " << o.message;
  EXPECT_EQ(o.reason, Reason::kOptimized);
  EXPECT_EQ(o.kind, Kind::kJpeg);
  EXPECT_LT(o.bytes_out, o.bytes_in);
  EXPECT_EQ(o.bytes.size(), o.bytes_out);
  EXPECT_TRUE(o.quality.pixels_identical);
  EXPECT_EQ(testing::decode_jpeg_pixels(o.bytes), testing::decode_jpeg_pixels(jpeg));
}

TEST(Engine, MinimumGainIsRespected) {
  const auto jpeg = testing::make_jpeg({.width = 320, .height = 240, .quality = 92});
  Policy p;
  p.min_gain_ratio = 0.99;  // nothing saves 99 %
  const Outcome o = optimize(jpeg, p);
  EXPECT_EQ(o.reason, Reason::kNoGain);
  EXPECT_TRUE(o.bytes.empty());
}

TEST(Engine, SecondPassFindsNothingMore) {
  const auto jpeg = testing::make_jpeg({.width = 320, .height = 240, .quality = 92});
  const Outcome first = optimize(jpeg, Policy{});
  ASSERT_TRUE(first.replaced());
  const Outcome second = optimize(first.bytes, Policy{});
  EXPECT_EQ(second.action, Action::kKept);
  EXPECT_EQ(second.reason, Reason::kNoGain);
}

TEST(Engine, TruncatedJpegIsKeptWithAReason) {
  auto jpeg = testing::make_jpeg({.width = 320, .height = 240});
  jpeg.resize(jpeg.size() / 2);
  const Outcome o = optimize(jpeg, Policy{});
  EXPECT_EQ(o.action, Action::kKept);
  EXPECT_TRUE(o.reason == Reason::kTruncated || o.reason == Reason::kCorrupt)
      << reason_name(o.reason);
  EXPECT_FALSE(o.message.empty());
}

TEST(EngineContext, NestingDeeperThanTheLimitIsRefused) {
  Policy p;
  p.limits.max_depth = 1;
  auto budget = std::make_shared<SharedBudget>();
  budget->deadline = std::chrono::steady_clock::now() + std::chrono::hours(1);
  EngineContext level1(p, 1, budget);
  const auto jpeg = testing::make_jpeg({});
  const Outcome o = level1.optimize_embedded(jpeg, "inner.jpg");
  EXPECT_EQ(o.reason, Reason::kLimitExceeded);
  EXPECT_NE(o.message.find("inner.jpg"), std::string::npos);
  EngineContext level0(p, 0, budget);
  EXPECT_NE(level0.optimize_embedded(jpeg, "inner.jpg").reason, Reason::kLimitExceeded);
}

// A budget whose deadline is an hour away.
std::shared_ptr<SharedBudget> hour_budget() {
  auto budget = std::make_shared<SharedBudget>();
  budget->deadline = std::chrono::steady_clock::now() + std::chrono::hours(1);
  return budget;
}

TEST(EngineContext, ExpansionBudgetIsSharedAcrossItems) {
  Policy p;
  const auto jpeg = testing::make_jpeg({});
  p.limits.max_expanded_bytes = jpeg.size() * 2 + 1;
  EngineContext root(p, 0, hour_budget());
  EXPECT_NE(root.optimize_embedded(jpeg, "a.jpg").reason, Reason::kLimitExceeded);
  EXPECT_NE(root.optimize_embedded(jpeg, "b.jpg").reason, Reason::kLimitExceeded);
  EXPECT_EQ(root.optimize_embedded(jpeg, "c.jpg").reason, Reason::kLimitExceeded);
}

// An item asked again (an AVI frame under a raised floor) was charged when first handed over.
TEST(EngineContext, RetriesAreNotChargedAgain) {
  Policy p;
  const auto jpeg = testing::make_jpeg({});
  p.limits.max_expanded_bytes = jpeg.size() * 2 + 1;
  EngineContext root(p, 0, hour_budget());
  EXPECT_NE(root.optimize_embedded(jpeg, "a.jpg").reason, Reason::kLimitExceeded);
  for (int i = 0; i < 3; ++i)
    EXPECT_NE(root.optimize_embedded_again(jpeg, "a.jpg", p).reason, Reason::kLimitExceeded);
  EXPECT_NE(root.optimize_embedded(jpeg, "b.jpg").reason, Reason::kLimitExceeded);
  EXPECT_EQ(root.optimize_embedded(jpeg, "c.jpg").reason, Reason::kLimitExceeded);
  // Once the budget is spent, a retry is refused too.
  EXPECT_EQ(root.optimize_embedded_again(jpeg, "a.jpg", p).reason, Reason::kLimitExceeded);
}

// Checking an item inside a file past the deadline is the budget's verdict on the whole file:
// it reached the container as a failed check ("verify-failed ... please report") where a file of
// its own says limit-exceeded.
TEST(EngineContext, AnItemsCheckPastTheDeadlineIsTheBudgetsVerdict) {
  Policy p;
  const auto jpeg = testing::make_jpeg({.width = 640, .height = 480, .quality = 95});
  const Outcome o = optimize(jpeg, p);
  ASSERT_TRUE(o.replaced()) << o.message;
  EXPECT_TRUE(EngineContext(p, 0, hour_budget()).verify_embedded_under(jpeg, o.bytes, p).ok);
  auto spent = std::make_shared<SharedBudget>();
  spent->deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  EngineContext late(p, 0, spent);
  try {
    const Verdict v = late.verify_embedded_under(jpeg, o.bytes, p);
    ADD_FAILURE() << "the check went on past the deadline: " << v.ok << " " << v.problem;
  } catch (const FormatError& e) {
    EXPECT_EQ(e.reason(), Reason::kLimitExceeded) << e.what();
  }
}

TEST(EngineContext, DeadlineIsVisibleToOptimisers) {
  Policy p;
  auto budget = std::make_shared<SharedBudget>();
  budget->deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  EngineContext ctx(p, 0, budget);
  EXPECT_TRUE(ctx.out_of_time());
}

// A document's picture is told to the caller's gate before it is optimised and again before it
// is checked (either may decode it); its XML parts, which no optimiser takes, and the document
// itself, which the caller priced, are not.
TEST(Engine, ItemsInsideFilesAreToldToTheMemoryGate) {
  const auto jpeg = testing::make_jpeg({.width = 320, .height = 240, .quality = 92});
  const auto docx = testing::make_zip(
      {{.name = "[Content_Types].xml", .content = testing::text_bytes("<Types/>")},
       {.name = "word/document.xml", .content = testing::text_bytes("<w:document/>")},
       {.name = "word/media/image1.jpeg", .content = jpeg, .deflate = false}});
  ASSERT_EQ(sniff(docx), Kind::kDocx);
  testing::RecordingGate gate;
  const Outcome o = optimize(docx, Policy{}, gate);
  ASSERT_EQ(o.action, Action::kReplaced) << reason_name(o.reason) << ": " << o.message;
  EXPECT_EQ(gate.items, (std::vector<Kind>{Kind::kJpeg, Kind::kJpeg}));
  EXPECT_EQ(gate.held, 0u);
  // A file on its own is the caller's to price.
  testing::RecordingGate alone;
  EXPECT_EQ(optimize(jpeg, Policy{}, alone).action, Action::kReplaced);
  EXPECT_TRUE(alone.items.empty());
}

TEST(Describe, SaysWhatAJpegIs) {
  const auto jpeg = testing::make_jpeg({.width = 64, .height = 48});
  const FileInfo info = describe(jpeg);
  EXPECT_EQ(info.kind, Kind::kJpeg);
  EXPECT_TRUE(info.supported);
  EXPECT_TRUE(info.problem.empty()) << info.problem;
  bool has_width = false;
  for (const auto& [name, value] : info.properties)
    if (name == "width") has_width = value == "64";
  EXPECT_TRUE(has_width);
}

}  // namespace
}  // namespace lighten
