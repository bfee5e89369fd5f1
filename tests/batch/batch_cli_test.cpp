// End-to-end tests: the `lighten` binary as a subprocess, killed, starved and repeated.
#include <sqlite3.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <random>
#include <thread>

#include "batch/test_support.h"
#include "lighten/batch.h"

namespace lighten::testing {
namespace {

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cli_available()) GTEST_SKIP() << "CLI not built at " << cli_path();
    if (corpus_files("jpeg").empty()) GTEST_SKIP() << "shared corpus not found at " << shared_dir();
    ::setenv("XDG_STATE_HOME", (dir_ / "state").c_str(), 1);
    log_ = (dir_ / "cli.log").string();
  }
  void TearDown() override {
    if (HasFailure() && fs::exists(log_)) {
      std::ifstream in(log_);
      std::cout << "---- CLI output ----\n" << in.rdbuf() << "\n--------------------\n";
    }
  }
  int lighten(const std::vector<std::string>& args, const std::string& prefix = "",
              int as_uid = -1) {
    std::vector<std::string> full = {"optimize"};
    full.insert(full.end(), args.begin(), args.end());
    return run_cli(full, prefix, log_, as_uid);
  }
  fs::path corpus(const std::string& name) { return shared_dir() / "corpus" / "jpeg" / name; }
  TempDir dir_;
  std::string log_;
};

int64_t rows_written_after(const std::string& journal, int64_t since_ns) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(journal.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  int64_t n = -1;
  if (sqlite3_prepare_v2(db, "SELECT count(*) FROM files WHERE done_ns > ?1", -1, &s, nullptr) ==
      SQLITE_OK) {
    sqlite3_bind_int64(s, 1, since_ns);
    if (sqlite3_step(s) == SQLITE_ROW) n = sqlite3_column_int64(s, 0);
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return n;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// kill -9 at random moments: every file stays the original or a pixel-identical output.
TEST_F(Cli, SurvivesKillNineAtAnyMoment) {
  auto files = crash_corpus(4);
  auto tree = dir_ / "photos";
  copy_into(files, tree);
  auto originals = snapshot(tree);
  auto journal = (dir_ / "journal.sqlite").string();
  std::vector<std::string> args = {tree.string(), "--in-place", "--jobs",
                                   "2",           "--journal",  journal};

  // How long a whole run takes here, so that the kills land inside one.
  auto calibration = dir_ / "calibration";
  copy_into(files, calibration);
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(lighten({calibration.string(), "--in-place", "--jobs", "2", "--journal",
                     (dir_ / "calibration.sqlite").string()}),
            0);
  int full_ms =
      int(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  fs::remove_all(calibration);

  uint32_t seed = uint32_t(std::random_device{}());
  if (const char* fixed = std::getenv("LIGHTEN_CRASH_SEED")) seed = uint32_t(std::stoul(fixed));
  std::cout << "[ seed ] LIGHTEN_CRASH_SEED=" << seed << " (a full run takes " << full_ms
            << " ms)\n";
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> delay_ms(10, std::max(20, full_ms * 4 / 5));
  int killed = 0;
  for (int round = 0; round < 8; ++round) {
    int delay = delay_ms(random);
    std::vector<std::string> argv = {"optimize"};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_t pid = start_cli(argv, "", log_);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    ::kill(pid, SIGKILL);
    int rc = wait_cli(pid);
    std::cout << "[ kill ] round " << round << ": SIGKILL after " << delay << " ms, "
              << (rc == 128 + SIGKILL ? "killed" : "had finished, rc " + std::to_string(rc))
              << "\n";
    for (const auto& [name, bytes] : originals) {
      auto path = tree / name;
      ASSERT_TRUE(fs::exists(path)) << name << " vanished after round " << round;
      EXPECT_TRUE(same_or_equivalent(bytes, read_file(path))) << name << ", round " << round;
    }
    if (rc == 128 + SIGKILL) {
      ++killed;
    } else {  // nothing left to interrupt: start over from the originals
      EXPECT_EQ(rc, 0);
      fs::remove_all(tree);
      copy_into(files, tree);
      fs::remove(journal);
    }
  }
  EXPECT_GT(killed, 0) << "no kill landed inside a run";
  ASSERT_EQ(lighten(args), 0);
  EXPECT_FALSE(has_temp_files(tree));
  auto final_state = snapshot(tree);
  EXPECT_EQ(final_state.size(), originals.size());
  size_t changed = 0;
  for (const auto& [name, bytes] : originals) {
    EXPECT_TRUE(same_or_equivalent(bytes, final_state[name])) << name;
    changed += final_state[name] != bytes;
  }
  std::cout << "[ done ] " << changed << " of " << originals.size() << " files replaced, " << killed
            << " runs killed\n";
}

std::string text_of(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Ctrl-C: the files running finish, none starts after them, the journal keeps the finished
// ones (rows are otherwise committed a second apart), and the exit status says SIGINT; the same
// command then goes on where it stopped.
TEST_F(Cli, InterruptFinishesTheRunningFilesAndTheNextRunGoesOn) {
  auto tree = dir_ / "photos";
  auto photos = crash_corpus(0);
  photos.resize(std::min<size_t>(photos.size(), 4));
  copy_into(photos, tree);
  const auto journal = (dir_ / "journal.sqlite").string();
  const fs::path json = dir_ / "run.json", page = dir_ / "run.html";
  const std::vector<std::string> args = {"optimize",    tree.string(),
                                         "-o",          (dir_ / "out").string(),
                                         "--jobs",      "1",
                                         "-v",          "--mode",
                                         "compact",     "--journal",
                                         journal,       "--report",
                                         json.string(), "--report-html",
                                         page.string()};
  const pid_t pid = start_cli(args, "", log_);
  // A line per file with -v: interrupt once the first is done (the handler is in place then).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  auto log_text = [&] {
    std::ifstream in(log_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  while (log_text().find(" -> ") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ::kill(pid, SIGINT);
  ASSERT_EQ(wait_cli(pid), 128 + SIGINT);
  EXPECT_NE(log_text().find("interrupted;"), std::string::npos);
  const int64_t finished = rows_written_after(journal, 0);
  EXPECT_GE(finished, 1);
  EXPECT_LT(finished, int64_t(snapshot(tree).size()));
  // The run's reports say it stopped, and how many files it did not start.
  const std::string not_started = std::to_string(int64_t(snapshot(tree).size()) - finished);
  const std::string report = text_of(json);
  EXPECT_NE(report.find("\"stopped_because\": \"interrupted\""), std::string::npos) << report;
  EXPECT_NE(report.find("\"not_started\": " + not_started), std::string::npos) << report;
  EXPECT_NE(text_of(page).find(
                "\"stopped\":{\"because\":\"interrupted\",\"not_started\":" + not_started + "}"),
            std::string::npos);
  ASSERT_EQ(run_cli({"optimize", tree.string(), "-o", (dir_ / "out").string(), "--jobs", "2",
                     "--mode", "compact", "--journal", journal},
                    "", log_),
            0);
  EXPECT_NE(log_text().find(std::to_string(finished) + (finished == 1 ? " file" : " files") +
                            " already done by an earlier run"),
            std::string::npos);
  EXPECT_EQ(snapshot(dir_ / "out").size(), snapshot(tree).size());
}

// A file lighten may not replace, and a write cut by `ulimit -f`: reasons, exit 1, originals kept.
TEST_F(Cli, UnwritableAndFileSizeLimitEndAsIoErrors) {
  auto tree = dir_ / "tree";
  copy_into({corpus("testorig.jpg"), corpus("gray.jpg")}, tree / "ro");
  copy_into({corpus("iptc.jpg")}, tree / "rw");
  auto before = snapshot(tree);
  // Root ignores permission bits, so the directory is made immutable instead.
  std::string ro = (tree / "ro").string();
  if (std::system(("chattr +i '" + ro + "' 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "chattr +i not available: as root, no read-only directory can be made";
  auto report = (dir_ / "report.json").string();
  int rc = lighten({tree.string(), "--in-place", "--journal", (dir_ / "j1.sqlite").string(),
                    "--report", report});
  std::system(("chattr -i '" + ro + "'").c_str());
  EXPECT_EQ(rc, 1);
  auto after = snapshot(tree);
  EXPECT_EQ(after["ro/testorig.jpg"], before["ro/testorig.jpg"]);
  EXPECT_EQ(after["ro/gray.jpg"], before["ro/gray.jpg"]);
  EXPECT_TRUE(same_or_equivalent(before["rw/iptc.jpg"], after["rw/iptc.jpg"]));
  EXPECT_FALSE(has_temp_files(tree));
  auto rows = read_journal((dir_ / "j1.sqlite").string(), "");
  int io_errors = 0;
  for (const auto& r : rows)
    if (r.reason == Reason::kIoError) {
      ++io_errors;
      EXPECT_NE(r.message.find("ro/"), std::string::npos) << r.message;
    }
  EXPECT_EQ(io_errors, 2);
  if (fs::exists(report)) {  // the report names the failed files
    std::ifstream in(report);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("testorig.jpg"), std::string::npos);
  }

  // ulimit -f: 2048 blocks is 1 MiB (dash) or 2 MiB (bash); these outputs are larger.
  auto big = dir_ / "big";
  copy_into({corpus("iphone6plus.jpg"), corpus("galaxy_s7.jpg"), corpus("testorig.jpg")}, big);
  auto big_before = snapshot(big);
  rc = lighten({big.string(), "--in-place", "--journal", (dir_ / "j2.sqlite").string()},
               "ulimit -f 2048");
  EXPECT_EQ(rc, 1);
  auto big_after = snapshot(big);
  EXPECT_EQ(big_after["iphone6plus.jpg"], big_before["iphone6plus.jpg"]);
  EXPECT_EQ(big_after["galaxy_s7.jpg"], big_before["galaxy_s7.jpg"]);
  EXPECT_TRUE(same_or_equivalent(big_before["testorig.jpg"], big_after["testorig.jpg"]));
  EXPECT_FALSE(has_temp_files(big));
  for (const auto& r : read_journal((dir_ / "j2.sqlite").string(), ""))
    if (r.path.find("testorig") == std::string::npos) {
      EXPECT_EQ(r.reason, Reason::kIoError) << r.path << ": " << r.message;
    }
}

// Permission bits as an ordinary user sees them: root ignores them, so the CLI runs as nobody.
TEST_F(Cli, ReadOnlyDirectoryForAnOrdinaryUser) {
  constexpr int kNobody = 65534;
  int as_uid = ::geteuid() == 0 ? kNobody : -1;
  auto tree = dir_ / "tree";
  copy_into({corpus("testorig.jpg"), corpus("gray.jpg")}, tree / "ro");
  copy_into({corpus("iptc.jpg")}, tree / "rw");
  auto journal_dir = dir_ / "journal";
  fs::create_directories(journal_dir);
  if (as_uid >= 0) {
    for (const auto& e : fs::recursive_directory_iterator(dir_.path()))
      if (::chown(e.path().c_str(), kNobody, kNobody) != 0) GTEST_SKIP() << "chown failed";
    ::chmod(dir_.path().c_str(), 0755);
  }
  fs::permissions(tree / "ro", fs::perms::owner_read | fs::perms::owner_exec |
                                   fs::perms::group_read | fs::perms::group_exec |
                                   fs::perms::others_read | fs::perms::others_exec);
  auto before = snapshot(tree);
  int rc = lighten({tree.string(), "--in-place", "--journal", (journal_dir / "j.sqlite").string()},
                   "", as_uid);
  fs::permissions(tree / "ro", fs::perms::owner_all, fs::perm_options::add);
  if (rc == 126) GTEST_SKIP() << "cannot switch to uid " << kNobody;
  EXPECT_EQ(rc, 1);
  auto after = snapshot(tree);
  EXPECT_EQ(after["ro/testorig.jpg"], before["ro/testorig.jpg"]);
  EXPECT_EQ(after["ro/gray.jpg"], before["ro/gray.jpg"]);
  EXPECT_TRUE(same_or_equivalent(before["rw/iptc.jpg"], after["rw/iptc.jpg"]));
  EXPECT_NE(after["rw/iptc.jpg"], before["rw/iptc.jpg"]) << "the writable file was not optimised";
  int io_errors = 0;
  for (const auto& r : read_journal((journal_dir / "j.sqlite").string(), ""))
    if (r.reason == Reason::kIoError) {
      ++io_errors;
      EXPECT_NE(r.message.find("Permission denied"), std::string::npos) << r.message;
    }
  EXPECT_EQ(io_errors, 2);
}

// A journal in a folder its reader may not write (an archive, another user's run): SQLite reads
// a WAL database through a -shm file beside it, so `report` reads such a journal as it lies.
TEST_F(Cli, ReportReadsAJournalInAReadOnlyFolder) {
  constexpr int kNobody = 65534;
  const int as_uid = ::geteuid() == 0 ? kNobody : -1;
  copy_into({corpus("testorig.jpg"), corpus("gray.jpg")}, dir_ / "in");
  const fs::path folder = dir_ / "journal";
  fs::create_directories(folder);
  const std::string journal = (folder / "j.sqlite").string();
  ASSERT_EQ(lighten({(dir_ / "in").string(), "-o", (dir_ / "out").string(), "--journal", journal}),
            0);
  ::chmod(dir_.path().c_str(), 0755);
  ::chmod(journal.c_str(), 0644);
  ::chmod(folder.c_str(), 0555);
  const int rc = run_cli({"report", journal, "--csv", "-"}, "", log_, as_uid);
  ::chmod(folder.c_str(), 0755);
  if (rc == 126) GTEST_SKIP() << "cannot switch to uid " << kNobody;
  EXPECT_EQ(rc, 0);
  std::ifstream in(log_);
  const std::string log((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(log.find("lighten report: 2 files"), std::string::npos);
  EXPECT_EQ(std::distance(fs::directory_iterator(folder), fs::directory_iterator()), 1);
}

TEST_F(Cli, SecondRunChangesNoByte) {
  auto tree = dir_ / "tree";
  copy_into(
      {corpus("testorig.jpg"), corpus("gray.jpg"), corpus("iptc.jpg"), corpus("orient_3.jpg")},
      tree);
  auto journal = (dir_ / "j.sqlite").string();
  ASSERT_EQ(lighten({tree.string(), "--in-place", "--journal", journal}), 0);
  auto once = snapshot(tree);
  int64_t before_second = now_ns();
  ASSERT_EQ(lighten({tree.string(), "--in-place", "--journal", journal}), 0);
  EXPECT_EQ(snapshot(tree), once);
  EXPECT_EQ(rows_written_after(journal, before_second), 0) << "everything came from the journal";

  auto fresh = (dir_ / "fresh.sqlite").string();
  ASSERT_EQ(lighten({tree.string(), "--in-place", "--journal", fresh}), 0);
  EXPECT_EQ(snapshot(tree), once);
  auto rows = read_journal(fresh, "");
  EXPECT_EQ(rows.size(), once.size());
  for (const auto& r : rows) EXPECT_EQ(r.action, Action::kKept) << r.path;
}

TEST_F(Cli, DryRunAndMirror) {
  auto tree = dir_ / "tree";
  copy_into({corpus("testorig.jpg"), corpus("gray.jpg")}, tree);
  copy_into({corpus("iptc.jpg"), corpus("orient_2.jpg")}, tree / "deeper" / "still");
  write_file(tree / "readme.txt", {'h', 'i', '\n'});
  auto before = snapshot(tree);
  auto out = dir_ / "out";
  ASSERT_EQ(lighten({tree.string(), "-o", out.string(), "--dry-run"}), 0);
  EXPECT_EQ(snapshot(tree), before);
  EXPECT_FALSE(fs::exists(out));

  ASSERT_EQ(lighten({tree.string(), "-o", out.string(), "--jobs", "2"}), 0);
  EXPECT_EQ(snapshot(tree), before);
  auto mirror = snapshot(out);
  for (const auto& [name, bytes] : before) {
    ASSERT_TRUE(mirror.count(name)) << name << " missing from the mirror";
    EXPECT_TRUE(same_or_equivalent(bytes, mirror[name])) << name;
    EXPECT_LE(mirror[name].size(), bytes.size()) << name;
  }
  EXPECT_EQ(mirror["readme.txt"], before["readme.txt"]);
}

TEST_F(Cli, ShardsCoverEveryFileOnce) {
  auto tree = dir_ / "tree";
  auto files = corpus_files("jpeg");
  files.resize(std::min<size_t>(files.size(), 20));
  copy_into(files, tree);
  auto out = dir_ / "out";
  std::vector<std::string> journals;
  for (int k = 1; k <= 3; ++k) {
    journals.push_back((dir_ / ("shard" + std::to_string(k) + ".sqlite")).string());
    int rc = lighten({tree.string(), "-o", out.string(), "--shard", std::to_string(k) + "/3",
                      "--journal", journals.back()});
    EXPECT_EQ(rc, 0) << "shard " << k;
  }
  std::map<std::string, int> seen;
  for (const auto& j : journals)
    for (const auto& r : read_journal(j, "")) ++seen[fs::path(r.path).filename().string()];
  EXPECT_EQ(seen.size(), files.size());
  for (const auto& f : files) EXPECT_EQ(seen[f.filename().string()], 1) << f;
  auto mirror = snapshot(out);
  for (const auto& f : files) EXPECT_TRUE(mirror.count(f.filename().string())) << f;
  EXPECT_EQ(merge_journals(journals, (dir_ / "merged.sqlite").string()), files.size());
  EXPECT_EQ(lighten({tree.string(), "-o", out.string(), "--shard", "4/3"}), 2);
}

}  // namespace
}  // namespace lighten::testing
