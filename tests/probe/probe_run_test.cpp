// run_probe end to end on small generated trees, the JSON, and the command line.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "lighten/options.h"
#include "lighten/probe.h"
#include "probe/measure.h"
#include "support/corpus.h"
#include "support/jpeg_maker.h"
#include "support/png_maker.h"

namespace fs = std::filesystem;

namespace lighten {
namespace {

using testing::JpegRecipe;
using testing::make_jpeg;
using testing::write_file;

class ProbeRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lighten-probe-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "orig" / "sub");
    fs::create_directories(dir_ / "opt" / "sub");
    for (int i = 0; i < 6; ++i) {
      JpegRecipe r{.width = 320, .height = 240, .quality = 95, .progressive = i % 3 == 0};
      // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on chained operator+.
      std::string name = "p";
      name.append(std::to_string(i)).append(".jpg");
      write_file(dir_ / "orig" / "sub" / name, make_jpeg(r));
      r.quality = 70;
      r.progressive = false;
      write_file(dir_ / "opt" / "sub" / name, make_jpeg(r));
    }
    write_file(dir_ / "orig" / "a.png", testing::make_png({}));
    write_file(dir_ / "orig" / "notes.txt", {'h', 'i', '\n'});
  }
  void TearDown() override { fs::remove_all(dir_); }

  ProbeOptions options() const {
    ProbeOptions o;
    o.path = (dir_ / "orig").string();
    o.workers = 2;
    o.batch = 2;
    o.passes = 2;
    return o;
  }

  fs::path dir_;
};

TEST_F(ProbeRun, MeasuresEveryStageOfOneTree) {
  const ProbeReport r = run_probe(options());
  const TreeProbe& t = r.original;
  EXPECT_EQ(t.inventory.files, 8u);
  EXPECT_EQ(t.inventory.by_kind.at(Kind::kJpeg).files, 6u);
  EXPECT_EQ(t.inventory.by_kind.at(Kind::kPng).files, 1u);
  EXPECT_EQ(t.inventory.by_kind.at(Kind::kUnknown).files, 1u);
  EXPECT_EQ(t.sample_files, 8u);
  EXPECT_EQ(t.inventory.jpeg.files, 6u);
  EXPECT_EQ(t.inventory.jpeg.progressive, 2u);
  EXPECT_EQ(t.inventory.jpeg.subsampling.at("4:2:0"), 6u);
  EXPECT_NEAR(t.inventory.jpeg.quality.p50, 95, 1);
  EXPECT_EQ(t.decode.at("jpeg-baseline").files, 4u);
  EXPECT_EQ(t.decode.at("jpeg-progressive").files, 2u);
  EXPECT_EQ(t.decode.at("png").files, 1u);
  EXPECT_GT(t.decode.at("jpeg-baseline").mp_per_s, 0);
  EXPECT_NEAR(t.decode.at("jpeg-baseline").megapixels, 4 * 0.0768, 1e-9);
  double decoded_ms = 0;  // every sample decodes here, but notes.txt (no image: no time)
  for (const auto& [label, f] : t.decode) decoded_ms += f.ms.sum;
  EXPECT_NEAR(t.decode_ms_per_sample, decoded_ms / 8, 1e-9);
  EXPECT_EQ(t.storage.open_ms.count, 8u);
  EXPECT_GT(t.storage.parallel_mbps, 0);
  EXPECT_GT(t.loader.samples_per_s, 0);
  EXPECT_FALSE(t.loader.bound.empty());
  EXPECT_GT(t.pass_seconds, 0);
  EXPECT_FALSE(r.recommendations.empty());
}

// Pillow-style (four bytes a colour pixel, row by row) and direct (packed RGB) decodes see the
// same images; only their cost differs, which a unit test cannot pin down.
TEST(ProbeDecode, BothStylesDecodeGreyColourAndPng) {
  const std::vector<std::vector<uint8_t>> files = {
      make_jpeg({.width = 97, .height = 31, .components = 1}),
      make_jpeg({.width = 97, .height = 31, .components = 3, .progressive = true}),
      testing::make_png({})};
  for (const auto& bytes : files) {
    const Kind kind = sniff(bytes);
    const probe::DecodeTiming pil = probe::decode_image(kind, bytes, DecoderStyle::kPil);
    const probe::DecodeTiming direct = probe::decode_image(kind, bytes, DecoderStyle::kDirect);
    ASSERT_TRUE(pil.ok) << pil.error;
    ASSERT_TRUE(direct.ok) << direct.error;
    EXPECT_EQ(pil.pixels, direct.pixels);
    EXPECT_EQ(pil.label, direct.label);
    EXPECT_GT(pil.pixels, 0u);
  }
}

// A header may claim any size: an image over the limit fails before its pixels are held, as
// Pillow's DecompressionBombError fails it in a loader.
TEST(ProbeDecode, ImagesOverThePixelLimitFailBeforeTheirPixelsAreHeld) {
  std::vector<uint8_t> jpeg = make_jpeg({.width = 16, .height = 16});
  for (size_t i = 0; i + 9 < jpeg.size(); ++i)
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xC0) {
      jpeg[i + 5] = jpeg[i + 7] = 0x4E, jpeg[i + 6] = jpeg[i + 8] = 0x20;  // 20000 x 20000
      break;
    }
  const probe::DecodeTiming bomb = probe::decode_image(Kind::kJpeg, jpeg, DecoderStyle::kPil);
  EXPECT_FALSE(bomb.ok);
  EXPECT_NE(bomb.error.find("400000000 pixels"), std::string::npos) << bomb.error;
  const std::vector<uint8_t> png = testing::make_png({});
  const probe::DecodeTiming small =
      probe::decode_image(Kind::kPng, png, DecoderStyle::kDirect, /*max_pixels=*/10);
  EXPECT_FALSE(small.ok);
  EXPECT_NE(small.error.find("--max-pixels 10"), std::string::npos) << small.error;
  EXPECT_TRUE(probe::decode_image(Kind::kPng, png, DecoderStyle::kDirect).ok);
}

// Pillow raises "image file is truncated" where the JPEG data ends early; so does the probe.
TEST(ProbeDecode, AJpegThatEndsEarlyIsAFailedDecode) {
  const std::vector<uint8_t> whole = make_jpeg({.width = 160, .height = 120, .quality = 95});
  const std::vector<uint8_t> cut(whole.begin(), whole.begin() + long(whole.size() * 2 / 3));
  for (const DecoderStyle style : {DecoderStyle::kPil, DecoderStyle::kDirect}) {
    EXPECT_TRUE(probe::decode_image(Kind::kJpeg, whole, style).ok);
    const probe::DecodeTiming d = probe::decode_image(Kind::kJpeg, cut, style);
    EXPECT_FALSE(d.ok);
    EXPECT_NE(d.error.find("ends early"), std::string::npos) << d.error;
  }
}

// Every byte is read (and counted), but only images the probe decodes are held whole: W readers
// of a tree of videos hold W chunks.
TEST_F(ProbeRun, ReadersHoldWholeFilesOnlyForImagesTheyDecode) {
  std::vector<uint8_t> video(3 * probe::TimedReader::kChunk + 17, 7);
  std::vector<uint8_t> jpeg = make_jpeg({.width = 64, .height = 64});
  jpeg.resize(2 * probe::TimedReader::kChunk, 0);  // zero bytes after the image
  write_file(dir_ / "big.bin", video);
  write_file(dir_ / "big.jpg", jpeg);
  probe::SteadyClock clock;
  probe::TimedReader reader(nullptr, 0, clock);
  std::vector<uint8_t> bytes;
  const probe::ReadTiming v = reader.read((dir_ / "big.bin").string(), bytes);
  ASSERT_TRUE(v.ok) << v.error;
  EXPECT_EQ(v.bytes, video.size());
  EXPECT_FALSE(v.whole);
  EXPECT_EQ(bytes.size(), probe::TimedReader::kChunk);
  const probe::ReadTiming j = reader.read((dir_ / "big.jpg").string(), bytes);
  ASSERT_TRUE(j.ok) << j.error;
  EXPECT_TRUE(j.whole);
  EXPECT_EQ(bytes, jpeg);
}

TEST_F(ProbeRun, RefusesMoreSamplesARoundThanTheModelTakes) {
  ProbeOptions o = options();
  o.workers = 1024;
  o.batch = 65536;
  EXPECT_THROW(run_probe(o), OptionError);
}

TEST_F(ProbeRun, EmulatedLinkAndLatencySlowReadsDown) {
  ProbeOptions o = options();
  o.latency_ms = 5;
  EXPECT_GE(run_probe(o).original.storage.open_ms.min, 5.0);
  // Without the delay between files the bucket has no time to refill between reads.
  o.latency_ms = 0;
  o.bandwidth = 200e3;  // 200 kB/s: the 10 ms burst (2 kB) is small against each file
  const ProbeReport r = run_probe(o);
  const TreeProbe& t = r.original;
  // One stream finds the link as it is: what refilled while a file decoded is not its to spend.
  EXPECT_LE(t.storage.single_stream_mbps, 0.2 * 1.01);
  EXPECT_GT(t.storage.single_stream_mbps, 0.2 * 0.7);
  EXPECT_LT(t.storage.parallel_mbps, 0.2 * 1.1);
  EXPECT_LE(t.loader.mb_per_s, 0.2 * 1.1);
}

TEST_F(ProbeRun, ColdEitherEvictsOrSaysWhyNot) {
  ProbeOptions o = options();
  o.cold = true;
  const ProbeReport r = run_probe(o);
  EXPECT_TRUE(r.original.storage.cold);
  if (!r.original.storage.cold_problem.empty()) {
    ASSERT_FALSE(r.warnings.empty());
    EXPECT_NE(r.warnings.front().find("page cache"), std::string::npos) << r.warnings.front();
  }
}

TEST_F(ProbeRun, UnreadableFilesAreCountedAndNamed) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads files whatever their mode";
  fs::permissions(dir_ / "orig" / "a.png", fs::perms::none);
  const ProbeReport r = run_probe(options());
  EXPECT_EQ(r.original.storage.read_failures, 1u);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings.front().find("a.png"), std::string::npos) << r.warnings.front();
}

TEST_F(ProbeRun, ComparesTheSameFilesByRelativePath) {
  ProbeOptions o = options();
  o.compare_path = (dir_ / "opt").string();
  const ProbeReport r = run_probe(o);
  ASSERT_TRUE(r.optimised.has_value());
  EXPECT_EQ(r.matched_files, 6u);  // only the JPEGs exist in both
  EXPECT_EQ(r.original.sample_files, 6u);
  EXPECT_EQ(r.optimised->sample_files, 6u);
  EXPECT_LT(r.optimised->sample_bytes, r.original.sample_bytes);
  EXPECT_EQ(r.optimised->inventory.jpeg.progressive, 0u);
  bool mentions = false;
  for (const auto& s : r.recommendations) mentions |= s.find("fewer bytes") != std::string::npos;
  EXPECT_TRUE(mentions);

  const auto doc = nlohmann::json::parse(probe_report_json(r));
  EXPECT_EQ(doc["schema"], "lighten-probe/1");
  EXPECT_EQ(doc["trees"]["optimised"]["sample_files"], 6);
  EXPECT_TRUE(doc["trees"]["original"]["loader"]["samples_per_s"].get<double>() > 0);
  EXPECT_EQ(doc["trees"]["original"]["decode"]["jpeg-progressive"]["files"], 2);
  EXPECT_EQ(doc["options"]["decoder"], "pil");
  // The original holds a PNG and a text the copy lacks: the report says so.
  bool partial = false;
  for (const auto& w : r.warnings) partial |= w.find("only 6 files are in both trees") == 0;
  EXPECT_TRUE(partial);
}

// `lighten optimize DATA -o DATA/light` is allowed, so the copy inside the original is no part of
// it (it doubled the original's files and bytes); entries the walk passed over are said.
TEST_F(ProbeRun, ACopyInsideTheOriginalIsNotCountedAndSkippedEntriesAreSaid) {
  fs::rename(dir_ / "opt", dir_ / "orig" / "light");
  fs::create_symlink("a.png", dir_ / "orig" / "link.png");
  ProbeOptions o = options();
  o.compare_path = (dir_ / "orig" / "light").string();
  const ProbeReport r = run_probe(o);
  EXPECT_EQ(r.original.inventory.files, 8u);  // six JPEGs, the PNG and the text
  bool skipped = false;
  for (const auto& w : r.warnings)
    skipped |= w.find("entries were not walked") != std::string::npos;
  EXPECT_TRUE(skipped);
}

TEST_F(ProbeRun, NoMatchingFilesIsAClearError) {
  fs::create_directories(dir_ / "other");
  write_file(dir_ / "other" / "x.jpg", make_jpeg({}));
  ProbeOptions o = options();
  o.compare_path = (dir_ / "other").string();
  try {
    run_probe(o);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("relative path"), std::string::npos) << e.what();
  }
}

TEST(ProbeBandwidth, ParsesBitsAndBytes) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("1gbit"), 125e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth("200mbit"), 25e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth("200Mbit/s"), 25e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth("50MB/s"), 50e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1.5GB/s"), 1.5e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("10gbps"), 1.25e9);
  EXPECT_THROW(parse_bandwidth("fast"), OptionError);
  EXPECT_THROW(parse_bandwidth("100"), OptionError);
  EXPECT_THROW(parse_bandwidth("-5mbit"), OptionError);
  EXPECT_THROW(parse_bandwidth("5 parsecs"), OptionError);
  EXPECT_THROW(parse_bandwidth("nangbit"), OptionError);
  EXPECT_THROW(parse_bandwidth("infMB/s"), OptionError);
  EXPECT_THROW(parse_bandwidth("1e306tbit"), OptionError);
  EXPECT_THROW(parse_bandwidth("1e-6bit"), OptionError);  // a read would sleep for days
  EXPECT_THROW(parse_bandwidth("1e-300gbit"), OptionError);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1kbit"), 125);
  EXPECT_EQ(format_bandwidth(125e6), "1 Gbit/s");
  EXPECT_EQ(format_bandwidth(25e6), "200 Mbit/s");
}

std::pair<int, std::string> run_cli(const std::string& args) {
  const std::string command = std::string(LIGHTEN_CLI) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string output;
  std::array<char, 4096> buffer{};
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) output.append(buffer.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

TEST_F(ProbeRun, CommandLinePrintsTheTableAndWritesJson) {
  const fs::path json = dir_ / "probe.json";
  auto [status, out] = run_cli("probe -q --workers 2 --batch 2 --bandwidth 100mbit --latency 1 " +
                               (dir_ / "orig").string() + " --compare " + (dir_ / "opt").string() +
                               " --json " + json.string());
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("loader model"), std::string::npos) << out;
  EXPECT_NE(out.find("optimised"), std::string::npos) << out;
  EXPECT_NE(out.find("100 Mbit/s"), std::string::npos) << out;
  const auto doc = nlohmann::json::parse(testing::read_file(json));
  EXPECT_DOUBLE_EQ(doc["options"]["bandwidth_bytes_per_s"].get<double>(), 12.5e6);

  // --json -: the JSON alone on standard output (the table goes to standard error).
  {
    const std::string command = std::string(LIGHTEN_CLI) + " probe -q --workers 2 --batch 2 " +
                                (dir_ / "orig").string() + " --json - 2>/dev/null";
    FILE* pipe = popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string text;
    std::array<char, 4096> buffer{};
    for (size_t n; (n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0;)
      text.append(buffer.data(), n);
    EXPECT_EQ(pclose(pipe), 0);
    EXPECT_EQ(nlohmann::json::parse(text)["schema"], "lighten-probe/1");
    EXPECT_FALSE(fs::exists("-"));
  }

  std::tie(status, out) = run_cli("probe --bandwidth quick " + (dir_ / "orig").string());
  EXPECT_EQ(status, 2);
  EXPECT_NE(out.find("200mbit"), std::string::npos) << out;

  std::tie(status, out) = run_cli("probe " + (dir_ / "missing").string());
  EXPECT_EQ(status, 2) << out;

  // Ranges let NaN through; the model then printed "samples/s nan".
  for (const char* flag : {"--step-ms", "--latency"}) {
    std::tie(status, out) = run_cli("probe -q " + (dir_ / "orig").string() + " " + flag + " nan");
    EXPECT_EQ(status, 2) << flag << ": " << out;
  }
}

// Names that repeat in a period (a picture and its label, side by side in the walk): evenly
// spaced picks lined up with the period and sampled only the pictures (100 of 600 files, all
// JPEGs); one pick drawn within each run of the walk takes both kinds.
TEST_F(ProbeRun, ASampleOfNamesThatRepeatInAPeriodTakesEveryKind) {
  const fs::path pairs = dir_ / "pairs";
  fs::create_directories(pairs);
  const std::vector<uint8_t> jpeg = make_jpeg(JpegRecipe{.width = 16, .height = 16});
  for (int i = 0; i < 60; ++i) {
    std::string name = "img";
    name.append(std::to_string(100 + i));
    write_file(pairs / (name + ".jpg"), jpeg);
    write_file(pairs / (name + ".txt"), {'c', 'a', 't'});
  }
  ProbeOptions o = options();
  o.path = pairs.string();
  o.sample = 20;
  const ProbeReport report = run_probe(o);
  EXPECT_EQ(report.original.sample_files, 20u);
  uint64_t jpegs = 0;
  for (const auto& [kind, figures] : report.original.decode)
    if (kind.starts_with("jpeg")) jpegs += figures.files;
  EXPECT_GT(jpegs, 4u);
  EXPECT_LT(jpegs, 16u);
}

}  // namespace
}  // namespace lighten
