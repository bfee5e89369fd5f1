// The command line as a user meets it: flags from the options table, exit codes, messages.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "lighten/options.h"
#include "support/corpus.h"
#include "support/jpeg_maker.h"

namespace fs = std::filesystem;

namespace lighten {
namespace {

struct CliRun {
  int status = -1;
  std::string output;  // stdout and stderr together
};

// `prefix` runs the CLI through another command ("prlimit ... ").
CliRun run_cli(const std::string& args, const std::string& prefix = "") {
  CliRun r;
  const std::string command = prefix + std::string(LIGHTEN_CLI) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buffer{};
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lighten-cli-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "in" / "sub");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(CliTest, HelpListsEveryPolicyOption) {
  const CliRun r = run_cli("optimize --help");
  EXPECT_EQ(r.status, 0);
  for (const OptionSpec& spec : policy_options())
    EXPECT_NE(r.output.find("--" + std::string(spec.name)), std::string::npos) << spec.name;
}

TEST_F(CliTest, UsageErrorsExitWithTwoAndSayWhy) {
  CliRun r = run_cli("optimize " + (dir_ / "in").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("--in-place"), std::string::npos) << r.output;

  r = run_cli("optimize --dry-run --jpeg-scans fastest " + (dir_ / "in").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("smallest"), std::string::npos) << r.output;

  r = run_cli("optimize --dry-run --mode compacter " + (dir_ / "in").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("visually-lossless"), std::string::npos) << r.output;

  r = run_cli("optimize --dry-run --target-score 80 " + (dir_ / "in").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("needs a perceptual --mode"), std::string::npos) << r.output;
  r = run_cli("optimize --dry-run --no-journal -q --mode high --target-score 80 " +
              (dir_ / "in").string());
  EXPECT_EQ(r.status, 0) << r.output;

  r = run_cli("optimize --dry-run --shard 4/3 " + (dir_ / "in").string());
  EXPECT_EQ(r.status, 2);

  r = run_cli("optimize --dry-run --jobs 100000 " + (dir_ / "in").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("--jobs"), std::string::npos) << r.output;

  r = run_cli("optimize --dry-run " + (dir_ / "does-not-exist").string());
  EXPECT_EQ(r.status, 2);

  r = run_cli("frobnicate");
  EXPECT_EQ(r.status, 2);

  // A mirror that is a file, and a merge into one of its own inputs: said before any work.
  testing::write_file(dir_ / "afile.jpg", {'x'});
  r = run_cli("optimize " + (dir_ / "in").string() + " -o " + (dir_ / "afile.jpg").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("not a directory"), std::string::npos) << r.output;
  r = run_cli("journal merge " + (dir_ / "afile.jpg").string() + " " +
              (dir_ / "afile.jpg").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("both the output and an input"), std::string::npos) << r.output;

  // The data set as its own optimised copy: said so, not "no readable files found".
  fs::create_directories(dir_ / "in");
  r = run_cli("probe " + (dir_ / "in").string() + " --compare " + (dir_ / "in" / ".").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("is the data set itself"), std::string::npos) << r.output;

  // Flags that contradict each other are refused, not one of them silently dropped.
  for (const char* both :
       {"--journal j.sqlite --no-journal", "--in-place --link-unchanged", "-o out -q -v"}) {
    r = run_cli(std::string("optimize ") + both + " " + (dir_ / "in").string());
    EXPECT_EQ(r.status, 2) << both << ": " << r.output;
    EXPECT_NE(r.output.find("excludes"), std::string::npos) << both << ": " << r.output;
  }
}

// Worker threads the system refuses (an address-space limit here, with 8 MiB thread stacks, a
// container's task limit in practice) are said; the others finish the run. std::thread's exception
// used to abort it.
TEST_F(CliTest, WorkersTheSystemRefusesAreSaidAndTheRunFinishes) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the sanitizer's shadow memory does not fit under an address-space limit";
#endif
  for (int i = 0; i < 300; ++i)
    testing::write_file(dir_ / "in" / (std::to_string(i) + ".txt"), {'x'});
  const CliRun r =
      run_cli("optimize --dry-run --no-journal -q --jobs 200 " + (dir_ / "in").string(),
              "prlimit --as=400000000 --stack=8388608 ");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("refused to start"), std::string::npos) << r.output;
}

// Under ever tighter address-space limits, from where every thread starts to where the program
// cannot load: the journal's committer, which starts after the workers, was the thread refused
// first, and lost every row of the journal (closing rolled back the transaction its first row
// had left open); the progress ticker, which starts before them, aborted the process when
// refused, and where it took the last thread the run failed for want of a worker. Now every run
// that loads finishes, its journal whole.
TEST_F(CliTest, EveryThreadTheSystemRefusesLeavesTheRunAndItsJournalWhole) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the sanitizer's shadow memory does not fit under an address-space limit";
#endif
  for (int i = 0; i < 20; ++i)
    testing::write_file(dir_ / "in" / (std::to_string(i) + ".txt"), {'x'});
  int refused = 0;
  for (int megabytes = 400; megabytes >= 150; megabytes -= 5) {
    const fs::path out = dir_ / "out";
    fs::remove_all(out);
    const CliRun r =
        run_cli("optimize -q --jobs 200 -o " + out.string() + " " + (dir_ / "in").string(),
                "prlimit --as=" + std::to_string(megabytes) + "000000 --stack=8388608 ");
    const std::string at = std::to_string(megabytes) + " MB: ";
    ASSERT_NE(r.status, -1) << at << r.output;
    ASSERT_NE(r.status, 134) << at << r.output;  // std::terminate
    if (r.output.find("error while loading shared libraries") != std::string::npos) continue;
    if (r.output.find("refused to start") == std::string::npos) continue;
    ++refused;
    EXPECT_EQ(r.status, 0) << at << r.output;
    const CliRun rows =
        run_cli("report --csv-files - " + (out / ".lighten-journal.sqlite").string());
    size_t files = 0;
    for (size_t at_txt = rows.output.find(".txt"); at_txt != std::string::npos;
         at_txt = rows.output.find(".txt", at_txt + 1))
      ++files;
    EXPECT_EQ(files, 20u) << at << rows.output;
  }
  EXPECT_GT(refused, 0);
}

TEST_F(CliTest, InfoSaysWhatAFileIsAndWhatWouldHappen) {
  testing::write_file(dir_ / "in" / "a.jpg", testing::make_jpeg({.width = 200, .height = 100}));
  testing::write_file(dir_ / "in" / "note.txt", {'h', 'i'});
  const CliRun r = run_cli("info " + (dir_ / "in" / "a.jpg").string() + " " +
                           (dir_ / "in" / "note.txt").string());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("kind: jpeg"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("lighten would: write"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("unsupported-kind"), std::string::npos) << r.output;
  // A name that claims another kind: left alone, as a run would leave it.
  testing::write_file(dir_ / "in" / "a.webp", testing::make_jpeg({.width = 200, .height = 100}));
  const CliRun misnamed = run_cli("info " + (dir_ / "in" / "a.webp").string());
  EXPECT_EQ(misnamed.status, 0) << misnamed.output;
  EXPECT_NE(misnamed.output.find("misnamed: its name says webp but its content is jpeg"),
            std::string::npos)
      << misnamed.output;
}

// `info` in a script: a damaged file fails the command (exit 1), and says why.
TEST_F(CliTest, InfoFailsOnADamagedFile) {
  auto jpeg = testing::make_jpeg({.width = 200, .height = 100});
  jpeg.resize(jpeg.size() / 2);
  testing::write_file(dir_ / "in" / "cut.jpg", jpeg);
  testing::write_file(dir_ / "in" / "note.txt", {'h', 'i'});
  CliRun r = run_cli("info " + (dir_ / "in" / "note.txt").string() + " " +
                     (dir_ / "in" / "cut.jpg").string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("truncated"), std::string::npos) << r.output;
  // Also where the optimiser would skip the file anyway (a plain ZIP) and only `info` finds it
  // cut short.
  testing::write_file(dir_ / "in" / "cut.zip", {'P', 'K', 3, 4, 'c', 'u', 't'});
  r = run_cli("info " + (dir_ / "in" / "cut.zip").string());
  EXPECT_EQ(r.status, 1) << r.output;
  r = run_cli("info " + (dir_ / "in" / "note.txt").string());
  EXPECT_EQ(r.status, 0) << r.output;
}

// A file that is missing (or a folder) is said and fails the command (exit 1, as the help
// says), and the others are still described; a name with a newline is quoted, not printed as
// a line of its own.
TEST_F(CliTest, InfoSaysWhichFilesCannotBeReadAndQuotesOddNames) {
  const fs::path odd = dir_ / "in" / "a\nkind: png.jpg";
  testing::write_file(odd, testing::make_jpeg({.width = 64, .height = 48}));
  const CliRun r = run_cli("info '" + odd.string() + "' " + (dir_ / "missing.jpg").string() + " " +
                           (dir_ / "in").string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("missing.jpg: No such file"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("in: a directory"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("kind: jpeg"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("\nkind: png"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("$'"), std::string::npos) << r.output;
  // A pipe is read as a file is; a device is not read at all.
  const CliRun piped = run_cli("info /dev/stdin < /dev/null; cat '" + odd.string() + "' | " +
                               LIGHTEN_CLI + " info /dev/stdin");
  EXPECT_EQ(piped.status, 0) << piped.output;
  EXPECT_NE(piped.output.find("kind: jpeg"), std::string::npos) << piped.output;
  const CliRun device = run_cli("info /dev/zero");
  EXPECT_EQ(device.status, 1) << device.output;
  EXPECT_NE(device.output.find("not a file or a pipe"), std::string::npos) << device.output;
}

// A report that cannot be written is found before the run, not after hours of it.
TEST_F(CliTest, AnUnwritableReportPathIsRefusedBeforeTheRun) {
  testing::write_file(dir_ / "in" / "a.jpg", testing::make_jpeg({.width = 64, .height = 64}));
  const fs::path out = dir_ / "out";
  for (const std::string flag : {"--report", "--report-html"}) {
    CliRun r = run_cli("optimize " + (dir_ / "in").string() + " -o " + out.string() + " " + flag +
                       " " + (dir_ / "missing" / "r.out").string());
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find(flag + " " + (dir_ / "missing" / "r.out").string() +
                            ": the directory " + (dir_ / "missing").string() + " does not exist"),
              std::string::npos)
        << r.output;
    r = run_cli("optimize " + (dir_ / "in").string() + " -o " + out.string() + " " + flag + " " +
                (dir_ / "in").string());
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("is a directory"), std::string::npos) << r.output;
  }
  EXPECT_FALSE(fs::exists(out));
  // The mirror's own folder is made by the run: a report may go there.
  const CliRun r = run_cli("optimize " + (dir_ / "in").string() + " -o " + out.string() +
                           "/ --report " + (out / "r.json").string());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(fs::exists(out / "r.json"));
}

// A report never replaces what the run keeps or reads: its journal (the next run could not
// resume), the other report, a photo among its inputs, or the mirror's copy of one. A report
// inside the inputs is fine.
TEST_F(CliTest, AReportThatWouldReplaceTheJournalAnInputOrTheOtherReportIsRefused) {
  const std::vector<uint8_t> photo = testing::make_jpeg({.width = 64, .height = 64});
  testing::write_file(dir_ / "in" / "a.jpg", photo);
  const std::string in = (dir_ / "in").string(), out = (dir_ / "out").string();
  const std::string journal = (dir_ / "j.sqlite").string();
  struct Case {
    std::string flags, says;
  };
  for (const Case& c : std::vector<Case>{
           {"-o " + out + " --journal " + journal + " --report " + journal, "the run's journal"},
           {"-o " + out + " --report-html " + out + "/.lighten-journal.sqlite",
            "the run's journal"},
           {"-o " + out + " --report " + in + "/a.jpg", "a jpeg file of the run's inputs"},
           // The mirror writes a.jpg there (the report took its place, and the run said ok).
           {"-o " + out + " --report " + out + "/a.jpg", "where the mirror writes"},
           {"-o " + out + "/ --report " + out + "/a.jpg", "where the mirror writes"},
           {"-n --report " + out + ".x --report-html " + (dir_ / "." / "out.x").string(),
            "both name"}}) {
    SCOPED_TRACE(c.flags);
    const CliRun r = run_cli("optimize " + in + " " + c.flags);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << r.output;
  }
  EXPECT_EQ(testing::read_file(dir_ / "in" / "a.jpg"), photo);
  EXPECT_FALSE(fs::exists(journal));
  const CliRun inside = run_cli("optimize " + in + " -o " + out + " --report " + in + "/r.json");
  EXPECT_EQ(inside.status, 0) << inside.output;
}

TEST_F(CliTest, MirrorRunWritesACompleteMirrorAndAJsonReport) {
  const auto jpeg = testing::make_jpeg({.width = 320, .height = 200, .quality = 95});
  testing::write_file(dir_ / "in" / "a.jpg", jpeg);
  testing::write_file(dir_ / "in" / "sub" / "b.jpeg", testing::make_jpeg({.components = 1}));
  testing::write_file(dir_ / "in" / "sub" / "c.txt", {'t', 'e', 'x', 't'});
  const fs::path out = dir_ / "out";
  const fs::path report = dir_ / "report.json";
  const CliRun r = run_cli("optimize " + (dir_ / "in").string() + " -o " + out.string() +
                           " --jobs 2 --report " + report.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("jpeg"), std::string::npos) << r.output;
  ASSERT_TRUE(fs::exists(out / "a.jpg"));
  ASSERT_TRUE(fs::exists(out / "sub" / "b.jpeg"));
  ASSERT_TRUE(fs::exists(out / "sub" / "c.txt"));  // the mirror is complete
  EXPECT_LT(fs::file_size(out / "a.jpg"), jpeg.size());
  EXPECT_EQ(testing::decode_jpeg_pixels(testing::read_file(out / "a.jpg")),
            testing::decode_jpeg_pixels(jpeg));
  // The originals are untouched.
  EXPECT_EQ(testing::read_file(dir_ / "in" / "a.jpg"), jpeg);

  std::ifstream in(report);
  const auto doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["files"].size(), 3u);
  EXPECT_EQ(doc["total"]["files"], 3);
  EXPECT_EQ(doc["policy"]["mode"], "lossless");
  uint64_t before = 0, after = 0;
  for (const auto& f : doc["files"]) {
    before += f["bytes_before"].get<uint64_t>();
    after += f["bytes_after"].get<uint64_t>();
  }
  EXPECT_EQ(doc["total"]["bytes_before"].get<uint64_t>(), before);
  EXPECT_EQ(doc["total"]["bytes_after"].get<uint64_t>(), after);
  EXPECT_LT(after, before);
}

// What metadata `strip` drops that changes how a file shows is said without -v, and kept in
// the JSON report and the journal.
TEST_F(CliTest, StripWarningsReachTheTerminalTheReportAndTheJournal) {
  std::vector<uint8_t> jpeg = testing::make_jpeg({.width = 320, .height = 200, .quality = 95});
  const std::string xmp = std::string("http://ns.adobe.com/xap/1.0/\0", 29) +
                          "<x xmlns:hdrgm=\"http://ns.adobe.com/hdr-gain-map/1.0/\" "
                          "hdrgm:Version=\"1.0\"/>";
  std::vector<uint8_t> segment = {0xFF, 0xE1, uint8_t((xmp.size() + 2) >> 8),
                                  uint8_t(xmp.size() + 2)};
  segment.insert(segment.end(), xmp.begin(), xmp.end());
  jpeg.insert(jpeg.begin() + 2, segment.begin(), segment.end());
  testing::write_file(dir_ / "in" / "hdr.jpg", jpeg);
  const fs::path report = dir_ / "report.json", journal = dir_ / "journal.sqlite";
  const CliRun r =
      run_cli("optimize " + (dir_ / "in").string() + " -o " + (dir_ / "out").string() +
              " --metadata strip --report " + report.string() + " --journal " + journal.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("hdr.jpg: warning: XMP with gain-map (hdrgm) metadata dropped"),
            std::string::npos)
      << r.output;
  std::ifstream in(report);
  const auto doc = nlohmann::json::parse(in);
  ASSERT_EQ(doc["files"].size(), 1u);
  ASSERT_TRUE(doc["files"][0].contains("warnings"));
  EXPECT_NE(doc["files"][0]["warnings"][0].get<std::string>().find("HDR display is lost"),
            std::string::npos);
  const CliRun csv = run_cli("report " + journal.string() + " --csv-files -");
  EXPECT_NE(csv.output.find("warning: XMP with gain-map"), std::string::npos) << csv.output;
  // A file left as it was (the output saved too little) lost nothing: no warning.
  const CliRun kept =
      run_cli("optimize " + (dir_ / "in").string() + " -o " + (dir_ / "out2").string() +
              " --metadata strip --min-gain-percent 99 --no-journal");
  ASSERT_EQ(kept.status, 0) << kept.output;
  EXPECT_EQ(kept.output.find("warning:"), std::string::npos) << kept.output;
}

// Numbers stay numbers ("1" is not a bare flag), bare flags mean yes, --flag=no means no.
TEST_F(CliTest, PolicyFlagsAndValuesReachThePolicy) {
  testing::write_file(dir_ / "in" / "a.jpg", testing::make_jpeg({}));
  const fs::path report = dir_ / "report.json";
  auto policy_of = [&](const std::string& flags) {
    const CliRun r = run_cli("optimize --dry-run --no-journal -q " + flags + " --report " +
                             report.string() + " " + (dir_ / "in").string());
    EXPECT_EQ(r.status, 0) << flags << ": " << r.output;
    std::ifstream in(report);
    return nlohmann::json::parse(in)["policy"];
  };
  auto p = policy_of("--min-gain-bytes 1 --effort 1 --repair --pdf-version raise");
  EXPECT_EQ(p["min-gain-bytes"], "1");
  EXPECT_EQ(p["effort"], "1");
  EXPECT_EQ(p["repair"], "yes");
  EXPECT_EQ(p["png-reduce"], "no");
  EXPECT_EQ(p["pdf-version"], "raise");
  p = policy_of("--repair=no --png-reduce --min-gain-percent 1");
  EXPECT_EQ(p["repair"], "no");
  EXPECT_EQ(p["png-reduce"], "yes");
  EXPECT_EQ(p["min-gain-percent"], "1");
}

TEST_F(CliTest, DryRunWritesNothing) {
  const auto jpeg = testing::make_jpeg({.width = 320, .height = 200, .quality = 95});
  testing::write_file(dir_ / "in" / "a.jpg", jpeg);
  const CliRun r = run_cli("optimize --dry-run --no-journal " + (dir_ / "in").string());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("dry run"), std::string::npos) << r.output;
  EXPECT_EQ(testing::read_file(dir_ / "in" / "a.jpg"), jpeg);
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::recursive_directory_iterator(dir_ / "in")) ++entries;
  EXPECT_EQ(entries, 2u);  // a.jpg and the empty sub/
}

TEST_F(CliTest, ReportWritesThePageAndCsvFromTheJournal) {
  testing::write_file(dir_ / "in" / "a.jpg",
                      testing::make_jpeg({.width = 320, .height = 200, .quality = 95}));
  testing::write_file(dir_ / "in" / "sub" / "c.txt", {'t', 'e', 'x', 't'});
  const fs::path out = dir_ / "out";
  const fs::path run_page = dir_ / "run.html";
  CliRun r = run_cli("optimize " + (dir_ / "in").string() + " -o " + out.string() +
                     " --report-html " + run_page.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_GT(fs::file_size(run_page), 200'000u);  // the chart library is inlined

  const fs::path journal = out / ".lighten-journal.sqlite";
  const fs::path page = dir_ / "report.html";
  r = run_cli("report " + journal.string() + " -o " + page.string() + " --csv -");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("kind,files,optimized,left_alone"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\ntotal,2,1,1,"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("2 files"), std::string::npos) << r.output;
  const auto html = testing::read_file(page);
  const std::string text(html.begin(), html.end());
  EXPECT_NE(text.find("\"unsupported-kind\""), std::string::npos);
  EXPECT_EQ(text.find("<script src"), std::string::npos);

  // A page or CSV written over the journal would lose the run's record: refused, untouched.
  const std::vector<uint8_t> before = testing::read_file(journal);
  for (const std::string flag : {"-o", "--csv", "--csv-files"}) {
    r = run_cli("report " + journal.string() + " " + flag + " " + journal.string());
    EXPECT_EQ(r.status, 2) << flag << ": " << r.output;
    EXPECT_NE(r.output.find("a file the report reads"), std::string::npos) << r.output;
    EXPECT_EQ(testing::read_file(journal), before) << flag;
  }
  // An output that cannot be written is found before any work, as optimize --report finds it;
  // probe --json too, before the measurement.
  r = run_cli("report " + journal.string() + " --csv " + (dir_ / "no" / "k.csv").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("does not exist"), std::string::npos) << r.output;
  r = run_cli("probe " + (dir_ / "in").string() + " --json " + (dir_ / "no" / "p.json").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--json"), std::string::npos) << r.output;
}

TEST_F(CliTest, ReportSaysWhatToWriteAndWhatIsWrongWithItsInput) {
  testing::write_file(dir_ / "not-a-journal.sqlite", {'n', 'o'});
  CliRun r = run_cli("report " + (dir_ / "not-a-journal.sqlite").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("-o report.html"), std::string::npos) << r.output;

  r = run_cli("report " + (dir_ / "not-a-journal.sqlite").string() + " --csv -");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("not-a-journal.sqlite"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("lighten optimize"), std::string::npos) << r.output;

  // The page is a file; two CSVs cannot share standard output, nor two outputs one file.
  const std::string journal = (dir_ / "not-a-journal.sqlite").string();
  const std::string same = (dir_ / "same.csv").string();
  for (const auto& [flags, says] : std::vector<std::pair<std::string, std::string>>{
           {"-o -", "-o takes a file"},
           {"--csv - --csv-files -", "cannot both write to standard output"},
           {"--csv " + same + " --csv-files " + same, "both name"},
           {"--csv " + same + " --csv-files " + (dir_ / "." / "same.csv").string(), "both name"},
           {"-o " + same + " --csv " + same, "both name"}}) {
    r = run_cli("report " + journal + " " + flags);
    EXPECT_EQ(r.status, 2) << flags;
    EXPECT_NE(r.output.find(says), std::string::npos) << flags << ": " << r.output;
  }
  // A run's own reports are files too.
  testing::write_file(dir_ / "in" / "a.jpg", testing::make_jpeg({}));
  for (const char* flag : {"--report", "--report-html"}) {
    r = run_cli("optimize " + (dir_ / "in").string() + " -n --no-journal " + flag + " -");
    EXPECT_EQ(r.status, 2) << flag << ": " << r.output;
    EXPECT_NE(r.output.find("not to standard output"), std::string::npos) << r.output;
  }
}

// `lighten compare --json` gives both scores: the published SSIMULACRA2 and the floor score the
// quality floors check, lower on a strip too thin for the metric's coarse scales; the text form
// names the floor score only where it differs.
TEST_F(CliTest, CompareGivesThePublishedScoreAndTheFloorScore) {
  const fs::path a = dir_ / "a.jpg", b = dir_ / "b.jpg", big = dir_ / "big.jpg";
  testing::write_file(a, testing::make_jpeg({.width = 600, .height = 20, .quality = 95}));
  testing::write_file(b, testing::make_jpeg({.width = 600, .height = 20, .quality = 40}));
  CliRun r = run_cli("compare --json --no-butteraugli " + a.string() + " " + b.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  EXPECT_LT(j.at("floor_score").get<double>(), j.at("ssimulacra2").get<double>()) << r.output;
  EXPECT_TRUE(j.at("butteraugli").is_null());
  r = run_cli("compare --no-butteraugli " + a.string() + " " + b.string());
  EXPECT_NE(r.output.find("floor score: "), std::string::npos) << r.output;
  testing::write_file(big, testing::make_jpeg({.width = 300, .height = 260, .quality = 40}));
  testing::write_file(a, testing::make_jpeg({.width = 300, .height = 260, .quality = 95}));
  r = run_cli("compare --json --no-butteraugli " + a.string() + " " + big.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json k = nlohmann::json::parse(r.output);
  EXPECT_EQ(k.at("floor_score").get<double>(), k.at("ssimulacra2").get<double>()) << r.output;
  // Past --butteraugli-max-mp the text form says why butteraugli is missing.
  r = run_cli("compare --butteraugli-max-mp 0.01 " + a.string() + " " + big.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("butteraugli: not computed: 0.078 MP"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the limit of 0.01 MP"), std::string::npos) << r.output;
  // Under 8 px a side: no SSIMULACRA2 (null), the floor score still.
  testing::write_file(a, testing::make_jpeg({.width = 7, .height = 9, .quality = 95}));
  testing::write_file(b, testing::make_jpeg({.width = 7, .height = 9, .quality = 5}));
  r = run_cli("compare --json --no-butteraugli " + a.string() + " " + b.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json t = nlohmann::json::parse(r.output);
  EXPECT_TRUE(t.at("ssimulacra2").is_null()) << r.output;
  EXPECT_LT(t.at("floor_score").get<double>(), 90.0) << r.output;
  r = run_cli("compare --no-butteraugli " + a.string() + " " + b.string());
  EXPECT_NE(r.output.find("ssimulacra2: n/a"), std::string::npos) << r.output;
  // What is not an image is named, whichever of the two it is.
  testing::write_file(dir_ / "note.txt", {'h', 'i'});
  r = run_cli("compare " + a.string() + " " + (dir_ / "note.txt").string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find((dir_ / "note.txt").string() + ": not a JPEG or PNG"), std::string::npos)
      << r.output;
  r = run_cli("compare " + (dir_ / "note.txt").string() + " " + a.string());
  EXPECT_NE(r.output.find((dir_ / "note.txt").string() + ": not a JPEG or PNG"), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace lighten
