// run_batch through the library API: modes, journal resume, limits, progress.
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "batch/journal.h"
#include "batch/test_support.h"
#include "lighten/batch.h"
#include "lighten/report.h"
#include "pdf/pdf_maker.h"
#include "support/png_maker.h"
#include "video/avi_maker.h"

namespace lighten::testing {
namespace {

struct Recorder : ProgressSink {
  std::mutex mutex;
  uint64_t discovered = 0, discovered_bytes = 0, files = 0, finished = 0;
  std::vector<FileResult> results;
  void on_discovered(uint64_t n, uint64_t bytes) override {
    discovered = n;
    discovered_bytes = bytes;
  }
  void on_file(const FileResult& r) override {
    std::lock_guard lock(mutex);
    results.push_back(r);
  }
  void on_finish(const BatchSummary&) override { ++finished; }
};

class RunBatch : public ::testing::Test {
 protected:
  void SetUp() override {
    auto corpus = corpus_files("jpeg");
    if (corpus.empty()) GTEST_SKIP() << "shared corpus not found at " << shared_dir();
    std::vector<fs::path> few;
    for (const char* name : {"testorig.jpg", "gray.jpg", "iptc.jpg", "orient_1.jpg"})
      if (fs::exists(shared_dir() / "corpus" / "jpeg" / name))
        few.push_back(shared_dir() / "corpus" / "jpeg" / name);
    copy_into(few, dir_ / "in");
    copy_into({few[0]}, dir_ / "in" / "sub");
    write_file(dir_ / "in" / "sub" / "notes.txt", {'h', 'i'});
    ::setenv("XDG_STATE_HOME", (dir_ / "state").c_str(), 1);
  }
  BatchOptions options() {
    BatchOptions o;
    o.inputs = {(dir_ / "in").string()};
    o.jobs = 2;
    return o;
  }
  TempDir dir_;
};

TEST_F(RunBatch, DryRunWritesNothing) {
  auto before = snapshot(dir_ / "in");
  auto o = options();
  o.dry_run = true;
  o.output_dir = (dir_ / "out").string();
  Recorder rec;
  auto s = run_batch(o, rec);
  EXPECT_EQ(snapshot(dir_ / "in"), before);
  EXPECT_FALSE(fs::exists(dir_ / "out"));
  EXPECT_FALSE(fs::exists(dir_ / "state"));
  EXPECT_EQ(s.total.files, before.size());
  EXPECT_EQ(rec.discovered, before.size());
  EXPECT_EQ(rec.results.size(), before.size());
  EXPECT_EQ(rec.finished, 1u);
}

TEST_F(RunBatch, MirrorIsCompleteAndHardLinksUnchangedFiles) {
  auto before = snapshot(dir_ / "in");
  auto o = options();
  o.output_dir = (dir_ / "out").string();
  o.unchanged = UnchangedFiles::kHardlink;
  Recorder rec;
  auto s = run_batch(o, rec);
  EXPECT_EQ(snapshot(dir_ / "in"), before);
  EXPECT_EQ(s.io_errors, 0u);
  for (const auto& [name, bytes] : before) {
    auto out = dir_ / "out" / name;
    ASSERT_TRUE(fs::exists(out)) << name;
    EXPECT_TRUE(same_or_equivalent(bytes, read_file(out))) << name;
    if (read_file(out) == bytes) {
      struct stat a, b;
      ::stat((dir_ / "in" / name).c_str(), &a);
      ::stat(out.c_str(), &b);
      EXPECT_EQ(a.st_ino, b.st_ino) << name << " should be a hard link";
    }
  }
  EXPECT_EQ(s.journal_path, (dir_ / "out" / ".lighten-journal.sqlite").string());

  // Again with a fresh journal: links already in place stay, no temp file is left behind.
  o.journal_path = (dir_ / "fresh.sqlite").string();
  s = run_batch(o, rec);
  EXPECT_EQ(s.io_errors, 0u);
  EXPECT_FALSE(has_temp_files(dir_ / "out"));
}

TEST_F(RunBatch, SecondRunIsANoOpFromTheJournalAndWithAFreshOne) {
  auto o = options();
  o.in_place = true;
  Recorder first_rec;
  auto first = run_batch(o, first_rec);
  EXPECT_EQ(first.io_errors, 0u);
  EXPECT_EQ(first.from_journal, 0u);
  auto after_first = snapshot(dir_ / "in");

  Recorder second_rec;
  auto second = run_batch(o, second_rec);
  EXPECT_EQ(second.journal_path, first.journal_path);
  EXPECT_EQ(second.from_journal, second.total.files);
  EXPECT_EQ(second.total.files, first.total.files);
  EXPECT_EQ(snapshot(dir_ / "in"), after_first);

  o.journal_path = (dir_ / "fresh.sqlite").string();
  Recorder third_rec;
  auto third = run_batch(o, third_rec);
  EXPECT_EQ(third.total.replaced, 0u) << "lossless output must not shrink again";
  EXPECT_EQ(third.from_journal, 0u);
  EXPECT_EQ(snapshot(dir_ / "in"), after_first);
}

// In place, a row that says a file was replaced holds only while the file is that output: the
// original restored from a backup with its times, or a row of a mirror run sharing the journal,
// is optimised again rather than reported as done.
TEST_F(RunBatch, InPlaceRowsOfReplacedFilesHoldOnlyForTheirOutput) {
  const fs::path original = dir_ / "in" / "testorig.jpg";
  const std::vector<uint8_t> before = read_file(original);
  struct stat st {};
  ASSERT_EQ(::stat(original.c_str(), &st), 0);
  auto o = options();
  o.in_place = true;
  o.journal_path = (dir_ / "shared.sqlite").string();
  Recorder first_rec;
  ASSERT_GT(run_batch(o, first_rec).total.replaced, 0u);
  ASSERT_NE(read_file(original), before);
  // Restored as `cp -p` would: the same bytes and times as the input the row describes.
  write_file(original, before);
  const struct timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, original.c_str(), times, 0), 0);
  Recorder second_rec;
  run_batch(o, second_rec);
  EXPECT_NE(read_file(original), before);
  for (const FileResult& r : second_rec.results)
    if (r.path == original.string()) {
      EXPECT_FALSE(r.from_journal);
      EXPECT_EQ(r.action, Action::kReplaced) << r.message;
    }

  // A mirror run's rows, then an in-place run with the same journal.
  const fs::path fresh = dir_ / "fresh";
  copy_into({shared_dir() / "corpus" / "jpeg" / "testorig.jpg"}, fresh);
  auto mirror = options();
  mirror.inputs = {fresh.string()};
  mirror.output_dir = (dir_ / "mirror").string();
  mirror.journal_path = (dir_ / "mixed.sqlite").string();
  Recorder mirror_rec;
  ASSERT_EQ(run_batch(mirror, mirror_rec).total.replaced, 1u);
  auto in_place = mirror;
  in_place.output_dir.clear();
  in_place.in_place = true;
  Recorder in_place_rec;
  const BatchSummary s = run_batch(in_place, in_place_rec);
  EXPECT_EQ(s.from_journal, 0u);
  EXPECT_EQ(s.total.replaced, 1u);
  EXPECT_NE(read_file(fresh / "testorig.jpg"), before);
}

// The mirror of one private folder is private too: its root stands for the input folder.
TEST_F(RunBatch, TheMirrorOfAPrivateFolderIsPrivate) {
  ASSERT_EQ(::chmod((dir_ / "in").c_str(), 0700), 0);
  auto o = options();
  o.output_dir = (dir_ / "out").string();
  Recorder rec;
  run_batch(o, rec);
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "out").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::chmod((dir_ / "in").c_str(), 0755), 0);
}

TEST_F(RunBatch, HardLinkedFilesAreLeftAloneInPlace) {
  // testorig.jpg gets a second name outside the tree: replacing the one inside would leave the
  // other with the old bytes and store both.
  const fs::path inside = dir_ / "in" / "testorig.jpg", outside = dir_ / "elsewhere.jpg";
  fs::create_hard_link(inside, outside);
  const auto before = read_file(inside);
  auto o = options();
  o.in_place = true;
  Recorder rec;
  const auto s = run_batch(o, rec);
  EXPECT_EQ(s.io_errors, 0u);
  EXPECT_EQ(read_file(inside), before);
  EXPECT_EQ(fs::hard_link_count(inside), 2u);
  bool seen = false;
  for (const FileResult& r : rec.results) {
    if (fs::path(r.path).filename() != "testorig.jpg" ||
        fs::path(r.path).parent_path() != dir_ / "in")
      continue;
    seen = true;
    EXPECT_EQ(r.action, Action::kKept);
    EXPECT_EQ(r.reason, Reason::kSkipped);
    EXPECT_NE(r.message.find("hard-linked (2 names)"), std::string::npos) << r.message;
  }
  EXPECT_TRUE(seen);
  EXPECT_GT(s.total.replaced, 0u);  // the other files were optimised as usual
  // Into a mirror the link does not matter: the file is optimised.
  o.in_place = false;
  o.output_dir = (dir_ / "out").string();
  o.journal_path = (dir_ / "mirror.sqlite").string();
  Recorder mirrored;
  run_batch(o, mirrored);
  EXPECT_LT(read_file(dir_ / "out" / "testorig.jpg").size(), before.size());
}

// In a mirror, the names of a hard-linked file stay hard links of one output, as in the input
// (a tree of backups holds many): the file is optimised once, under its first name; a second
// run does nothing; shards keep all the names in the first name's shard.
TEST_F(RunBatch, HardLinkedNamesStayHardLinksInAMirror) {
  const fs::path first = dir_ / "in" / "gray.jpg";
  fs::create_hard_link(first, dir_ / "in" / "sub" / "gray-again.jpg");
  fs::create_hard_link(first, dir_ / "in" / "zz-gray.jpg");
  const auto check = [&](const fs::path& out) {
    struct stat a {
    }, b{}, c{};
    ASSERT_EQ(::stat((out / "gray.jpg").c_str(), &a), 0);
    ASSERT_EQ(::stat((out / "sub" / "gray-again.jpg").c_str(), &b), 0);
    ASSERT_EQ(::stat((out / "zz-gray.jpg").c_str(), &c), 0);
    EXPECT_EQ(a.st_ino, b.st_ino);
    EXPECT_EQ(a.st_ino, c.st_ino);
    EXPECT_EQ(a.st_nlink, 3u);
    EXPECT_LT(uint64_t(a.st_size), fs::file_size(first));
  };
  auto o = options();
  o.output_dir = (dir_ / "out").string();
  Recorder rec;
  const auto s = run_batch(o, rec);
  EXPECT_EQ(s.io_errors, 0u);
  check(dir_ / "out");
  size_t linked = 0;
  for (const FileResult& r : rec.results)
    if (r.detail.find("a hard link of " + first.string() + "'s output") != std::string::npos) {
      ++linked;
      EXPECT_EQ(r.action, Action::kReplaced);
    }
  EXPECT_EQ(linked, 2u);
  Recorder again;
  const auto second = run_batch(o, again);
  EXPECT_EQ(second.total.files, s.total.files);
  for (const FileResult& r : again.results) EXPECT_TRUE(r.from_journal) << r.path;
  check(dir_ / "out");

  for (unsigned k = 0; k < 2; ++k) {
    auto shard = options();
    shard.output_dir = (dir_ / "sharded").string();
    shard.journal_path = (dir_ / ("shard" + std::to_string(k) + ".sqlite")).string();
    shard.shard = {k, 2};
    Recorder part;
    run_batch(shard, part);
  }
  check(dir_ / "sharded");
  // The walk's first name left out (it has the mirror journal's name): the next one stands in.
  fs::create_directories(dir_ / "in2");
  write_file(dir_ / "in2" / ".lighten-journal.sqlite", {'h', 'i'});
  fs::create_hard_link(dir_ / "in2" / ".lighten-journal.sqlite", dir_ / "in2" / "z.txt");
  fs::create_hard_link(dir_ / "in2" / ".lighten-journal.sqlite", dir_ / "in2" / "zz.txt");
  auto other = options();
  other.inputs = {(dir_ / "in2").string()};
  other.output_dir = (dir_ / "out2").string();
  Recorder stand_in;
  run_batch(other, stand_in);
  EXPECT_TRUE(fs::equivalent(dir_ / "out2" / "z.txt", dir_ / "out2" / "zz.txt"));
}

// A first name that waits for memory (a PDF whose stream decodes to 48 MiB, on a 16 MiB budget)
// never waits on its later names: those are taken once every other file is done. (Taken beside
// it, a later name waited on a worker the budget counted as running, and the run hung.)
TEST_F(RunBatch, HardLinkedNamesNeverHoldUpTheirFirstName) {
  auto objects = std::vector<std::string>{
      "<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
      "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] /Contents 4 0 R >>",
      stream_object("/Filter /FlateDecode", zlib_fast(std::string(48 << 20, ' ')))};
  const std::string pdf = make_pdf(objects);
  write_file(dir_ / "in" / "a.pdf", std::vector<uint8_t>(pdf.begin(), pdf.end()));
  fs::create_hard_link(dir_ / "in" / "a.pdf", dir_ / "in" / "b.pdf");
  auto o = options();
  o.output_dir = (dir_ / "out").string();
  o.jobs = 2;
  o.memory_budget = 16 << 20;
  auto done = std::async(std::launch::async, [&] {
    Recorder rec;
    return run_batch(o, rec);
  });
  if (done.wait_for(std::chrono::seconds(120)) != std::future_status::ready) {
    ADD_FAILURE() << "the run hung";
    std::_Exit(1);
  }
  const BatchSummary s = done.get();
  EXPECT_EQ(s.io_errors, 0u);
  EXPECT_EQ(fs::hard_link_count(dir_ / "out" / "a.pdf"), 2u);
  EXPECT_TRUE(fs::equivalent(dir_ / "out" / "a.pdf", dir_ / "out" / "b.pdf"));
}

TEST_F(RunBatch, ChangedPolicyRedoesFiles) {
  auto o = options();
  o.in_place = true;
  Recorder r1, r2;
  run_batch(o, r1);
  o.policy.effort = o.policy.effort == 9 ? 8 : 9;
  auto s = run_batch(o, r2);
  EXPECT_EQ(s.from_journal, 0u);
}

// A name that claims another kind than the content (a JPEG saved as .png, a PNG as .JPG) is bad
// input, left as it is with the reason; a name that claims no kind, or a kind of the content's
// family, is not.
TEST_F(RunBatch, FilesWhoseNameClaimsAnotherKindAreLeftAlone) {
  const Bytes jpeg = read_file(dir_ / "in" / "testorig.jpg");
  fs::create_directories(dir_ / "named");
  write_file(dir_ / "named" / "photo.png", jpeg);
  write_file(dir_ / "named" / "PHOTO.JPEG", jpeg);
  write_file(dir_ / "named" / "photo.bin", jpeg);
  write_file(dir_ / "named" / "scan.JPG", make_png({}));
  auto o = options();
  o.inputs = {(dir_ / "named").string()};
  o.output_dir = (dir_ / "out").string();
  Recorder rec;
  run_batch(o, rec);
  std::map<std::string, FileResult> by_name;
  for (const FileResult& r : rec.results) by_name[fs::path(r.path).filename().string()] = r;
  ASSERT_EQ(by_name.size(), 4u);
  for (const char* name : {"photo.png", "scan.JPG"}) {
    const FileResult& r = by_name.at(name);
    EXPECT_EQ(r.reason, Reason::kMisnamed) << name << ": " << r.message;
    EXPECT_EQ(r.action, Action::kKept) << name;
    EXPECT_NE(r.message.find("its name says"), std::string::npos) << r.message;
    EXPECT_EQ(read_file(dir_ / "out" / name), read_file(dir_ / "named" / name)) << name;
  }
  for (const char* name : {"PHOTO.JPEG", "photo.bin"})
    EXPECT_EQ(by_name.at(name).action, Action::kReplaced)
        << name << ": " << by_name.at(name).message;
  // Names of one hard-linked file answer each for its own extension.
  fs::create_directories(dir_ / "linked");
  write_file(dir_ / "linked" / "a.png", jpeg);
  fs::create_hard_link(dir_ / "linked" / "a.png", dir_ / "linked" / "b.jpg");
  fs::create_hard_link(dir_ / "linked" / "a.png", dir_ / "linked" / "c.gif");
  o.inputs = {(dir_ / "linked").string()};
  o.output_dir = (dir_ / "out_linked").string();
  Recorder linked;
  run_batch(o, linked);
  std::map<std::string, Reason> reasons;
  for (const FileResult& r : linked.results)
    reasons[fs::path(r.path).filename().string()] = r.reason;
  EXPECT_EQ(reasons["a.png"], Reason::kMisnamed);
  EXPECT_EQ(reasons["b.jpg"], Reason::kOptimized);
  EXPECT_EQ(reasons["c.gif"], Reason::kMisnamed);
  EXPECT_EQ(read_file(dir_ / "out_linked" / "c.gif"), jpeg);
  EXPECT_EQ(kind_claimed_by_name("/a/b/clip.mov"), Kind::kMov);
  EXPECT_TRUE(kind_matches_claim(Kind::kMp4, Kind::kMov));
  EXPECT_TRUE(kind_matches_claim(Kind::kJar, Kind::kZip));
  EXPECT_TRUE(kind_matches_claim(Kind::kCfb, Kind::kDocx));  // an encrypted OOXML document
  EXPECT_TRUE(kind_matches_claim(Kind::kZip, Kind::kXlsx));  // a damaged package
  EXPECT_FALSE(kind_matches_claim(Kind::kXlsx, Kind::kDocx));
  EXPECT_FALSE(kind_matches_claim(Kind::kPdf, Kind::kDocx));
  EXPECT_EQ(kind_claimed_by_name("/a.jpg/notes"), Kind::kUnknown);
  EXPECT_EQ(kind_claimed_by_name(".png"), Kind::kUnknown);
}

TEST_F(RunBatch, LimitExceededFilesAreNotReadAndStillMirrored) {
  auto o = options();
  o.output_dir = (dir_ / "out").string();
  o.policy.limits.max_input_bytes = 10;
  Recorder rec;
  auto s = run_batch(o, rec);
  EXPECT_EQ(s.total.replaced, 0u);
  EXPECT_EQ(s.total.kept[Reason::kLimitExceeded], s.total.files - 1);  // notes.txt is 2 bytes
  EXPECT_EQ(snapshot(dir_ / "out").size(), s.total.files + 1);         // + the journal
}

// A large file of a kind lighten has no optimiser for is told by its first bytes and not read
// whole (its journal row holds no hash of content never read); the mirror gets the same bytes,
// and a sparse file's holes stay holes. A large file of a kind it does optimise is read whole.
TEST_F(RunBatch, LargeFilesOfOtherKindsAreStreamedIntoTheMirror) {
  const fs::path image = dir_ / "in" / "disk.img", gif = dir_ / "in" / "big.gif";
  {
    std::ofstream out(image, std::ios::binary);
    out.seekp(3 << 20);
    out << "a few bytes of data in the middle of a hole";
    out.seekp((6 << 20) - 1);
    out.put('\0');
  }
  std::vector<uint8_t> animation(5 << 20, 0x5A);
  std::copy_n("GIF89a", 6, animation.begin());
  write_file(gif, animation);
  std::vector<uint8_t> padded = read_file(dir_ / "in" / "testorig.jpg");
  padded.resize(padded.size() + (5 << 20), 0xAA);  // bytes after the EOI, kept as they are
  write_file(dir_ / "in" / "padded.jpg", padded);
  auto o = options();
  o.output_dir = (dir_ / "out").string();
  Recorder rec;
  const auto s = run_batch(o, rec);
  EXPECT_EQ(s.io_errors, 0u);
  std::map<std::string, FileResult> by_name;
  for (const FileResult& r : rec.results) by_name[fs::path(r.path).filename().string()] = r;
  EXPECT_EQ(by_name["disk.img"].reason, Reason::kUnsupportedKind);
  EXPECT_EQ(by_name["big.gif"].reason, Reason::kUnsupportedKind);
  EXPECT_EQ(by_name["big.gif"].kind, Kind::kGif);
  EXPECT_EQ(by_name["padded.jpg"].kind, Kind::kJpeg);  // read and optimised (its gain is small)
  EXPECT_NE(by_name["padded.jpg"].reason, Reason::kUnsupportedKind);
  EXPECT_EQ(read_file(dir_ / "out" / "disk.img"), read_file(image));
  EXPECT_EQ(read_file(dir_ / "out" / "big.gif"), animation);
  struct stat in {
  }, out{};
  ASSERT_EQ(::stat(image.c_str(), &in), 0);
  ASSERT_EQ(::stat((dir_ / "out" / "disk.img").c_str(), &out), 0);
  if (in.st_blocks * 512 < in.st_size / 2) {  // this filesystem holds holes
    EXPECT_LT(out.st_blocks * 512, out.st_size / 2);
  }
  batch::Journal journal((dir_ / "out" / ".lighten-journal.sqlite").string(), false);
  EXPECT_EQ(journal.find(fs::absolute(image).lexically_normal().string())->hash, "");
  EXPECT_NE(
      journal.find(fs::absolute(dir_ / "in" / "padded.jpg").lexically_normal().string())->hash, "");
}

// Inputs over Limits::large_output_bytes are read into file-backed buffers instead of memory,
// and an AVI's output is written to one: the mirror holds the same bytes either way.
TEST_F(RunBatch, LargeInputsGoThroughFileBackedBuffers) {
  AviRecipe r;
  r.strip_dht = true;
  r.width = 320, r.height = 240;
  write_file(dir_ / "in" / "clip.avi", make_avi(r));
  auto o = options();
  o.output_dir = (dir_ / "memory").string();
  o.journal_path = (dir_ / "memory.sqlite").string();  // journals outside the mirrors
  Recorder a, b;
  run_batch(o, a);
  o.output_dir = (dir_ / "mapped").string();
  o.journal_path = (dir_ / "mapped.sqlite").string();
  o.policy.limits.large_output_bytes = 1000;
  const auto s = run_batch(o, b);
  EXPECT_EQ(s.io_errors, 0u);
  EXPECT_GE(s.total.replaced, 2u);  // the AVI and at least one JPEG
  EXPECT_EQ(snapshot(dir_ / "mapped"), snapshot(dir_ / "memory"));
  EXPECT_LT(fs::file_size(dir_ / "mapped" / "clip.avi"), fs::file_size(dir_ / "in" / "clip.avi"));
}

TEST_F(RunBatch, UnwritableMirrorEndsAsIoErrorsNotAnException) {
  // A file where the mirror needs a directory: every write below it fails.
  auto o = options();
  o.output_dir = (dir_ / "out").string();
  fs::create_directories(dir_ / "out");
  write_file(dir_ / "out" / "sub", {'x'});
  Recorder rec;
  auto s = run_batch(o, rec);
  EXPECT_EQ(s.io_errors, 2u);
  EXPECT_EQ(s.total.kept[Reason::kIoError], 2u);
  for (const auto& r : rec.results)
    if (r.reason == Reason::kIoError) {
      EXPECT_NE(r.message.find("sub"), std::string::npos);
    }
}

TEST_F(RunBatch, ShardsCoverEveryFileOnceAndTheirJournalsMerge) {
  std::vector<std::string> journals;
  std::multiset<std::string> seen;
  for (uint32_t k = 0; k < 3; ++k) {
    auto o = options();
    o.output_dir = (dir_ / "out").string();
    o.shard = Shard{k, 3};
    o.journal_path = (dir_ / ("j" + std::to_string(k) + ".sqlite")).string();
    Recorder rec;
    run_batch(o, rec);
    for (const auto& r : rec.results) seen.insert(r.path);
    journals.push_back(o.journal_path);
  }
  auto files = snapshot(dir_ / "in");
  EXPECT_EQ(seen.size(), files.size());
  for (const auto& [name, bytes] : files)
    EXPECT_EQ(seen.count((dir_ / "in" / name).string()), 1u) << name;
  EXPECT_EQ(merge_journals(journals, (dir_ / "merged.sqlite").string()), files.size());
}

// Once the stop flag is set (by a SIGINT handler in the CLI), no file starts: those finished
// are journaled, and the next run goes on after them.
TEST_F(RunBatch, AStoppedRunJournalsWhatItFinishedAndTheNextGoesOn) {
  struct StopAfterFirst : Recorder {
    std::atomic<bool> stop{false};
    void on_file(const FileResult& r) override {
      Recorder::on_file(r);
      stop = true;
    }
  };
  auto o = options();
  o.jobs = 1;
  o.output_dir = (dir_ / "out").string();
  StopAfterFirst rec;
  o.stop = &rec.stop;
  const auto files = snapshot(dir_ / "in").size();
  const BatchSummary first = run_batch(o, rec);
  EXPECT_EQ(first.total.files, 1u);
  EXPECT_EQ(first.not_started, files - 1);
  EXPECT_EQ(rec.finished, 1u);
  const std::atomic<bool> go_on{false};
  o.stop = &go_on;
  Recorder again;
  const BatchSummary second = run_batch(o, again);
  EXPECT_EQ(second.not_started, 0u);
  EXPECT_EQ(second.total.files, files);
  EXPECT_EQ(second.from_journal, 1u);
}

// Several inputs are mirrored under their own names: two of one name would land on one path
// (the second overwriting the first), and an input inside another would be mirrored under the
// inner one's name only. Both are refused before anything is written.
TEST_F(RunBatch, MirrorsRefuseInputsThatWouldLandOnOnePath) {
  copy_into({dir_ / "in" / "testorig.jpg"}, dir_ / "other");
  auto o = options();
  o.output_dir = (dir_ / "out").string();
  Recorder rec;
  o.inputs = {(dir_ / "in" / "testorig.jpg").string(), (dir_ / "other" / "testorig.jpg").string()};
  try {
    run_batch(o, rec);
    ADD_FAILURE() << "two inputs named testorig.jpg were mirrored";
  } catch (const BatchOptionError& e) {
    EXPECT_NE(std::string(e.what()).find("would both be written to"), std::string::npos)
        << e.what();
  }
  o.inputs = {(dir_ / "in" / "sub").string(), (dir_ / "in").string()};
  try {
    run_batch(o, rec);
    ADD_FAILURE() << "an input inside another was mirrored";
  } catch (const BatchOptionError& e) {
    EXPECT_NE(std::string(e.what()).find("lies inside"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(rec.results.empty());
  EXPECT_FALSE(fs::exists(dir_ / "out"));
  // The same file twice is one input; in place, nested inputs are walked once each.
  o.inputs = {(dir_ / "in" / "gray.jpg").string(), (dir_ / "in" / "gray.jpg").string()};
  EXPECT_EQ(run_batch(o, rec).total.files, 1u);
  o.output_dir.clear();
  o.in_place = true;
  o.inputs = {(dir_ / "in" / "sub").string(), (dir_ / "in").string()};
  Recorder in_place;
  EXPECT_EQ(run_batch(o, in_place).total.files, snapshot(dir_ / "in").size());
}

// A mirror is complete with the tree's symbolic links too: each is the same link there (as
// `cp -a` makes it), to a file or a folder, also where it points outside the tree. In place and
// in a dry run nothing is made, and the walk's rows count in the files announced.
TEST_F(RunBatch, MirrorsHoldTheTreesSymbolicLinksAsLinks) {
  fs::create_symlink("gray.jpg", dir_ / "in" / "grey.jpg");
  fs::create_symlink("sub", dir_ / "in" / "sub-link");
  fs::create_symlink("/nowhere/at/all", dir_ / "in" / "sub" / "dangling");
  auto o = options();
  o.output_dir = (dir_ / "out").string();
  o.dry_run = true;
  Recorder dry;
  EXPECT_EQ(run_batch(o, dry).links, 3u);
  EXPECT_FALSE(fs::exists(dir_ / "out"));
  o.dry_run = false;
  Recorder rec;
  const BatchSummary s = run_batch(o, rec);
  EXPECT_EQ(s.links, 3u);
  EXPECT_EQ(s.io_errors, 0u);
  EXPECT_EQ(s.total.files, snapshot(dir_ / "in").size());  // the links are not file rows
  EXPECT_EQ(rec.discovered, rec.results.size());
  EXPECT_EQ(fs::read_symlink(dir_ / "out" / "grey.jpg"), "gray.jpg");
  EXPECT_EQ(fs::read_symlink(dir_ / "out" / "sub-link"), "sub");
  EXPECT_EQ(fs::read_symlink(dir_ / "out" / "sub" / "dangling"), "/nowhere/at/all");
  EXPECT_TRUE(fs::is_regular_file(dir_ / "out" / "grey.jpg"));  // through the mirrored gray.jpg
  // A second run finds them made; a link changed since is made again.
  fs::remove(dir_ / "in" / "grey.jpg");
  fs::create_symlink("iptc.jpg", dir_ / "in" / "grey.jpg");
  Recorder again;
  EXPECT_EQ(run_batch(o, again).links, 3u);
  EXPECT_EQ(fs::read_symlink(dir_ / "out" / "grey.jpg"), "iptc.jpg");
  for (const auto& e : fs::directory_iterator(dir_ / "out"))
    EXPECT_EQ(e.path().filename().string().find("lighten-tmp"), std::string::npos) << e.path();

  o.output_dir.clear();
  o.in_place = true;
  Recorder in_place;
  const BatchSummary p = run_batch(o, in_place);
  EXPECT_EQ(p.links, 0u);
  EXPECT_EQ(p.total.kept.at(Reason::kSkipped), 3u);
  EXPECT_EQ(in_place.discovered, in_place.results.size());
}

// What the walk meets that is no file (a dangling link followed, here) reaches `lighten report`
// through the journal, as the latest walk met it: a walk without it clears it.
TEST_F(RunBatch, ProblemsOfTheWalkReachTheJournalsReport) {
  fs::create_symlink("/nowhere/at/all", dir_ / "in" / "dangling.jpg");
  auto o = options();
  o.output_dir = (dir_ / "out").string();
  o.follow_symlinks = true;
  Recorder first;
  const BatchSummary s = run_batch(o, first);
  const ReportSummary report = summarize_journal(s.journal_path);
  EXPECT_EQ(report.total.files, s.total.files);
  EXPECT_EQ(first.results.size(), s.total.files);
  const auto dangling =
      std::find_if(first.results.begin(), first.results.end(), [](const FileResult& r) {
        return r.kind == Kind::kUnknown && r.path.ends_with("dangling.jpg");
      });
  ASSERT_NE(dangling, first.results.end());
  ASSERT_TRUE(report.left_alone.count(dangling->reason));
  std::ostringstream csv;
  write_files_csv(csv, s.journal_path);
  EXPECT_NE(csv.str().find("dangling.jpg,unknown,kept"), std::string::npos) << csv.str();
  const std::string merged = (dir_ / "merged.sqlite").string();
  merge_journals({s.journal_path}, merged);
  EXPECT_EQ(summarize_journal(merged).total.files, s.total.files);
  fs::remove(dir_ / "in" / "dangling.jpg");
  Recorder second;
  run_batch(o, second);
  EXPECT_EQ(summarize_journal(s.journal_path).total.files, s.total.files - 1);
  // Merged again, the merge holds the latest walk's rows, not the earlier merge's too.
  merge_journals({s.journal_path}, merged);
  EXPECT_EQ(summarize_journal(merged).total.files, s.total.files - 1);
}

// The mirror's links lead out of it: no later run may write through one. A folder that an input
// now holds where it held a link, or that --follow-symlinks now walks, replaces the mirror's
// link; the folder the link pointed at stays as it was.
TEST_F(RunBatch, AMirrorNeverWritesThroughItsLinks) {
  copy_into({dir_ / "in" / "gray.jpg", dir_ / "in" / "testorig.jpg"}, dir_ / "shared");
  fs::create_symlink("../shared", dir_ / "in" / "photos");
  const auto shared = snapshot(dir_ / "shared");
  auto o = options();
  o.output_dir = (dir_ / "out").string();
  Recorder first;
  run_batch(o, first);
  ASSERT_TRUE(fs::is_symlink(dir_ / "out" / "photos"));
  o.follow_symlinks = true;
  Recorder followed;
  const BatchSummary s = run_batch(o, followed);
  EXPECT_EQ(s.io_errors, 0u);
  EXPECT_EQ(snapshot(dir_ / "shared"), shared);
  EXPECT_FALSE(fs::is_symlink(dir_ / "out" / "photos"));
  EXPECT_TRUE(fs::is_regular_file(dir_ / "out" / "photos" / "gray.jpg"));

  // The input's link becomes a folder of its own: the mirror's link (to the shared folder now)
  // is replaced, not written through.
  fs::remove_all(dir_ / "out");
  o.follow_symlinks = false;
  Recorder linked;
  run_batch(o, linked);
  ASSERT_TRUE(fs::is_symlink(dir_ / "out" / "photos"));
  fs::remove(dir_ / "in" / "photos");
  copy_into({dir_ / "in" / "iptc.jpg"}, dir_ / "in" / "photos");
  fs::rename(dir_ / "in" / "photos" / "iptc.jpg", dir_ / "in" / "photos" / "gray.jpg");
  Recorder replaced;
  run_batch(o, replaced);
  EXPECT_EQ(snapshot(dir_ / "shared"), shared);
  EXPECT_FALSE(fs::is_symlink(dir_ / "out" / "photos"));
  EXPECT_TRUE(fs::is_regular_file(dir_ / "out" / "photos" / "gray.jpg"));
}

// A link the mirror cannot make (a folder holds its place) is an I/O error row, counted in the
// files announced; a link named like a temp file in the input tree is the owner's, not a stray.
TEST_F(RunBatch, ALinkThatCannotBeMadeIsARowAndTempNamedLinksInTheInputStay) {
  fs::create_symlink("sub", dir_ / "in" / "ld");
  fs::create_directories(dir_ / "out" / "ld" / "keep");
  fs::create_symlink("gray.jpg", dir_ / "in" / ".gray.jpg.lighten-tmp-Ab12Cd");
  auto o = options();
  o.output_dir = (dir_ / "out").string();
  Recorder rec;
  const BatchSummary s = run_batch(o, rec);
  EXPECT_EQ(s.io_errors, 1u);
  EXPECT_EQ(rec.discovered, rec.results.size());
  EXPECT_TRUE(fs::is_directory(dir_ / "out" / "ld" / "keep"));
  EXPECT_TRUE(fs::is_symlink(dir_ / "in" / ".gray.jpg.lighten-tmp-Ab12Cd"));
  o.output_dir.clear();
  o.in_place = true;
  Recorder in_place;
  run_batch(o, in_place);
  EXPECT_TRUE(fs::is_symlink(dir_ / "in" / ".gray.jpg.lighten-tmp-Ab12Cd"));
}

// A mirror run writes nothing in its inputs: a temp file there (an in-place run's, killed or
// still at work) stays; an in-place run, whose it is, removes it as a stray. The mirror's own
// strays, in the output, are removed.
TEST_F(RunBatch, AMirrorRunLeavesTempFilesInItsInputs) {
  const fs::path stray = dir_ / "in" / ".gray.jpg.lighten-tmp-Ab12Cd";
  const fs::path own = dir_ / "out" / ".iptc.jpg.lighten-tmp-Ef34Gh";
  write_file(stray, {'x'});
  fs::create_directories(dir_ / "out");
  write_file(own, {'y'});
  auto o = options();
  o.output_dir = (dir_ / "out").string();
  Recorder rec;
  const BatchSummary s = run_batch(o, rec);
  EXPECT_TRUE(fs::exists(stray));
  EXPECT_FALSE(fs::exists(own));
  EXPECT_EQ(s.cleaned_temps, 1u);
  o.output_dir.clear();
  o.in_place = true;
  Recorder in_place;
  run_batch(o, in_place);
  EXPECT_FALSE(fs::exists(stray));
}

// An input that is itself a mirror holds a journal of the same name: it must not replace (or,
// as a link, redirect) this mirror's live journal. An input inside the output directory would be
// overwritten by the mirror: refused.
TEST_F(RunBatch, AnInputNeitherTakesTheJournalsPlaceNorLiesInsideTheOutput) {
  fs::create_directories(dir_ / "victim");
  fs::create_symlink("../victim/db", dir_ / "in" / ".lighten-journal.sqlite");
  write_file(dir_ / "in" / ".lighten-journal.sqlite-wal", {'w', 'a', 'l'});
  auto o = options();
  o.output_dir = (dir_ / "out").string();
  for (int run = 0; run < 2; ++run) {
    Recorder rec;
    const BatchSummary s = run_batch(o, rec);
    EXPECT_EQ(s.io_errors, 0u);
    EXPECT_EQ(s.total.kept.at(Reason::kSkipped), 2u);
    EXPECT_EQ(rec.discovered, rec.results.size());
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(dir_ / "out" / ".lighten-journal.sqlite")));
    EXPECT_TRUE(fs::is_empty(dir_ / "victim"));
  }
  // Every file but the -wal one left out (the dangling link is no file).
  EXPECT_EQ(read_journal((dir_ / "out" / ".lighten-journal.sqlite").string(), "").size(),
            snapshot(dir_ / "in").size() - 1);
  // Without a journal too: a later run with one would take the copy for its own.
  {
    auto plain = o;
    plain.output_dir = (dir_ / "plain").string();
    plain.use_journal = false;
    Recorder rec;
    const BatchSummary s = run_batch(plain, rec);
    EXPECT_EQ(s.total.kept.at(Reason::kSkipped), 2u);
    EXPECT_FALSE(fs::exists(fs::symlink_status(dir_ / "plain" / ".lighten-journal.sqlite")));
    EXPECT_FALSE(fs::exists(dir_ / "plain" / ".lighten-journal.sqlite-wal"));
  }

  o.output_dir = dir_.path().string();
  Recorder rec;
  const auto before = snapshot(dir_ / "in");
  try {
    run_batch(o, rec);
    ADD_FAILURE() << "an input inside the output directory was mirrored";
  } catch (const BatchOptionError& e) {
    EXPECT_NE(std::string(e.what()).find("lies inside the output directory"), std::string::npos)
        << e.what();
  }
  o.inputs = {(dir_ / "in" / "gray.jpg").string()};
  o.output_dir = (dir_ / "in").string() + "/";
  EXPECT_THROW(run_batch(o, rec), BatchOptionError);
  o.output_dir = (dir_ / "in" / "new" / "..").string();  // not there yet, and its parent
  EXPECT_THROW(run_batch(o, rec), BatchOptionError);
  // A link inside the output directory is there itself, wherever it leads.
  fs::create_symlink("../in/gray.jpg", dir_ / "victim" / "link.jpg");
  o.inputs = {(dir_ / "victim" / "link.jpg").string()};
  o.output_dir = (dir_ / "victim").string();
  EXPECT_THROW(run_batch(o, rec), BatchOptionError);
  EXPECT_TRUE(fs::is_symlink(dir_ / "victim" / "link.jpg"));
  // And where it leads: a link outside to a file inside the output directory.
  fs::create_symlink("in/iptc.jpg", dir_ / "outer.jpg");
  o.inputs = {(dir_ / "outer.jpg").string()};
  o.output_dir = (dir_ / "in").string();
  EXPECT_THROW(run_batch(o, rec), BatchOptionError);
  EXPECT_EQ(snapshot(dir_ / "in"), before);
}

// --link-unchanged with --follow-symlinks: the mirror's hard link is to the file, not to the
// input's link (whose relative text may lead nowhere from the mirror).
TEST_F(RunBatch, HardLinksOfFollowedLinksAreToTheFile) {
  fs::create_directories(dir_ / "elsewhere");
  write_file(dir_ / "elsewhere" / "notes.txt", {'n', 'o', 't', 'e', 's'});
  fs::create_symlink("../elsewhere/notes.txt", dir_ / "in" / "notes-link.txt");
  auto o = options();
  o.output_dir = (dir_ / "out").string();
  o.follow_symlinks = true;
  o.unchanged = UnchangedFiles::kHardlink;
  Recorder rec;
  EXPECT_EQ(run_batch(o, rec).io_errors, 0u);
  EXPECT_FALSE(fs::is_symlink(dir_ / "out" / "notes-link.txt"));
  EXPECT_TRUE(fs::equivalent(dir_ / "out" / "notes-link.txt", dir_ / "elsewhere" / "notes.txt"));
}

// In place, a link that is followed (or given as an input) stays a link: the file it leads to
// is optimised, once, under its own name where the tree holds it.
TEST_F(RunBatch, InPlaceLinksStayLinksAndTheirFilesAreOptimisedOnce) {
  copy_into({dir_ / "in" / "gray.jpg"}, dir_ / "elsewhere");
  fs::create_symlink("../elsewhere/gray.jpg", dir_ / "in" / "outside.jpg");
  fs::create_symlink("gray.jpg", dir_ / "in" / "gray-link.jpg");
  fs::create_symlink("sub", dir_ / "in" / "sub-link");
  const auto original = read_file(dir_ / "elsewhere" / "gray.jpg");
  auto o = options();
  o.in_place = true;
  o.follow_symlinks = true;
  Recorder rec;
  const BatchSummary s = run_batch(o, rec);
  EXPECT_EQ(s.io_errors + s.failures, 0u);
  EXPECT_TRUE(fs::is_symlink(dir_ / "in" / "outside.jpg"));
  EXPECT_TRUE(fs::is_symlink(dir_ / "in" / "gray-link.jpg"));
  EXPECT_LT(fs::file_size(dir_ / "elsewhere" / "gray.jpg"), original.size());
  EXPECT_LT(fs::file_size(dir_ / "in" / "gray.jpg"), original.size());
  // gray-link.jpg and the two files reached through sub-link are the same files as others.
  size_t same = 0;
  for (const auto& r : rec.results)
    if (r.message.find("the same file as " + dir_.path().string()) != std::string::npos) ++same;
  EXPECT_EQ(same, 3u);
  EXPECT_EQ(rec.discovered, rec.results.size());
  EXPECT_TRUE(fs::is_symlink(dir_ / "in" / "sub-link"));
  // A folder link given as an input with a trailing slash is still a link.
  auto both = o;
  both.inputs = {(dir_ / "in" / "sub").string(), (dir_ / "in" / "sub-link").string() + "/"};
  Recorder twice;
  const BatchSummary folders = run_batch(both, twice);
  EXPECT_EQ(folders.total.kept.at(Reason::kSkipped), 2u);  // sub-link/'s two files
  // The journal holds what was written, also through a link: a second run redoes nothing.
  Recorder second;
  const BatchSummary again = run_batch(o, second);
  EXPECT_EQ(again.from_journal, again.total.files - again.total.kept.at(Reason::kSkipped));

  // A link given as the input, without --follow-symlinks: the same.
  write_file(dir_ / "elsewhere" / "gray.jpg", original);
  o.inputs = {(dir_ / "in" / "outside.jpg").string()};
  o.follow_symlinks = false;
  Recorder given;
  EXPECT_EQ(run_batch(o, given).total.replaced, 1u);
  EXPECT_TRUE(fs::is_symlink(dir_ / "in" / "outside.jpg"));
  EXPECT_LT(fs::file_size(dir_ / "elsewhere" / "gray.jpg"), original.size());

  // The link given beside the folder that holds it: one row for it, before or after the folder.
  for (const bool link_first : {false, true}) {
    write_file(dir_ / "elsewhere" / "gray.jpg", original);
    const std::string link = (dir_ / "in" / "outside.jpg").string();
    const std::string folder = (dir_ / "in").string();
    o.inputs = link_first ? std::vector<std::string>{link, folder}
                          : std::vector<std::string>{folder, link};
    Recorder beside;
    run_batch(o, beside);
    size_t rows = 0;
    for (const auto& r : beside.results) rows += r.path == link;
    EXPECT_EQ(rows, 1u) << link_first;
    EXPECT_EQ(beside.discovered, beside.results.size());
    EXPECT_LT(fs::file_size(dir_ / "elsewhere" / "gray.jpg"), original.size());
  }
  // A folder link beside the folder that holds it: rows for its files, none for the link.
  const std::string sub_link = (dir_ / "in" / "sub-link").string();
  o.inputs = {(dir_ / "in").string(), sub_link};
  Recorder folder_beside;
  run_batch(o, folder_beside);
  size_t under_link = 0;
  for (const auto& r : folder_beside.results) {
    EXPECT_NE(r.path, sub_link);
    under_link += r.path.starts_with(sub_link + "/");
  }
  EXPECT_EQ(under_link, 2u);
  EXPECT_EQ(folder_beside.discovered, folder_beside.results.size());
}

TEST(RunBatchErrors, BadOptionsThrow) {
  Recorder rec;
  BatchOptions o;
  o.inputs = {"/nonexistent"};
  EXPECT_THROW(run_batch(o, rec), BatchOptionError);  // neither output nor in-place
  o.in_place = true;
  o.output_dir = "/tmp/x";
  EXPECT_THROW(run_batch(o, rec), BatchOptionError);
}

}  // namespace
}  // namespace lighten::testing
