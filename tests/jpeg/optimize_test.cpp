#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "formats/jpeg/coefficients.h"
#include "formats/jpeg/jpeg_format.h"
#include "formats/jpeg/markers.h"
#include "formats/jpeg/restarts.h"
#include "test_support.h"

namespace lighten::jpeg {
namespace {

using testing::decode;
using testing::EncodeOptions;
using testing::make_jpeg;
using testing::TestContext;

const ScanMode kModes[] = {ScanMode::kKeep, ScanMode::kBaseline, ScanMode::kProgressive,
                           ScanMode::kSmallest};

void expect_same_pixels(const Bytes& a, const Bytes& b) {
  auto x = decode(a);
  auto y = decode(b);
  ASSERT_TRUE(x.ok && y.ok);
  EXPECT_EQ(y.warnings, 0);
  EXPECT_EQ(x.width, y.width);
  EXPECT_EQ(x.height, y.height);
  EXPECT_EQ(x.components, y.components);
  EXPECT_TRUE(x.samples == y.samples);
}

TEST(JpegOptimize, EveryModeKeepsPixels) {
  for (int components : {1, 3, 4})
    for (bool progressive : {false, true})
      for (ScanMode mode : kModes) {
        SCOPED_TRACE(std::to_string(components) + (progressive ? " progressive " : " ") +
                     std::to_string(int(mode)));
        EncodeOptions o;
        o.components = components;
        o.progressive = progressive;
        Bytes in = make_jpeg(o);
        Policy p;
        p.jpeg_scans = mode;
        p.verify = VerifyLevel::kPixels;
        TestContext context(p);
        Outcome out = optimize_jpeg(in, context);
        ASSERT_TRUE(out.replaced());
        EXPECT_EQ(out.kind, Kind::kJpeg);
        EXPECT_FALSE(out.detail.empty());
        expect_same_pixels(in, out.bytes);
        Verdict v = verify_jpeg(in, out.bytes, p);
        EXPECT_TRUE(v.ok) << v.problem;
        EXPECT_TRUE(v.quality.pixels_identical);
        uint8_t sof = parse_layout(out.bytes).frame.marker;
        if (mode == ScanMode::kBaseline || (mode == ScanMode::kKeep && !progressive)) {
          EXPECT_EQ(sof, 0xC0);
        }
        if (mode == ScanMode::kProgressive || (mode == ScanMode::kKeep && progressive)) {
          EXPECT_EQ(sof, 0xC2);
        }
      }
}

bool has_dri(const Bytes& jpeg) {
  for (const Segment& s : parse_layout(jpeg).segments)
    if (s.marker == kDri) return true;
  return false;
}

TEST(JpegOptimize, RestartIntervalKeptOrDropped) {
  EncodeOptions o;
  o.restart_interval = 2;
  Bytes in = make_jpeg(o);
  ASSERT_TRUE(has_dri(in));
  Policy p;
  TestContext keep(p);
  EXPECT_TRUE(has_dri(optimize_jpeg(in, keep).bytes));
  p.jpeg_restarts = RestartPolicy::kDrop;
  TestContext drop(p);
  Outcome out = optimize_jpeg(in, drop);
  EXPECT_FALSE(has_dri(out.bytes));
  expect_same_pixels(in, out.bytes);
}

// libjpeg writes one restart interval for every scan. An input whose scans restart at different
// intervals (cjpeg -restart N gives each progressive scan its own) would have them changed:
// with keep it is left as it is, with the reason; drop writes it without restarts, and says so.
TEST(JpegOptimize, ScansRestartingAtDifferentIntervalsAreKeptUnderKeep) {
  EncodeOptions o;
  o.width = 160;
  o.height = 96;
  o.progressive = true;
  o.restart_in_rows = 1;
  const Bytes in = make_jpeg(o);
  const std::vector<unsigned> intervals = scan_restart_intervals(parse_layout(in));
  ASSERT_GT(intervals.size(), 1u);
  ASSERT_NE(std::adjacent_find(intervals.begin(), intervals.end(), std::not_equal_to<>()),
            intervals.end());
  Policy p;
  TestContext keep(p);
  try {
    optimize_jpeg(in, keep);
    ADD_FAILURE() << "rewritten with one interval for every scan";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.reason(), Reason::kUnsupportedVariant);
    EXPECT_NE(std::string(e.what()).find("restart at different intervals"), std::string::npos)
        << e.what();
  }
  p.jpeg_restarts = RestartPolicy::kDrop;
  TestContext drop(p);
  const Outcome out = optimize_jpeg(in, drop);
  ASSERT_TRUE(out.replaced()) << out.message;
  EXPECT_FALSE(has_dri(out.bytes));
  EXPECT_NE(out.detail.find("restarts dropped"), std::string::npos) << out.detail;
  expect_same_pixels(in, out.bytes);
  // One interval for every scan is kept as it was.
  o.restart_in_rows = 0;
  o.restart_interval = 3;
  const Bytes constant = make_jpeg(o);
  TestContext keep_constant(Policy{});
  EXPECT_TRUE(has_dri(optimize_jpeg(constant, keep_constant).bytes));
}

// A progressive writing of a baseline input with restarts: each scan restarts as often, in its
// own component's blocks, as the input did, and the file still decodes to the same pixels.
TEST(JpegOptimize, ProgressiveScansKeepTheInputsRestartDensity) {
  EncodeOptions o;
  o.width = 160;
  o.height = 96;
  o.restart_interval = 2;
  Bytes in = make_jpeg(o);
  CoefficientImage image(in, nullptr);
  ASSERT_EQ(image.info().comp_info[0].h_samp_factor * image.info().comp_info[0].v_samp_factor, 4);
  std::vector<jpeg_scan_info> script;
  jpeg_scan_info dc{};
  dc.comps_in_scan = 3;
  for (int c = 0; c < 3; ++c) dc.component_index[c] = c;
  script.push_back(dc);
  for (int c = 0; c < 3; ++c) {
    jpeg_scan_info ac{};
    ac.comps_in_scan = 1;
    ac.component_index[0] = c;
    ac.Ss = 1;
    ac.Se = 63;
    script.push_back(ac);
  }
  EXPECT_EQ(matched_restart_interval(image.info(), script[0], 2), 2u);
  EXPECT_EQ(matched_restart_interval(image.info(), script[1], 2), 8u);
  EXPECT_EQ(matched_restart_interval(image.info(), script[2], 2), 2u);
  WriteOptions w;
  w.scans = WriteOptions::Scans::kScript;
  w.script = script;
  w.restart_interval = 2;
  const Bytes uniform = write_coefficients(image, w);
  const auto matched = write_with_matched_restarts(image, script, 2, uniform);
  ASSERT_TRUE(matched.has_value());
  EXPECT_LT(matched->size(), uniform.size());
  expect_same_pixels(in, *matched);
  std::vector<unsigned> intervals;
  for (const Segment& s : parse_layout(*matched).segments)
    if (s.marker == kDri) intervals.push_back(unsigned(s.payload[0] << 8 | s.payload[1]));
  EXPECT_EQ(intervals, (std::vector<unsigned>{2, 8, 2}));
  Policy p;
  EXPECT_TRUE(verify_jpeg(uniform, *matched, p).ok);  // both without metadata
  // A grayscale image restarts per block in every scan already: nothing to match.
  o.components = 1;
  Bytes gray = make_jpeg(o);
  CoefficientImage g(gray, nullptr);
  jpeg_scan_info only{};
  only.comps_in_scan = 1;
  EXPECT_EQ(matched_restart_interval(g.info(), only, 2), 2u);
}

// A progressive output that keeps a restarting input's density restarts at different intervals
// scan by scan (2, 8, 2): a run with the default `--jpeg-restarts keep` refused lighten's own file
// as "its scans restart at different intervals". And `smallest` weighed that density for
// baseline inputs only: a progressive input with restarts came out baseline, and a second run
// made it progressive and smaller.
TEST(JpegOptimize, FilesThatKeepARestartDensityAreReadAgain) {
  EncodeOptions o;
  o.width = 160;
  o.height = 96;
  o.restart_interval = 2;
  // Written progressive, a baseline input's density is kept scan by scan; a default run reads
  // that file (it threw unsupported-variant) and finds nothing to gain.
  Policy progressive;
  progressive.jpeg_scans = ScanMode::kProgressive;
  TestContext write_progressive(progressive);
  const Outcome dense = optimize_jpeg(make_jpeg(o), write_progressive);
  ASSERT_TRUE(dense.replaced()) << dense.message;
  EXPECT_NE(dense.detail.find("restart density of the input"), std::string::npos) << dense.detail;
  std::vector<unsigned> intervals;
  for (const Segment& s : parse_layout(dense.bytes).segments)
    if (s.marker == kDri) intervals.push_back(unsigned(s.payload[0] << 8 | s.payload[1]));
  EXPECT_GT(intervals.size(), 1u);
  for (const Policy& policy : {Policy{}, progressive}) {
    TestContext again(policy);
    const Outcome o2 = optimize_jpeg(dense.bytes, again);  // throws when refused
    EXPECT_FALSE(o2.replaced() && o2.bytes.size() < dense.bytes.size()) << o2.detail;
  }
  // `smallest`, from a baseline and from a progressive input: a second run gains nothing.
  for (const bool progressive_input : {false, true}) {
    o.progressive = progressive_input;
    Policy smallest;
    smallest.jpeg_scans = ScanMode::kSmallest;
    TestContext first(smallest);
    const Outcome once = optimize_jpeg(make_jpeg(o), first);
    ASSERT_TRUE(once.replaced()) << once.message;
    TestContext again(smallest);
    const Outcome twice = optimize_jpeg(once.bytes, again);
    EXPECT_FALSE(twice.replaced() && twice.bytes.size() < once.bytes.size())
        << progressive_input << ": " << once.detail << ", then " << twice.detail;
  }
}

TEST(JpegOptimize, LimitsAndDamage) {
  Bytes in = make_jpeg({});
  Policy p;
  p.limits.max_pixels = 100;
  TestContext small(p);
  try {
    optimize_jpeg(in, small);
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_EQ(e.reason(), Reason::kLimitExceeded);
  }
  // Damage inside the entropy-coded data: libjpeg warns; the file must be left alone.
  Layout l = parse_layout(in);
  const Segment* sos = nullptr;
  for (const Segment& s : l.segments)
    if (s.marker == kSos) sos = &s;
  ASSERT_NE(sos, nullptr);
  Bytes damaged = in;
  damaged.erase(damaged.begin() + long(sos->end() + 10),
                damaged.begin() + long(sos->entropy_end - 20));
  TestContext context;
  try {
    optimize_jpeg(damaged, context);
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_TRUE(e.reason() == Reason::kCorrupt || e.reason() == Reason::kTruncated) << e.what();
    // How far libjpeg had read when it found the damage (it commits its position MCU by MCU):
    // within the coded data, not at the file's start.
    EXPECT_GE(e.offset(), sos->end()) << e.what();
    EXPECT_LE(e.offset(), damaged.size()) << e.what();
  }
}

// Data after the scan's last block: a damaged scan leaves some (the decoder lost its place and
// read garbage up to the EOI), and that file is left alone; zeros or a stray byte before the
// EOI are padding some encoders write, and the image is optimised.
TEST(JpegOptimize, DataAfterTheLastBlockIsDamageUnlessPadding) {
  const Bytes in = make_jpeg({});
  const Layout l = parse_layout(in);
  const Segment* sos = nullptr;
  for (const Segment& s : l.segments)
    if (s.marker == kSos) sos = &s;
  ASSERT_NE(sos, nullptr);
  auto with_before_eoi = [&](size_t n, uint8_t value) {
    Bytes out(in.size() + n, value);
    std::copy(in.begin(), in.begin() + long(sos->entropy_end), out.begin());
    std::copy(in.begin() + long(sos->entropy_end), in.end(),
              out.begin() + long(sos->entropy_end + n));
    return out;
  };
  for (const auto& [n, value] : {std::pair<size_t, uint8_t>{40, 0x00}, {40, 0xFF}, {1, 0x5A}}) {
    TestContext context;
    const Outcome o = optimize_jpeg(with_before_eoi(n, value), context);
    EXPECT_TRUE(o.replaced()) << n << " x " << int(value) << ": " << o.message;
  }
  TestContext context;
  try {
    optimize_jpeg(with_before_eoi(40, 0x5A), context);
    FAIL() << "data after the last block was taken for padding";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.reason(), Reason::kCorrupt) << e.what();
    EXPECT_NE(std::string(e.what()).find("more data than its blocks hold"), std::string::npos)
        << e.what();
  }
}

TEST(JpegOptimize, IncompleteProgressionIsLeftAlone) {
  // libjpeg smooths the missing AC coefficients of such a file while decoding; a complete
  // re-encoding would decode differently, so the file is refused.
  EncodeOptions o;
  o.dc_only = true;
  Bytes in = make_jpeg(o);
  ASSERT_FALSE(in.empty());
  TestContext context;
  try {
    optimize_jpeg(in, context);
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_EQ(e.reason(), Reason::kUnsupportedVariant) << e.what();
  }
}

// A frame whose MCU holds more than 10 blocks (luma sampled 4x4: 18) cannot be interleaved: its
// writer gave each component a scan of its own, and so does lighten in every scan mode (the
// baseline and simple progressive writings were refused as variants libjpeg cannot write).
TEST(JpegOptimize, FramesTooLargeToInterleaveAreWrittenAComponentAScan) {
  EncodeOptions o;
  o.width = 64;
  o.height = 48;
  o.luma_sampling = 4;
  o.scan_per_component = true;
  const Bytes in = make_jpeg(o);
  ASSERT_FALSE(in.empty());
  for (const ScanMode scans : {ScanMode::kKeep, ScanMode::kProgressive, ScanMode::kSmallest}) {
    Policy p;
    p.jpeg_scans = scans;
    TestContext context(p);
    const Outcome out = optimize_jpeg(in, context);
    ASSERT_TRUE(out.replaced()) << out.message;
    EXPECT_TRUE(verify_jpeg(in, out.bytes, p).ok);
    expect_same_pixels(in, out.bytes);
  }
}

TEST(JpegOptimize, SmallestIsNoLargerThanBaselineOrSimpleProgression) {
  EncodeOptions o;
  o.width = 300;
  o.height = 200;
  Bytes in = make_jpeg(o);
  auto size_for = [&](ScanMode mode, int effort) {
    Policy p;
    p.jpeg_scans = mode;
    p.effort = effort;
    TestContext context(p);
    return optimize_jpeg(in, context).bytes.size();
  };
  const size_t smallest = size_for(ScanMode::kSmallest, 5);
  EXPECT_LE(smallest, size_for(ScanMode::kBaseline, 5));
  // The estimate may pick a script a few bytes off the simple one on tiny images.
  EXPECT_LE(smallest, size_for(ScanMode::kProgressive, 1) + 64);
  for (int effort = 1; effort <= 9; ++effort)
    EXPECT_LE(size_for(ScanMode::kSmallest, effort), size_for(ScanMode::kBaseline, 5)) << effort;
}

TEST(JpegOptimize, VerifyCatchesDifferences) {
  EncodeOptions a;
  Bytes in = make_jpeg(a);
  a.quality = 80;
  Bytes other = make_jpeg(a);
  Policy p;
  EXPECT_FALSE(verify_jpeg(in, other, p).ok);
  TestContext context;
  Bytes out = optimize_jpeg(in, context).bytes;
  Bytes with_tail = out;
  with_tail.push_back(0);
  EXPECT_FALSE(verify_jpeg(in, with_tail, p).ok);
  EXPECT_FALSE(verify_jpeg(in, Bytes(out.begin(), out.end() - 10), p).ok);
}

// The verifier's decodes keep to the time budget, and running out is the budget's verdict (the
// engine says limit-exceeded), not a fault of the output.
TEST(JpegOptimize, VerificationKeepsToTheTimeBudget) {
  class Spent : public TestContext {
   public:
    bool out_of_time() const override { return true; }
  };
  EncodeOptions o;
  o.width = 640;
  o.height = 480;
  const Bytes in = make_jpeg(o);
  TestContext context;
  const Bytes out = optimize_jpeg(in, context).bytes;
  ASSERT_FALSE(out.empty());
  Spent spent;
  try {
    const Verdict v = verify_jpeg(in, out, Policy{}, std::nullopt, std::nullopt, &spent);
    ADD_FAILURE() << "verified out of time: " << v.ok << " " << v.problem;
  } catch (const FormatError& e) {
    EXPECT_EQ(e.reason(), Reason::kLimitExceeded) << e.what();
  }
}

TEST(JpegOptimize, Describes) {
  EncodeOptions o;
  o.restart_interval = 3;
  o.markers = {{JPEG_COM, "x"}};
  Bytes in = make_jpeg(o);
  in.insert(in.end(), {1, 2, 3});
  FileInfo info;
  describe_jpeg(in, info);
  auto get = [&](const std::string& name) {
    for (const auto& [k, v] : info.properties)
      if (k == name) return v;
    return std::string("<none>");
  };
  EXPECT_EQ(get("width"), "67");
  EXPECT_EQ(get("subsampling"), "4:2:0");
  EXPECT_EQ(get("coding"), "baseline");
  EXPECT_EQ(get("colour space"), "YCbCr");
  EXPECT_EQ(get("estimated quality"), "q90");
  EXPECT_EQ(get("restart interval"), "3 MCUs");
  EXPECT_EQ(get("bytes after EOI"), "3");
  EXPECT_EQ(get("ICC profile data space"), "<none>");

  std::string profile(128, '\0');
  profile.replace(16, 4, "Lab ");
  o.markers = {{JPEG_APP0 + 2, std::string("ICC_PROFILE\0\x01\x01", 14) + profile}};
  info = FileInfo{};
  describe_jpeg(make_jpeg(o), info);
  EXPECT_EQ(get("ICC profile data space"), "'Lab '");
}

// The verifier's shortcut: with the input's fingerprint it decodes only the output, and it still
// rejects every output whose coefficients, tables or frame differ from the input's.
TEST(JpegOptimize, FingerprintShortcutStillCatchesDifferences) {
  EncodeOptions a;
  a.components = 3;
  Bytes in = make_jpeg(a);
  a.quality = 80;
  Bytes other_quality = make_jpeg(a);
  Bytes other_pixels;  // the same frame and tables, one coefficient changed
  {
    CoefficientImage image(in, nullptr);
    image.mutable_block_row(0, 2)[3][5] += 1;
    other_pixels = write_coefficients(image, WriteOptions{});
  }
  Policy p;
  DecodedFingerprint fp;
  {
    CoefficientImage image(in, nullptr);
    fp = fingerprint_coefficients(image);
  }
  TestContext context(p);
  Bytes out = optimize_jpeg(in, context).bytes;
  ASSERT_FALSE(out.empty());
  EXPECT_TRUE(verify_jpeg(in, out, p, fp).ok);
  EXPECT_FALSE(verify_jpeg(in, other_quality, p, fp).ok);
  EXPECT_FALSE(verify_jpeg(in, other_pixels, p, fp).ok);
  // A wrong fingerprint never passes an output by itself: the full comparison decides.
  const DecodedFingerprint wrong{fp[0] ^ 1, fp[1]};
  EXPECT_TRUE(verify_jpeg(in, out, p, wrong).ok);
  EXPECT_FALSE(verify_jpeg(in, other_pixels, p, wrong).ok);
  // Equal images give equal fingerprints, whatever their entropy coding.
  CoefficientImage again(out, nullptr);
  EXPECT_EQ(fingerprint_coefficients(again), fp);
}

}  // namespace
}  // namespace lighten::jpeg
