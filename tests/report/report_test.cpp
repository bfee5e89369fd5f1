// The report's aggregates, the journal reader, the CSV and the page's self-containment.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <sstream>

#include "batch/journal.h"
#include "lighten/report.h"

namespace fs = std::filesystem;

namespace lighten {
namespace {

ReportFile optimised(std::string_view path, uint64_t before, uint64_t after, double ms = 1,
                     std::optional<double> score = std::nullopt) {
  return {.path = path,
          .kind = Kind::kJpeg,
          .action = Action::kReplaced,
          .reason = Reason::kOptimized,
          .message = {},
          .bytes_before = before,
          .bytes_after = after,
          .ms = ms,
          .ssimulacra2 = score};
}

ReportFile kept(std::string_view path, Reason reason, uint64_t size, std::string_view message) {
  return {.path = path,
          .kind = Kind::kPdf,
          .action = Action::kKept,
          .reason = reason,
          .message = message,
          .bytes_before = size,
          .bytes_after = size,
          .ms = 2,
          .ssimulacra2 = std::nullopt};
}

TEST(ReportAggregator, TotalsKindsReasonsAndHistogram) {
  ReportAggregator a;
  a.add(optimised("/a.jpg", 1000, 900));  // 10 % saved: bin 5
  a.add(optimised("/b.jpg", 1000, 10));   // 99 %: the last bin
  a.add(kept("/c.pdf", Reason::kEncrypted, 500, "needs a password"));
  a.add(kept("/d.pdf", Reason::kEncrypted, 700, "needs a password"));
  const ReportSummary s = a.finish();
  EXPECT_EQ(s.total.files, 4u);
  EXPECT_EQ(s.total.optimized, 2u);
  EXPECT_EQ(s.total.bytes_before, 3200u);
  EXPECT_EQ(s.total.bytes_after, 2110u);
  EXPECT_EQ(s.kinds.at(Kind::kJpeg).files, 2u);
  EXPECT_EQ(s.kinds.at(Kind::kPdf).bytes_before, 1200u);
  ASSERT_EQ(s.left_alone.size(), 1u);
  const ReportReasonGroup& encrypted = s.left_alone.at(Reason::kEncrypted);
  EXPECT_EQ(encrypted.files, 2u);
  EXPECT_EQ(encrypted.bytes, 1200u);
  ASSERT_EQ(encrypted.examples.size(), 2u);
  EXPECT_EQ(encrypted.examples[0].path, "/d.pdf");  // largest first
  EXPECT_EQ(encrypted.examples[0].message, "needs a password");
  EXPECT_EQ(s.savings_bins[5], 1u);
  EXPECT_EQ(s.savings_bins[kSavingsBins - 1], 1u);
  EXPECT_EQ(std::accumulate(s.savings_bins.begin(), s.savings_bins.end(), uint64_t{0}), 2u);
}

TEST(ReportAggregator, ListsAreBoundedAndIndependentOfOrder) {
  std::vector<std::string> paths;
  for (int i = 0; i < 500; ++i) paths.push_back("/tree/f" + std::to_string(i) + ".jpg");
  auto build = [&](std::vector<size_t> order) {
    ReportAggregator a({.examples_per_reason = 3, .slowest = 5, .scatter_points = 20});
    for (size_t i : order) {
      if (i % 2)
        a.add(optimised(paths[i], 1000 + i, 500, double(i % 97), 80.0 + double(i % 10)));
      else
        a.add(kept(paths[i], Reason::kNoGain, 100 + i, "already tight"));
    }
    return a.finish();
  };
  std::vector<size_t> order(paths.size());
  std::iota(order.begin(), order.end(), 0);
  const ReportSummary forward = build(order);
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  const ReportSummary shuffled = build(order);

  EXPECT_EQ(forward.left_alone.at(Reason::kNoGain).examples.size(), 3u);
  EXPECT_EQ(forward.left_alone.at(Reason::kNoGain).examples[0].path, "/tree/f498.jpg");
  ASSERT_EQ(forward.slowest.size(), 5u);
  EXPECT_EQ(forward.slowest[0].ms, 96);
  EXPECT_TRUE(std::is_sorted(forward.slowest.begin(), forward.slowest.end(),
                             [](const auto& a, const auto& b) { return a.ms > b.ms; }));
  ASSERT_EQ(forward.scatter.size(), 20u);
  EXPECT_EQ(forward.total.scored, 250u);
  for (size_t i = 0; i < forward.scatter.size(); ++i)
    EXPECT_EQ(forward.scatter[i].path, shuffled.scatter[i].path);
  for (size_t i = 0; i < forward.slowest.size(); ++i)
    EXPECT_EQ(forward.slowest[i].path, shuffled.slowest[i].path);
  EXPECT_EQ(forward.total.score_min, 81.0);  // odd i only: i % 10 is at least 1
}

// Documents and videos: the engine appends their worst picture's or frame's score.
TEST(ReportAggregator, ADocumentsOrAVideosWorstScoreIsRead) {
  EXPECT_EQ(ssimulacra2_from_detail("1 jpeg, 1 png optimised; worst SSIMULACRA2 80.06"), 80.06);
  EXPECT_EQ(ssimulacra2_from_detail("12 of 12 MJPEG frames optimised, 12 images requantised: "
                                    "SSIMULACRA2 min 80.6, mean 84.0; requantised frames as "
                                    "ffmpeg decodes them: min 80.1, mean 83.2; worst "
                                    "SSIMULACRA2 80.10"),
            80.10);
}

TEST(ReportAggregator, ScoreComesOnlyFromRequantisedDetail) {
  EXPECT_EQ(ssimulacra2_from_detail(
                "requantised q~92 -> q78.50 (Robidoux tables) with trellis, SSIMULACRA2 81.27 "
                "(worst tile 75.0, floor 80.0, 4 evaluations), huffman optimised"),
            81.27);
  EXPECT_EQ(ssimulacra2_from_detail("lossless only (no requantisation met SSIMULACRA2 85.0 in 3 "
                                    "tries), huffman optimised"),
            std::nullopt);
  EXPECT_EQ(ssimulacra2_from_detail("huffman optimised"), std::nullopt);
  EXPECT_EQ(ssimulacra2_from_detail("lossless only (requantised image data would be 45 bytes "
                                    "smaller, under 1 %: not worth the quality), huffman "
                                    "optimised, 1 of 1 secondary images (MPF) 9 bytes smaller, "
                                    "SSIMULACRA2 80.0"),
            std::nullopt);
  EXPECT_EQ(ssimulacra2_from_detail("4:2:0 searched alone (its row sample 12.0 % smaller), "
                                    "re-encoded from pixels as 4:2:0 (alone 92.4), requantised "
                                    "q~97 -> q63.50 with trellis, SSIMULACRA2 70.15 (worst tile "
                                    "66.0, floor 70.0, 2 evaluations), huffman optimised"),
            70.15);
}

class ReportJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lighten-report-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    journal_ = (dir_ / "journal.sqlite").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Two runs, one row each, recorded 10 s apart: what a resumed batch leaves.
  void write_journal() {
    batch::Journal j(journal_);
    j.begin_run("run-1", "mode=high\neffort=5\n");
    batch::JournalRow row;
    row.path = "/data/a \"quoted\", name.jpg";
    row.kind = Kind::kJpeg;
    row.action = Action::kReplaced;
    row.reason = Reason::kOptimized;
    row.detail =
        "requantised q~90 -> q80.00 (Robidoux tables) with trellis, SSIMULACRA2 82.50 "
        "(worst tile 76.0, floor 80.0, 3 evaluations)";
    row.bytes_before = 2'000'000;
    row.bytes_after = 1'000'000;
    row.ms = 1500;
    row.run_id = "run-1";
    row.done_ns = 1'700'000'010'000'000'000;
    j.record(row);
    row.path = "/data/b.pdf";
    row.kind = Kind::kPdf;
    row.action = Action::kKept;
    row.reason = Reason::kSigned;
    row.message = "signed </script> document";
    row.detail.clear();
    row.bytes_after = row.bytes_before;
    row.run_id = "run-2";
    row.done_ns = 1'700'000'100'000'000'000;
    j.record(row);
  }

  fs::path dir_;
  std::string journal_;
};

TEST(JsonReport, PathsAndMessagesThatAreNotUtf8AreWrittenWithReplacements) {
  // A Latin-1 file name, and a message naming an MP4 box type with a byte over 0x7F.
  FileResult row;
  row.path = "/data/caf\xE9.mp4";
  row.kind = Kind::kMp4;
  row.action = Action::kKept;
  row.reason = Reason::kUnsupportedVariant;
  row.message = "the moov's user data '\xA9xyz' (30 bytes) would not be carried over";
  FileResult utf8 = row;
  utf8.path = "/data/caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x93\xB7.mp4";  // é, €, a camera
  BatchSummary summary;
  const fs::path path = fs::temp_directory_path() / ("lighten_json_" + std::to_string(::getpid()));
  write_json_report(path.string(), summary, {row, utf8}, Policy{}, false);
  std::ifstream in(path);
  const nlohmann::json doc = nlohmann::json::parse(in);
  fs::remove(path);
  const std::string got = doc["files"][0]["path"];
  EXPECT_EQ(got, "/data/caf\uFFFD.mp4");
  // The name's own bytes, for a reader that must find the file.
  EXPECT_EQ(doc["files"][0]["path_bytes"], "2f646174612f636166e92e6d7034");
  EXPECT_NE(doc["files"][0]["message"].get<std::string>().find("\uFFFDxyz"), std::string::npos);
  EXPECT_EQ(doc["files"][1]["path"], utf8.path);
  EXPECT_FALSE(doc["files"][1].contains("path_bytes"));
}

TEST_F(ReportJournalTest, ReadsTotalsScoresAndRuns) {
  write_journal();
  const ReportSummary s = summarize_journal(journal_);
  EXPECT_EQ(s.source, journal_);
  EXPECT_EQ(s.total.files, 2u);
  EXPECT_EQ(s.total.optimized, 1u);
  EXPECT_EQ(s.total.bytes_before, 4'000'000u);
  EXPECT_EQ(s.total.bytes_after, 3'000'000u);
  EXPECT_EQ(s.total.scored, 1u);
  EXPECT_DOUBLE_EQ(s.total.score_min, 82.5);
  ASSERT_EQ(s.scatter.size(), 1u);
  EXPECT_EQ(s.scatter[0].bytes_saved, 1'000'000u);
  EXPECT_EQ(s.left_alone.at(Reason::kSigned).files, 1u);
  ASSERT_EQ(s.runs.size(), 2u);
  EXPECT_EQ(s.runs[0].policy.at(0), (std::pair<std::string, std::string>{"mode", "high"}));
  // Each run lasts from its first file's start to its last file: 1.5 s each, the gap between
  // them (a resumed batch) not counted.
  EXPECT_NEAR(s.wall_seconds, 3.0, 1e-3);
  // Reading a journal no run holds open leaves nothing beside it.
  EXPECT_FALSE(fs::exists(journal_ + "-wal"));
  EXPECT_FALSE(fs::exists(journal_ + "-shm"));
}

// A run's start is kept to the millisecond: to the second, a short run's time (and so its
// throughput) was off by up to a second.
TEST_F(ReportJournalTest, ARunsStartIsKeptToTheMillisecond) {
  {
    batch::Journal j(journal_);
    j.begin_run("run-1", "mode=lossless\n");
    batch::JournalRow row;
    row.path = "/data/a.jpg";
    row.run_id = "run-1";
    row.ms = 100;
    row.done_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count() +
                  300'000'000;
    j.record(row);
  }
  const ReportSummary s = summarize_journal(journal_);
  ASSERT_EQ(s.runs.size(), 1u);
  EXPECT_NE(s.runs[0].started.find('.'), std::string::npos) << s.runs[0].started;
  EXPECT_GT(s.wall_seconds, 0.29);
  EXPECT_LT(s.wall_seconds, 0.9);
}

TEST_F(ReportJournalTest, SaysWhatToDoWhenTheJournalIsWrong) {
  try {
    summarize_journal((dir_ / "missing.sqlite").string());
    FAIL() << "no error for a missing journal";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.sqlite"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--journal"), std::string::npos) << e.what();
  }
  sqlite3* db = nullptr;
  sqlite3_open((dir_ / "other.sqlite").c_str(), &db);
  sqlite3_exec(db, "CREATE TABLE t(x)", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  try {
    summarize_journal((dir_ / "other.sqlite").string());
    FAIL() << "no error for a database that is not a journal";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not a lighten journal"), std::string::npos) << e.what();
  }
}

// A journal in a folder this user cannot write, its last rows still in the write-ahead log:
// SQLite cannot read the log without the -shm file it would make there, and the rows would be
// left out without a word, so the report says so. Run as another user than root, who writes
// anywhere.
TEST_F(ReportJournalTest, RowsThatCannotBeReadFromTheLogAreNotLeftOutSilently) {
  const fs::path ro = dir_ / "archive";
  fs::create_directories(ro);
  {
    batch::Journal j(journal_);
    j.begin_run("run-1", "mode=high\n");
    batch::JournalRow row;
    row.path = "/data/a.jpg";
    row.run_id = "run-1";
    j.record(row);
    j.flush();
    ASSERT_GT(fs::file_size(journal_ + "-wal"), 0u);
    fs::copy_file(journal_, ro / "journal.sqlite");
    fs::copy_file(journal_ + "-wal", ro / "journal.sqlite-wal");
  }
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                          fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  auto says_so = [&] {
    try {
      summarize_journal((ro / "journal.sqlite").string());
      return false;
    } catch (const std::runtime_error& e) {
      return std::string(e.what()).find("write-ahead log") != std::string::npos;
    }
  };
  if (::geteuid() != 0) {
    EXPECT_TRUE(says_so());
  } else {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      const bool ok = ::setgid(65534) == 0 && ::setuid(65534) == 0 && says_so();
      ::_exit(ok ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  fs::permissions(ro, fs::perms::owner_all);
}

// A journal named with two leading slashes is the same file (SQLite's URI took "tmp" of
// "//tmp/..." for a host).
TEST_F(ReportJournalTest, AJournalPathWithTwoLeadingSlashesOpens) {
  write_journal();
  const std::string doubled = "/" + fs::absolute(journal_).string();
  EXPECT_EQ(summarize_journal(doubled).total.files, summarize_journal(journal_).total.files);
}

TEST_F(ReportJournalTest, CsvQuotesFieldsAndEndsWithATotal) {
  write_journal();
  std::ostringstream kinds, files;
  write_kinds_csv(kinds, summarize_journal(journal_));
  write_files_csv(files, journal_);
  EXPECT_EQ(kinds.str(),
            "kind,files,optimized,left_alone,bytes_before,bytes_after,bytes_saved,saved_percent,"
            "ssimulacra2_min,ssimulacra2_mean,cpu_seconds\n"
            "jpeg,1,1,0,2000000,1000000,1000000,50.00,82.50,82.50,1.500\n"
            "pdf,1,0,1,2000000,2000000,0,0.00,,,1.500\n"
            "total,2,1,1,4000000,3000000,1000000,25.00,82.50,82.50,3.000\n");
  const std::string text = files.str();
  EXPECT_NE(text.find("\"/data/a \"\"quoted\"\", name.jpg\",jpeg,optimized,optimized,2000000,"
                      "1000000,50.00,82.50,1500.0"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("/data/b.pdf,pdf,kept,signed,2000000,2000000,0.00,,1500.0,"),
            std::string::npos)
      << text;
}

TEST_F(ReportJournalTest, PageIsSelfContainedAndItsDataCannotEndTheScript) {
  write_journal();
  const std::string page = render_html_report(summarize_journal(journal_), {});
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("{{"), std::string::npos);           // every slot filled
  EXPECT_NE(page.find("Chart.js v4"), std::string::npos);  // the library is inlined
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);
  // The message "signed </script> document" must not close the data element early.
  const size_t data = page.find("id=\"report-data\">");
  ASSERT_NE(data, std::string::npos);
  const size_t end = page.find("</script>", data);
  const std::string blob = page.substr(data + 17, end - data - 17);
  EXPECT_NE(blob.find("signed \\u003c/script> document"), std::string::npos);
  const auto doc = nlohmann::json::parse(blob);
  EXPECT_EQ(doc["totals"]["files"], 2);
  EXPECT_EQ(doc["totals"]["bytes_before"], 4'000'000);
  EXPECT_EQ(doc["left_alone"][0]["reason"], "signed");
  EXPECT_FALSE(doc["left_alone"][0]["advice"].get<std::string>().empty());
}

// A run's own page under --no-journal must not promise that a second run skips finished files.
// A resumed run's own page counts the files an earlier run finished, but its time is this
// run's: no throughput is drawn from the two, as the terminal draws none.
// A run stopped before every file started (Ctrl-C, a full disk) does not end its table with
// "done": it says how many files wait for the next run.
TEST(SummaryTable, AStoppedRunSaysSoNotDone) {
  BatchSummary summary;
  summary.seconds = 6.3;
  summary.total.files = 3;
  std::ostringstream finished;
  print_summary_table(finished, summary, false);
  EXPECT_NE(finished.str().find("done in 6.3 s"), std::string::npos) << finished.str();
  summary.not_started = 43;
  std::ostringstream stopped;
  print_summary_table(stopped, summary, false);
  EXPECT_EQ(stopped.str().find("done"), std::string::npos) << stopped.str();
  EXPECT_NE(stopped.str().find("stopped after 6.3 s with 43 files not started"), std::string::npos)
      << stopped.str();
}

TEST(HtmlReport, AResumedRunShowsNoThroughput) {
  ReportAggregator a;
  for (const char* path : {"/data/a.jpg", "/data/b.jpg"})
    a.add({.path = path,
           .kind = Kind::kJpeg,
           .action = Action::kReplaced,
           .reason = Reason::kOptimized,
           .message = "",
           .bytes_before = 5'000'000,
           .bytes_after = 4'000'000,
           .ms = 800,
           .ssimulacra2 = std::nullopt});
  ReportSummary summary = a.finish();
  summary.wall_seconds = 1.0;
  auto totals = [&] {
    const std::string page = render_html_report(summary, {});
    const size_t data = page.find("id=\"report-data\">");
    const size_t end = page.find("</script>", data);
    return nlohmann::json::parse(page.substr(data + 17, end - data - 17))["totals"];
  };
  EXPECT_DOUBLE_EQ(totals()["mb_per_s"].get<double>(), 10.0);
  summary.from_earlier_runs = 1;
  EXPECT_EQ(totals()["mb_per_s"].get<double>(), 0.0);
  EXPECT_EQ(totals()["from_earlier_runs"].get<uint64_t>(), 1u);
}

TEST(HtmlReport, IoErrorAdvicePromisesSkipsOnlyWhereAJournalWasKept) {
  ReportAggregator a;
  a.add({.path = "/out/a.jpg",
         .kind = Kind::kJpeg,
         .reason = Reason::kIoError,
         .message = "write /out/a.jpg: No space left on device",
         .bytes_before = 100,
         .ms = 1,
         .ssimulacra2 = std::nullopt});
  ReportSummary summary = a.finish();
  auto advice = [&] {
    const std::string page = render_html_report(summary, {});
    const size_t data = page.find("id=\"report-data\">");
    const size_t end = page.find("</script>", data);
    const auto doc = nlohmann::json::parse(page.substr(data + 17, end - data - 17));
    return doc["left_alone"][0]["advice"].get<std::string>();
  };
  EXPECT_NE(advice().find("finished files are skipped"), std::string::npos) << advice();
  summary.journaled = false;
  EXPECT_EQ(advice().find("skipped"), std::string::npos) << advice();
  EXPECT_NE(advice().find("run again"), std::string::npos) << advice();
}

// The page's time per sample adds open, read, decode and wait, each over every sample: decode
// was the decoded images' mean, which a data set of one photo among nine PDFs showed as 17 ms a
// sample where the loader spent 1.7.
TEST_F(ReportJournalTest, ProbeDecodeTimeIsPerSample) {
  write_journal();
  const auto tree = [](bool per_sample_field) {
    nlohmann::json t = {
        {"path", "/data"},
        {"sample_files", 10},
        {"sample_bytes", 1000},
        {"storage", {{"open_ms", {{"mean", 0.1}}}, {"read_ms", {{"mean", 0.2}}}}},
        {"decode", {{"jpeg-baseline", {{"ms", {{"sum", 17.0}, {"count", 1}}}}}}},
        {"loader", {{"samples_per_s", 500.0}, {"consumer_wait", 0.5}, {"bound", "decode"}}}};
    if (per_sample_field) t["decode_ms_per_sample"] = 1.9;  // a failed decode's time too
    return t;
  };
  for (const bool per_sample_field : {true, false}) {
    const nlohmann::json probe = {{"schema", "lighten-probe/1"},
                                  {"options",
                                   {{"workers", 1},
                                    {"batch", 1},
                                    {"step_ms", 0},
                                    {"bandwidth_bytes_per_s", 0},
                                    {"latency_ms", 0},
                                    {"cold", false}}},
                                  {"trees", {{"original", tree(per_sample_field)}}}};
    std::ofstream(dir_ / "probe.json") << probe.dump();
    const std::string page =
        render_html_report(summarize_journal(journal_), {(dir_ / "probe.json").string()});
    const size_t data = page.find("id=\"report-data\">");
    const size_t end = page.find("</script>", data);
    const auto doc = nlohmann::json::parse(page.substr(data + 17, end - data - 17));
    EXPECT_DOUBLE_EQ(doc["probes"][0]["original"]["decode_ms"].get<double>(),
                     per_sample_field ? 1.9 : 1.7);
  }
}

TEST_F(ReportJournalTest, ABadProbeFileIsNamedWithWhatToPass) {
  write_journal();
  std::ofstream(dir_ / "probe.json") << "{\"schema\": \"something-else\"}";
  try {
    render_html_report(summarize_journal(journal_), {(dir_ / "probe.json").string()});
    FAIL() << "no error for a file that is not a probe report";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("probe.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("lighten probe"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lighten
