// Every frame layout that cameras, scanners and editors write goes through each perceptual mode
// and keeps the promises of perceptual_checks.h: the sampling factors of 4:4:4, 4:2:2, 4:4:0,
// 4:2:0, 4:1:1 and 4:1:0 and odd ones (3x1, 1x4, 3x2), grey, CMYK and YCCK, RGB-coded, progressive
// and with restart intervals, at a size that leaves partial MCUs on both edges.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "perceptual_checks.h"
#include "test_support.h"

namespace lighten::jpeg {
namespace {

struct FrameCase {
  std::string name;
  testing::EncodeOptions options;
};

std::vector<FrameCase> frame_cases() {
  auto frame = [](int components, int h, int v) {
    testing::EncodeOptions o;
    o.width = 97;
    o.height = 61;
    o.quality = 98;
    o.components = components;
    o.luma_sampling = h;
    o.luma_v_sampling = v;
    return o;
  };
  std::vector<FrameCase> cases;
  cases.push_back({"grey", frame(1, 1, 1)});
  cases.push_back({"grey progressive", frame(1, 1, 1)});
  cases.back().options.progressive = true;
  for (auto [h, v] :
       {std::pair{1, 1}, {2, 1}, {1, 2}, {2, 2}, {4, 1}, {4, 2}, {3, 1}, {1, 4}, {3, 2}}) {
    cases.push_back({"luma " + std::to_string(h) + "x" + std::to_string(v), frame(3, h, v)});
  }
  cases.push_back({"4:2:0 progressive, restarts every 2 MCUs", frame(3, 2, 2)});
  cases.back().options.progressive = true;
  cases.back().options.restart_interval = 2;
  cases.push_back({"4:1:1 restarts every MCU", frame(3, 4, 1)});
  cases.back().options.restart_interval = 1;
  cases.push_back({"CMYK", frame(4, 1, 1)});
  cases.push_back({"YCCK 2x2", frame(4, 2, 2)});
  cases.back().options.color_space = JCS_YCCK;
  cases.push_back({"RGB-coded", frame(3, 1, 1)});
  cases.back().options.color_space = JCS_RGB;
  return cases;
}

TEST(PerceptualLayouts, EveryFrameLayoutKeepsThePromisesInEachMode) {
  for (const FrameCase& c : frame_cases()) {
    const Bytes jpeg = testing::make_jpeg(c.options);
    ASSERT_FALSE(jpeg.empty()) << c.name;
    bool compact_requantised = false;
    for (Mode mode : {Mode::kVisuallyLossless, Mode::kHigh, Mode::kCompact}) {
      Policy policy;
      policy.mode = mode;
      bool requantised = false;
      check_perceptual(jpeg, policy, c.name + ", mode " + std::to_string(int(mode)), &requantised);
      if (mode == Mode::kCompact) compact_requantised = requantised;
    }
    // From quality 98 compact finds tables coarse enough to tell for every layout: the checks
    // above then held for a lossy output, not only for a file left as it was. (From 95, this
    // small sharp pattern ends at tables mostly the source's in six layouts, written losslessly
    // since a re-run without the marker could not tell them.)
    EXPECT_TRUE(compact_requantised) << c.name;
  }
}

}  // namespace
}  // namespace lighten::jpeg
