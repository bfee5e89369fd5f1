#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "core/policy_names.h"
#include "lighten/options.h"

namespace lighten {
namespace {

TEST(Options, EveryOptionHasHelpAndAValidDefault) {
  std::set<std::string_view> names;
  for (const OptionSpec& spec : policy_options()) {
    EXPECT_TRUE(names.insert(spec.name).second) << "declared twice: " << spec.name;
    EXPECT_FALSE(spec.help.empty()) << spec.name;
    Policy p;
    EXPECT_NO_THROW(set_policy_option(p, spec.name, spec.default_value)) << spec.name;
    // The default written in the table is the default of a fresh Policy.
    Policy fresh;
    EXPECT_EQ(get_policy_option(p, spec.name), get_policy_option(fresh, spec.name)) << spec.name;
  }
}

TEST(Options, ValuesRoundTrip) {
  Policy p;
  set_policy_option(p, "jpeg-scans", "smallest");
  set_policy_option(p, "metadata", "strip");
  set_policy_option(p, "effort", "9");
  set_policy_option(p, "max-input-size", "64M");
  EXPECT_EQ(p.jpeg_scans, ScanMode::kSmallest);
  EXPECT_EQ(p.metadata, MetadataPolicy::kStrip);
  EXPECT_EQ(p.effort, 9);
  EXPECT_EQ(p.limits.max_input_bytes, 64ull << 20);
  EXPECT_EQ(get_policy_option(p, "jpeg-scans"), "smallest");
}

TEST(Options, FlagsAreNoOrYes) {
  Policy p;
  EXPECT_FALSE(p.repair);
  set_policy_option(p, "repair", "yes");
  set_policy_option(p, "png-reduce", "yes");
  set_policy_option(p, "pdf-version", "raise");
  set_policy_option(p, "video-codec", "h264");
  EXPECT_TRUE(p.repair);
  EXPECT_TRUE(p.png_reduce);
  EXPECT_EQ(p.pdf_version, PdfVersionPolicy::kRaise);
  EXPECT_EQ(p.video_codec, VideoCodecPolicy::kH264);
  EXPECT_EQ(get_policy_option(p, "repair"), "yes");
  set_policy_option(p, "repair", "no");
  EXPECT_FALSE(p.repair);
  EXPECT_THROW(set_policy_option(p, "repair", "maybe"), OptionError);
  for (const OptionSpec& spec : policy_options()) {
    if (spec.type == OptionType::kFlag) {
      EXPECT_EQ(spec.choices, (std::vector<std::string_view>{"no", "yes"})) << spec.name;
    }
  }
}

TEST(Options, BadValuesSayWhatIsAllowed) {
  Policy p;
  try {
    set_policy_option(p, "jpeg-scans", "fastest");
    FAIL();
  } catch (const OptionError& e) {
    EXPECT_NE(std::string(e.what()).find("keep, baseline, progressive, smallest"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(set_policy_option(p, "effort", "0"), OptionError);
  EXPECT_THROW(set_policy_option(p, "effort", "5x"), OptionError);
  EXPECT_THROW(set_policy_option(p, "min-gain-bytes", "lots"), OptionError);
  EXPECT_THROW(set_policy_option(p, "no-such-option", "1"), OptionError);
}

TEST(Options, PerceptualModesAndTargetScore) {
  Policy p;
  set_policy_option(p, "mode", "high");
  EXPECT_EQ(p.mode, Mode::kHigh);
  EXPECT_DOUBLE_EQ(quality_floor(p), 80.0);
  set_policy_option(p, "target-score", "77.5");
  EXPECT_DOUBLE_EQ(quality_floor(p), 77.5);
  EXPECT_EQ(get_policy_option(p, "target-score"), "77.5");
  EXPECT_THROW(set_policy_option(p, "target-score", "101"), OptionError);
  try {
    set_policy_option(p, "target-score", "-3");
    ADD_FAILURE() << "-3 was taken";
  } catch (const OptionError& e) {
    EXPECT_NE(std::string(e.what()).find("must be between 0 and 100"), std::string::npos)
        << e.what();
  }
  set_policy_option(p, "quality-marker", "omit");
  EXPECT_EQ(p.quality_marker, QualityMarker::kOmit);
  set_policy_option(p, "mode", "lossless");
  EXPECT_TRUE(std::isnan(quality_floor(p)));
}

// Details print a floor with one decimal unless it has more: a custom floor is never rounded
// into another (99.99 printed as "100.0" read as a floor no output can meet).
TEST(Options, FloorsArePrintedAsGiven) {
  EXPECT_EQ(floor_text(70.0), "70.0");
  EXPECT_EQ(floor_text(77.5), "77.5");
  EXPECT_EQ(floor_text(85.25), "85.25");
  EXPECT_EQ(floor_text(99.99), "99.99");
  Policy p;
  set_policy_option(p, "mode", "high");
  set_policy_option(p, "target-score", "99.995");
  EXPECT_EQ(floor_text(quality_floor(p)), "99.995");
}

TEST(Options, SizesTakeSuffixes) {
  EXPECT_EQ(parse_size("memory-budget", "4096"), 4096u);
  EXPECT_EQ(parse_size("memory-budget", "512k"), 512u << 10);
  EXPECT_EQ(parse_size("memory-budget", "2G"), 2ull << 30);
  EXPECT_THROW(parse_size("memory-budget", ""), OptionError);
  EXPECT_THROW(parse_size("memory-budget", "G"), OptionError);
  // The message names the flag given and, for a size out of range, the range.
  try {
    parse_size("memory-budget", "4X");
    ADD_FAILURE() << "4X parsed";
  } catch (const OptionError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--memory-budget 4X: expected a size", 0), 0u)
        << e.what();
  }
  Policy p;
  try {
    set_policy_option(p, "max-input-size", "0");
    ADD_FAILURE() << "0 parsed";
  } catch (const OptionError& e) {
    EXPECT_EQ(std::string(e.what()), "--max-input-size 0: must be between 1 and 1024T");
  }
}

TEST(Options, WorthKeeping) {
  Policy p;
  p.min_gain_bytes = 16;
  p.min_gain_ratio = 0.01;
  EXPECT_FALSE(worth_keeping(1000, 1000, p));
  EXPECT_FALSE(worth_keeping(1000, 1001, p));
  EXPECT_FALSE(worth_keeping(1000, 995, p));  // 5 bytes < 16
  EXPECT_TRUE(worth_keeping(1000, 980, p));
  EXPECT_FALSE(worth_keeping(100000, 99000 + 10, p));  // under 1 %
}

}  // namespace
}  // namespace lighten
