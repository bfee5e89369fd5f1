// Unit tests of the batch pieces: walk, shards, journal, atomic writes, scheduler.
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

#include "batch/journal.h"
#include "batch/memory_estimate.h"
#include "batch/process.h"
#include "batch/scheduler.h"
#include "batch/shard.h"
#include "batch/store.h"
#include "batch/test_support.h"
#include "batch/walk.h"
#include "lighten/options.h"

namespace lighten::testing {
namespace {

void touch(const fs::path& path, const std::string& content = "x") {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << content;
}

std::vector<std::string> paths_of(const batch::WalkResult& r) {
  std::vector<std::string> out;
  for (const auto& e : r.files) out.push_back(e.relative);
  return out;
}

// Only a write of data, a file or a folder that found no space stops a mirror's run: ext4 also
// says ENOSPC for an extended attribute too large for its inode, whatever the free space.
TEST(DestinationFull, OnlyWritesThatFindNoSpaceCount) {
  batch::DestinationFull full;
  full.note(batch::IoStatus::fail("setxattr user.big", "/out/a.bin", ENOSPC));
  full.note(batch::IoStatus::fail("write", "/out/a.bin", EIO));
  full.note(batch::IoStatus::fail("read into a temporary file", "/in/a.mp4", ENOSPC));
  EXPECT_FALSE(full.hit());
  EXPECT_EQ(full.message(), "");
  full.note(batch::IoStatus::fail("write", "/out/b.bin", EDQUOT));
  EXPECT_TRUE(full.hit());
  full.note(batch::IoStatus::fail("create directory", "/out/c", ENOSPC));
  EXPECT_EQ(full.message(), batch::IoStatus::fail("write", "/out/b.bin", EDQUOT).message);
}

// An in-place run's temp file lies beside the original it replaces until the rename: in an input
// tree, a file named like one beside no such file is the user's, walked and never removed (any
// six characters after the marker were taken for mkstemp's, and the file deleted).
TEST(Walk, OnlyATempBesideItsFileIsAStray) {
  TempDir dir;
  auto root = dir / "in";
  touch(root / "b.jpg");
  touch(root / ".b.jpg.lighten-tmp-Ab12Cd");
  touch(root / ".notes.lighten-tmp-backup");
  const std::string long_name(230, 'n');
  touch(root / (long_name + ".jpg"));
  touch(root / (batch::temp_prefix(long_name + ".jpg") + "Zz9Yy8"));  // cut: the file is found
  auto store = batch::make_local_store();
  batch::WalkOptions options;
  options.temps_beside_their_file = true;
  const auto r = batch::walk(*store, {root.string()}, options);
  EXPECT_EQ(paths_of(r),
            (std::vector<std::string>{".notes.lighten-tmp-backup", "b.jpg", long_name + ".jpg"}));
  EXPECT_EQ(r.cleaned_temps, 2u);
  EXPECT_TRUE(fs::exists(root / ".notes.lighten-tmp-backup"));
  EXPECT_FALSE(fs::exists(root / ".b.jpg.lighten-tmp-Ab12Cd"));
}

TEST(Walk, SortedRecursiveSkipsTempsJournalAndSymlinks) {
  TempDir dir;
  auto root = dir / "in";
  touch(root / "b.jpg");
  touch(root / "a" / "z.png");
  touch(root / "a" / "c" / "y.pdf");
  touch(root / "A.jpg");
  touch(root / ".b.jpg.lighten-tmp-Ab12Cd");  // a stray of a killed run
  touch(root / "journal.sqlite");
  fs::create_symlink(root / "b.jpg", root / "link.jpg");
  auto store = batch::make_local_store();
  batch::WalkOptions options;
  options.exclude_paths = {(root / "journal.sqlite").string()};
  auto r = batch::walk(*store, {root.string()}, options);
  EXPECT_EQ(paths_of(r), (std::vector<std::string>{"A.jpg", "a/c/y.pdf", "a/z.png", "b.jpg"}));
  EXPECT_EQ(r.cleaned_temps, 1u);
  EXPECT_FALSE(fs::exists(root / ".b.jpg.lighten-tmp-Ab12Cd"));
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_FALSE(r.problems[0].io_error);
  EXPECT_NE(r.problems[0].path.find("link.jpg"), std::string::npos);
  EXPECT_EQ(r.total_bytes, 4u);

  // A mirror collects them to make them again, with their text.
  options.collect_links = true;
  r = batch::walk(*store, {root.string()}, options);
  EXPECT_TRUE(r.problems.empty());
  ASSERT_EQ(r.links.size(), 1u);
  EXPECT_EQ(r.links[0].relative, "link.jpg");
  EXPECT_EQ(r.links[0].text, (root / "b.jpg").string());

  options.follow_symlinks = true;
  r = batch::walk(*store, {root.string()}, options);
  EXPECT_EQ(paths_of(r).size(), 5u);
  EXPECT_TRUE(r.links.empty());
  EXPECT_TRUE(r.files.back().through_link);  // link.jpg, last in byte order

  // A followed link that leads nowhere is skipped, not an I/O failure a new run could mend.
  fs::create_symlink(root / "gone.jpg", root / "dangling.jpg");
  r = batch::walk(*store, {root.string()}, options);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_FALSE(r.problems[0].io_error);
  EXPECT_NE(r.problems[0].message.find("leads nowhere"), std::string::npos);
}

TEST(Walk, ExcludedOutputDirectoryAndSeveralInputs) {
  TempDir dir;
  touch(dir / "in" / "x.jpg");
  touch(dir / "in" / "out" / "x.jpg");
  touch(dir / "other" / "y.jpg");
  touch(dir / "single.jpg");
  auto store = batch::make_local_store();
  batch::WalkOptions options;
  options.exclude_paths = {(dir / "in" / "out").string()};
  auto r = batch::walk(*store, {(dir / "in").string()}, options);
  EXPECT_EQ(paths_of(r), (std::vector<std::string>{"x.jpg"}));
  r = batch::walk(*store,
                  {(dir / "in").string(), (dir / "other").string(), (dir / "single.jpg").string()},
                  options);
  EXPECT_EQ(paths_of(r), (std::vector<std::string>{"in/x.jpg", "other/y.jpg", "single.jpg"}));
}

// The probe measures a mirror as a data set: the journals lighten keeps there are not part of it.
TEST(Walk, JournalsAMirrorHoldsAreSkippedWhenAsked) {
  TempDir dir;
  touch(dir / "m" / "x.jpg");
  for (const char* name :
       {".lighten-journal.sqlite", ".lighten-journal.sqlite-wal", ".lighten-journal.sqlite-shm",
        ".lighten-journal.shard-1-of-2.sqlite", "sub/.lighten-journal.sqlite-journal"})
    touch(dir / "m" / name);
  touch(dir / "m" / ".lighten-journal.txt");
  touch(dir / "m" / "lighten-journal.sqlite");
  auto store = batch::make_local_store();
  batch::WalkOptions options;
  EXPECT_EQ(batch::walk(*store, {(dir / "m").string()}, options).files.size(), 8u);
  options.skip_journals = true;
  EXPECT_EQ(paths_of(batch::walk(*store, {(dir / "m").string()}, options)),
            (std::vector<std::string>{".lighten-journal.txt", "lighten-journal.sqlite", "x.jpg"}));
}

TEST(Walk, AFileNamedTwiceIsWalkedOnce) {
  TempDir dir;
  touch(dir / "in" / "sub" / "x.jpg");
  auto store = batch::make_local_store();
  auto r = batch::walk(*store,
                       {(dir / "in").string(), (dir / "in" / "sub").string(),
                        (dir / "in" / "sub" / ".." / "sub" / "x.jpg").string()},
                       {});
  EXPECT_EQ(r.files.size(), 1u);
}

// A temp file whose name was cut (its file's name is long) no longer tells its file: the run
// decides by "" whether it owns it (a shard does not; it used to remove it whatever it was).
TEST(Walk, TempFilesOfOtherShardsAreLeftAlone) {
  TempDir dir;
  touch(dir / ".mine.jpg.lighten-tmp-aaaaaa");
  touch(dir / ".theirs.jpg.lighten-tmp-bbbbbb");
  const std::string cut = "." + std::string(200, 'n') + ".lighten-tmp-cccccc";
  touch(dir / cut);
  auto store = batch::make_local_store();
  batch::WalkOptions options;
  std::vector<std::string> asked;
  options.owns_temp = [&](const std::string& relative) {
    asked.push_back(relative);
    return relative == "mine.jpg";
  };
  auto r = batch::walk(*store, {dir.path().string()}, options);
  EXPECT_EQ(r.cleaned_temps, 1u);
  EXPECT_TRUE(fs::exists(dir / ".theirs.jpg.lighten-tmp-bbbbbb"));
  EXPECT_TRUE(fs::exists(dir / cut));
  EXPECT_NE(std::find(asked.begin(), asked.end(), ""), asked.end());
}

TEST(Shard, ParseAcceptsKOfNAndRefusesTheRest) {
  auto s = parse_shard("2/8");
  EXPECT_EQ(s.index, 1u);
  EXPECT_EQ(s.count, 8u);
  for (const char* bad : {"0/3", "4/3", "1/0", "", "1", "/3", "a/3", "1/3x", "-1/3", "1/ 3"})
    EXPECT_THROW(parse_shard(bad), OptionError) << bad;
}

TEST(Shard, AssignmentIsStableAndCoversEveryShard) {
  // Fixed values: a change here breaks resuming job arrays started with an older build.
  EXPECT_EQ(batch::shard_of("photos/2019/IMG_0001.jpg", 7),
            batch::shard_of(std::string("photos/2019/") + "IMG_0001.jpg", 7));
  std::vector<int> counts(3);
  for (int i = 0; i < 300; ++i) ++counts[batch::shard_of(std::to_string(i) + ".jpg", 3)];
  for (int c : counts) EXPECT_GT(c, 60);
  EXPECT_EQ(batch::shard_of("anything", 1), 0u);
  EXPECT_TRUE(batch::in_shard("x", Shard{0, 1}));
}

batch::JournalRow row(const std::string& path, int64_t done, Action action) {
  batch::JournalRow r;
  r.path = path;
  r.size = 1000;
  r.mtime_ns = 123456789012345678;
  r.hash = "0123456789abcdef";
  r.kind = Kind::kUnknown;
  r.action = action;
  r.reason = action == Action::kReplaced ? Reason::kOptimized : Reason::kNoGain;
  r.message = "m";
  r.detail = "d";
  r.bytes_before = 1000;
  r.bytes_after = action == Action::kReplaced ? 800 : 1000;
  r.out_size = r.bytes_after;
  r.out_mtime_ns = r.mtime_ns;
  r.ms = 1.5;
  r.run_id = "run-" + std::to_string(done);
  r.policy_fingerprint = "fp";
  r.done_ns = done;
  return r;
}

TEST(Journal, RoundTripAndMerge) {
  TempDir dir;
  auto a = (dir / "a.sqlite").string();
  auto b = (dir / "b.sqlite").string();
  {
    batch::Journal j(a);
    j.begin_run("run-1", "mode=lossless\n");
    for (int i = 0; i < 450; ++i)  // more than one commit batch
      j.record(row("/t/f" + std::to_string(i), 1, i % 2 ? Action::kReplaced : Action::kKept));
    j.record(row("/t/shared", 1, Action::kKept));
  }
  {
    batch::Journal j(a);
    auto r = j.find("/t/f1");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->size, 1000u);
    EXPECT_EQ(r->mtime_ns, 123456789012345678);
    EXPECT_EQ(r->action, Action::kReplaced);
    EXPECT_EQ(r->reason, Reason::kOptimized);
    EXPECT_EQ(r->out_size, 800u);
    EXPECT_EQ(r->hash, "0123456789abcdef");
    EXPECT_EQ(r->policy_fingerprint, "fp");
    EXPECT_FALSE(j.find("/t/none"));
  }
  {
    batch::Journal j(b);
    j.begin_run("run-2", "mode=lossless\n");
    j.record(row("/t/shared", 2, Action::kReplaced));  // newer: wins the merge
    j.record(row("/t/only-b", 2, Action::kKept));
  }
  auto results = read_journal(a, "run-1");
  ASSERT_EQ(results.size(), 451u);
  EXPECT_TRUE(std::is_sorted(results.begin(), results.end(),
                             [](auto& x, auto& y) { return x.path < y.path; }));
  auto merged = (dir / "merged.sqlite").string();
  EXPECT_EQ(merge_journals({a, b}, merged), 452u);
  EXPECT_EQ(merge_journals({b, a}, merged), 452u);  // order and repetition do not matter
  batch::Journal m(merged);
  EXPECT_EQ(m.find("/t/shared")->action, Action::kReplaced);
  EXPECT_EQ(read_journal(merged, "run-2").size(), 2u);
  EXPECT_THROW(merge_journals({(dir / "missing.sqlite").string()}, merged), std::runtime_error);
}

// Shards may share one journal: each replaces the walk rows of its own earlier runs only, where
// the second shard's walk used to wipe the first's; a run of the whole tree replaces them all.
TEST(Journal, ShardsSharingAJournalKeepEachOthersWalkRows) {
  TempDir dir;
  const std::string path = (dir / "j.sqlite").string();
  const auto walk_row = [](const std::string& p) {
    FileResult r;
    r.path = p;
    r.reason = Reason::kIoError;
    r.message = "dangling link";
    return r;
  };
  const auto walk_paths = [&] {
    std::vector<std::string> paths;
    sqlite3* db = nullptr;
    sqlite3_stmt* s = nullptr;
    if (sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT path FROM walk_rows ORDER BY path", -1, &s, nullptr) ==
            SQLITE_OK)
      while (sqlite3_step(s) == SQLITE_ROW)
        paths.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
    sqlite3_finalize(s);
    sqlite3_close(db);
    return paths;
  };
  {
    batch::Journal j(path);
    j.replace_walk_rows("r1.shard-1-of-2", {walk_row("/t/a")}, ".shard-1-of-2");
    j.replace_walk_rows("r1.shard-2-of-2", {walk_row("/t/b")}, ".shard-2-of-2");
    j.flush();
  }
  EXPECT_EQ(walk_paths(), (std::vector<std::string>{"/t/a", "/t/b"}));
  {
    batch::Journal j(path);
    j.replace_walk_rows("r2.shard-1-of-2", {}, ".shard-1-of-2");  // shard 1's problem is gone
    j.flush();
  }
  EXPECT_EQ(walk_paths(), std::vector<std::string>{"/t/b"});
  {
    batch::Journal j(path);
    j.replace_walk_rows("r3", {walk_row("/t/c")}, "");
    j.flush();
  }
  EXPECT_EQ(walk_paths(), std::vector<std::string>{"/t/c"});
}

// Every input is checked before the output is touched: a photo given among the journals is named
// as the one at fault, and no merged journal is left half made.
TEST(Journal, MergeRefusesAnInputThatIsNotAJournalAndWritesNothing) {
  TempDir dir;
  const auto a = (dir / "a.sqlite").string();
  {
    batch::Journal j(a);
    j.begin_run("run-1", "mode=lossless\n");
    j.record(row("/t/f", 1, Action::kReplaced));
  }
  const auto photo = (dir / "photo.jpg").string();
  write_file(photo, {0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 'J', 'F', 'I', 'F', 0});
  const auto merged = (dir / "merged.sqlite").string();
  try {
    merge_journals({a, photo}, merged);
    ADD_FAILURE() << "a JPEG was merged as a journal";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("journal " + photo + ": not a journal"), std::string::npos) << message;
  }
  EXPECT_FALSE(fs::exists(merged));
}

TEST(Store, AtomicWriteKeepsModeTimesAndExtendedAttributes) {
  TempDir dir;
  auto path = (dir / "f.bin").string();
  touch(path, "original content");
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  bool xattrs = ::setxattr(path.c_str(), "user.lighten-test", "v1", 2, 0) == 0;
  struct timespec times[2] = {{1'500'000'000, 111'222'333}, {1'600'000'000, 444'555'666}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);

  auto store = batch::make_local_store();
  std::vector<uint8_t> bytes;
  batch::FileStat st;
  ASSERT_TRUE(store->read(path, bytes, st).ok());
  EXPECT_EQ(st.mtime_ns, 1'600'000'000'444'555'666);
  std::vector<uint8_t> smaller = {'n', 'e', 'w'};
  auto s = store->write_atomic(path, smaller, path, &st);
  ASSERT_TRUE(s.ok()) << s.message;

  struct stat after;  // before reading it back, which would move the atime
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_EQ(read_file(path), smaller);
  EXPECT_EQ(after.st_mode & 07777, 0640u);
  EXPECT_EQ(after.st_mtim.tv_sec, 1'600'000'000);
  EXPECT_EQ(after.st_mtim.tv_nsec, 444'555'666);
  EXPECT_EQ(after.st_atim.tv_sec, 1'500'000'000);
  if (xattrs) {
    char value[8] = {};
    EXPECT_EQ(::getxattr(path.c_str(), "user.lighten-test", value, sizeof value), 2);
    EXPECT_STREQ(value, "v1");
  } else {
    std::cout << "[ note ] user xattrs unsupported here; xattr copy not checked\n";
  }
  EXPECT_FALSE(has_temp_files(dir.path()));
}

// In place, the journal is found by the inputs' names: "d/", as tab completion writes it, and
// "d/." are the tree "d" is, and resume from its journal.
TEST(Journal, TheDefaultJournalOfAFolderIgnoresATrailingSlash) {
  ::setenv("XDG_STATE_HOME", "/tmp/lighten-state-test", 1);
  BatchOptions options;
  options.in_place = true;
  options.inputs = {"photos"};
  const std::string plain = default_journal_path(options);
  for (const char* same : {"photos/", "photos//", "photos/."}) {
    options.inputs = {same};
    EXPECT_EQ(default_journal_path(options), plain) << same;
  }
  options.inputs = {"other"};
  EXPECT_NE(default_journal_path(options), plain);
  ::unsetenv("XDG_STATE_HOME");
}

// A row is committed within about a second even when no other row follows it (the next file
// may take minutes): a run killed meanwhile keeps it, and another process sees it.
TEST(Journal, ARowIsCommittedWithoutWaitingForTheNext) {
  TempDir dir;
  const std::string path = (dir / "j.sqlite").string();
  batch::Journal journal(path);
  journal.begin_run("run", "policy");
  batch::JournalRow row;
  row.path = "/a.jpg";
  row.run_id = "run";
  journal.record(row);
  batch::Journal other(path, false);
  const auto deadline = std::chrono::steady_clock::now() + 3 * batch::kJournalBatchTime;
  while (!other.find("/a.jpg") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(other.find("/a.jpg").has_value());
}

// A mirror run's row holds only while the mirror still has the copy it wrote: once that is gone
// the file is done again, and the scheduler must price it as a file to do, not as nothing.
TEST(Journal, AMirrorsRowHoldsOnlyWhileTheMirrorHasItsCopy) {
  TempDir dir;
  const fs::path in = dir / "in" / "a.jpg", out = dir / "out" / "a.jpg";
  touch(in.string(), "input bytes");
  touch(out.string(), "out");
  auto store = batch::make_local_store();
  batch::FileStat in_stat, out_stat;
  ASSERT_TRUE(store->stat(in.string(), false, in_stat).ok());
  ASSERT_TRUE(store->stat(out.string(), false, out_stat).ok());
  batch::Journal journal((dir / "j.sqlite").string());
  journal.begin_run("run", "policy");
  batch::JournalRow row;
  row.path = batch::journal_key(in.string());
  row.size = in_stat.size;
  row.mtime_ns = in_stat.mtime_ns;
  row.action = Action::kReplaced;
  row.reason = Reason::kOptimized;
  row.out_size = out_stat.size;
  row.out_mtime_ns = out_stat.mtime_ns;
  row.run_id = "run";
  row.policy_fingerprint = "policy";
  journal.record(row);
  journal.flush();
  BatchOptions options;
  options.output_dir = (dir / "out").string();
  const batch::RunContext context{.options = options,
                                  .store = *store,
                                  .journal = &journal,
                                  .run_id = "run",
                                  .policy_fingerprint = "policy"};
  const batch::WalkEntry entry{.path = in.string(), .relative = "a.jpg", .stat = in_stat};
  EXPECT_TRUE(batch::journal_says_done(context, entry));
  fs::remove(out);
  EXPECT_FALSE(batch::journal_says_done(context, entry));
}

// Runs `body` in a child process (which may change its user or mounts) and returns its exit
// status: 0 for success, 77 when the child could not set itself up.
int in_child(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}

// A user other than root who may write the folder, replacing a file of another owner in place,
// would make it the user's: the file is left as it is with a reason.
TEST(Store, InPlaceLeavesFilesOfOtherOwnersAsTheyAre) {
  if (::geteuid() != 0) GTEST_SKIP() << "making a file of another owner takes root";
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
  const std::string path = (dir / "f.bin").string();
  touch(path, "original content");
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);  // root's
  const int status = in_child([&] {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) return 77;
    auto store = batch::make_local_store();
    const std::vector<uint8_t> smaller = {'n', 'e', 'w'};
    const batch::IoStatus s = store->write_atomic(path, smaller, path, nullptr);
    if (s.ok()) return 1;
    return s.message.find("belongs to uid 0") != std::string::npos ? 0 : 2;
  });
  if (status == 77) GTEST_SKIP() << "cannot become nobody here";
  EXPECT_EQ(status, 0);
  EXPECT_EQ(read_file(path), std::vector<uint8_t>({'o', 'r', 'i', 'g', 'i', 'n', 'a', 'l', ' ', 'c',
                                                   'o', 'n', 't', 'e', 'n', 't'}));
  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_EQ(after.st_uid, 0u);
  EXPECT_FALSE(has_temp_files(dir.path()));
}

// In a set-group-ID folder a new file takes the folder's group, not the user's: the replaced
// file keeps its own group all the same (it became the folder's without a word).
TEST(Store, InPlaceKeepsTheGroupInASetGroupIdFolder) {
  if (::geteuid() != 0) GTEST_SKIP() << "making a folder of another group takes root";
  TempDir dir;
  const fs::path folder = dir / "shared";
  fs::create_directories(folder);
  ASSERT_EQ(::chown(folder.c_str(), 0, 100), 0);
  ASSERT_EQ(::chmod(folder.c_str(), 02777), 0);
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  const std::string path = (folder / "a.bin").string();
  touch(path, "original content");
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  const int status = in_child([&] {
    const gid_t groups[] = {100};
    if (::setgroups(1, groups) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) return 77;
    auto store = batch::make_local_store();
    const std::vector<uint8_t> smaller = {'n', 'e', 'w'};
    return store->write_atomic(path, smaller, path, nullptr).ok() ? 0 : 1;
  });
  if (status == 77) GTEST_SKIP() << "cannot become nobody here";
  EXPECT_EQ(status, 0);
  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_EQ(after.st_gid, 65534u);
  EXPECT_EQ(after.st_mode & 07777, 0640u);
}

// A mirror on a filesystem that holds no extended attributes (ramfs here; NFSv3, SMB and exFAT
// alike) gets the file without them, and the write says which it left out.
TEST(Store, AMirrorWithoutExtendedAttributesGetsTheFileAndANote) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a ramfs takes root";
  TempDir dir;
  const std::string source = (dir / "f.bin").string();
  touch(source, "original content");
  if (::setxattr(source.c_str(), "user.lighten-test", "v1", 2, 0) != 0)
    GTEST_SKIP() << "user xattrs unsupported here";
  const fs::path mount = dir / "ramfs";
  fs::create_directories(mount);
  const int status = in_child([&] {
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("none", mount.c_str(), "ramfs", 0, nullptr) != 0)
      return 77;
    if (::setxattr((mount / "probe").c_str(), "user.x", "v", 1, 0) == 0) return 77;
    auto store = batch::make_local_store();
    const std::vector<uint8_t> smaller = {'n', 'e', 'w'};
    const batch::IoStatus s =
        store->write_atomic((mount / "f.bin").string(), smaller, source, nullptr);
    if (!s.ok()) return 1;
    if (s.note.find("user.lighten-test") == std::string::npos) return 2;
    return read_file(mount / "f.bin") == smaller ? 0 : 3;
  });
  if (status == 77) GTEST_SKIP() << "no ramfs without extended attributes can be mounted here";
  EXPECT_EQ(status, 0);
}

// As root, a mirror whose filesystem refuses the owner (NFS with root squashing, exFAT; here a
// user namespace that maps no uid but root's, where the source's owner cannot be named) gets
// the file without it, and the write says so; in place the original stays as it is, and the
// message names the file, not lighten's temp file.
TEST(Store, AMirrorThatRefusesTheOwnerGetsTheFileAndANote) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file another owner takes root";
  TempDir dir;
  const std::string source = (dir / "f.bin").string();
  touch(source, "original content");
  ASSERT_EQ(::chown(source.c_str(), 1234, 1234), 0);
  const std::string mirrored = (dir / "out.bin").string();
  const int status = in_child([&] {
    if (::unshare(CLONE_NEWUSER) != 0) return 77;
    const int groups = ::open("/proc/self/setgroups", O_WRONLY);  // for gid_map, where not root
    if (groups >= 0 && ::write(groups, "deny", 4) != 4) return 77;
    if (groups >= 0) ::close(groups);
    for (const char* map : {"/proc/self/uid_map", "/proc/self/gid_map"}) {
      const int fd = ::open(map, O_WRONLY);
      const bool written = fd >= 0 && ::write(fd, "0 0 1", 5) == 5;
      if (fd >= 0) ::close(fd);
      if (!written) return 77;
    }
    auto store = batch::make_local_store();
    const std::vector<uint8_t> smaller = {'n', 'e', 'w'};
    const batch::IoStatus s = store->write_atomic(mirrored, smaller, source, nullptr);
    if (!s.ok()) return 1;
    if (s.note.find("owner not kept") == std::string::npos) return 2;
    if (read_file(mirrored) != smaller) return 3;
    const batch::IoStatus in_place = store->write_atomic(source, smaller, source, nullptr);
    if (in_place.ok()) return 4;
    if (in_place.message.find("chown " + source + ":") == std::string::npos) return 5;
    return 0;
  });
  if (status == 77) GTEST_SKIP() << "no user namespace can be made here";
  EXPECT_EQ(status, 0);
  EXPECT_EQ(read_file(source), std::vector<uint8_t>({'o', 'r', 'i', 'g', 'i', 'n', 'a', 'l', ' ',
                                                     'c', 'o', 'n', 't', 'e', 'n', 't'}));
  EXPECT_FALSE(has_temp_files(dir.path()));
}

// A file replaced in place does not take its folder's default ACL: one that had no ACL keeps
// its mode as the only say on who may read it (a default ACL granting another user would have
// opened it to that user).
TEST(Store, InPlaceDoesNotTakeTheFoldersDefaultAcl) {
  TempDir dir;
  const std::string path = (dir / "f.bin").string();
  touch(path, "original content");
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  // POSIX ACL xattr, version 2: user::rwx, user:65534:rw-, group::r-x, mask::rwx, other::---.
  std::vector<uint8_t> acl = {2, 0, 0, 0};
  for (const auto& [tag, perm, id] :
       std::vector<std::tuple<uint16_t, uint16_t, uint32_t>>{{0x01, 7, 0xFFFFFFFF},
                                                             {0x02, 6, 65534},
                                                             {0x04, 5, 0xFFFFFFFF},
                                                             {0x10, 7, 0xFFFFFFFF},
                                                             {0x20, 0, 0xFFFFFFFF}}) {
    for (int i = 0; i < 2; ++i) acl.push_back(uint8_t(tag >> (8 * i)));
    for (int i = 0; i < 2; ++i) acl.push_back(uint8_t(perm >> (8 * i)));
    for (int i = 0; i < 4; ++i) acl.push_back(uint8_t(id >> (8 * i)));
  }
  if (::setxattr(dir.path().c_str(), "system.posix_acl_default", acl.data(), acl.size(), 0) != 0)
    GTEST_SKIP() << "this filesystem holds no POSIX ACLs";
  auto store = batch::make_local_store();
  const std::vector<uint8_t> smaller = {'n', 'e', 'w'};
  const batch::IoStatus s = store->write_atomic(path, smaller, path, nullptr);
  ASSERT_TRUE(s.ok()) << s.message;
  EXPECT_EQ(read_file(path), smaller);
  EXPECT_LT(::getxattr(path.c_str(), "system.posix_acl_access", nullptr, 0), 0);
  EXPECT_EQ(errno, ENODATA);
  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_EQ(after.st_mode & 07777, 0640u);
}

// A private folder stays private in the mirror: each folder made takes the permissions of the
// input's folder it mirrors (the owner's always, for the files to go in); folders already there
// are left as they are.
TEST(Store, MirrorFoldersTakeTheInputFoldersPermissions) {
  TempDir dir;
  const fs::path input = dir / "in", file = input / "private" / "team" / "a.jpg";
  fs::create_directories(file.parent_path());
  touch(file.string(), "x");
  ASSERT_EQ(::chmod((input / "private").c_str(), 0700), 0);
  ASSERT_EQ(::chmod((input / "private" / "team").c_str(), 0550), 0);
  auto store = batch::make_local_store();
  const std::string root = (dir / "out").string();
  ASSERT_TRUE(store->make_dirs_for(root, "private/team/a.jpg", file.string()).ok());
  struct stat st {};
  ASSERT_EQ(::stat((dir / "out" / "private").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::stat((dir / "out" / "private" / "team").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  ASSERT_EQ(::chmod((input / "private" / "team").c_str(), 0750), 0);  // for TempDir to remove
}

TEST(Store, ChangedSourceAndFailedWriteKeepTheOriginal) {
  TempDir dir;
  auto path = (dir / "f.bin").string();
  touch(path, "original content");
  auto store = batch::make_local_store();
  std::vector<uint8_t> bytes;
  batch::FileStat st;
  ASSERT_TRUE(store->read(path, bytes, st).ok());
  touch(path, "changed by someone else");
  std::vector<uint8_t> out = {'x'};
  auto s = store->write_atomic(path, out, path, &st);
  EXPECT_TRUE(s.source_changed);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(read_file(path).size(), 23u);

  auto missing = (dir / "no-such-dir" / "f.bin").string();
  s = store->write_atomic(missing, out, path, nullptr);
  EXPECT_EQ(s.error, ENOENT);
  EXPECT_NE(s.message.find("no-such-dir"), std::string::npos) << s.message;
  EXPECT_FALSE(has_temp_files(dir.path()));

  s = store->read((dir / "absent").string(), bytes, st);
  EXPECT_EQ(s.error, ENOENT);
  EXPECT_NE(s.message.find("open"), std::string::npos);
}

TEST(Store, TempNames) {
  EXPECT_TRUE(batch::is_temp_name(batch::temp_prefix("a.jpg") + "XyZ123"));
  EXPECT_EQ(batch::temp_target(batch::temp_prefix("a.jpg") + "XyZ123"), "a.jpg");
  EXPECT_FALSE(batch::is_temp_name("a.jpg"));
  EXPECT_FALSE(batch::is_temp_name(".lighten-tmp-"));
  EXPECT_FALSE(batch::is_temp_name(".a.jpg.lighten-tmp-ab_12!"));  // not mkstemp's letters
  EXPECT_TRUE(batch::temp_target(batch::temp_prefix(std::string(250, 'n')) + "abcdef").empty());
}

// The journal's folder of last resort lies in /tmp, where another user could have made it first
// with a link in it: it must be this user's and writable by no one else.
TEST(Store, APrivateFolderIsMadeOrRefused) {
  TempDir dir;
  const fs::path made = dir / "mine";
  ASSERT_TRUE(batch::make_private_dir(made.string()).ok());
  EXPECT_EQ(fs::status(made).permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_TRUE(batch::make_private_dir(made.string()).ok());  // found again
  const fs::path open = dir / "open";
  fs::create_directory(open);
  fs::permissions(open, fs::perms::all);
  EXPECT_FALSE(batch::make_private_dir(open.string()).ok());
  fs::create_directory_symlink(made, dir / "link");
  EXPECT_FALSE(batch::make_private_dir((dir / "link").string()).ok());
  touch(dir / "file");
  EXPECT_FALSE(batch::make_private_dir((dir / "file").string()).ok());
}

TEST(Scheduler, RespectsTheMemoryBudget) {
  constexpr uint64_t kBudget = 100;
  std::vector<uint64_t> estimates = {30, 30, 30, 30, 150, 10, 60, 40, 20, 20, 90, 5, 5, 5};
  std::mutex mutex;
  uint64_t in_flight = 0, peak = 0;
  bool big_alone = true;
  size_t running = 0;
  batch::Scheduler scheduler(4, kBudget);
  auto stats = scheduler.run(
      estimates.size(), [&](size_t i) { return estimates[i]; },
      [&](size_t i) {
        {
          std::lock_guard lock(mutex);
          in_flight += estimates[i];
          ++running;
          if (estimates[i] <= kBudget) peak = std::max(peak, in_flight);
          if (estimates[i] > kBudget && running != 1) big_alone = false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        {
          std::lock_guard lock(mutex);
          if (estimates[i] > kBudget && running != 1) big_alone = false;
          in_flight -= estimates[i];
          --running;
        }
      });
  EXPECT_LE(peak, kBudget);
  EXPECT_TRUE(big_alone);
  EXPECT_GE(stats.peak_running, 2u);  // it does run in parallel
  EXPECT_EQ(stats.peak_in_flight, 150u);
}

TEST(Scheduler, EstimatesEachTaskOnceInIndexOrder) {
  std::mutex mutex;
  std::vector<size_t> asked;
  batch::Scheduler scheduler(3, 100);
  scheduler.run(
      40,
      [&](size_t i) {
        std::lock_guard lock(mutex);
        asked.push_back(i);
        return uint64_t(i % 7 == 0 ? 150 : 30);  // some larger than the budget, run alone
      },
      [&](size_t) { std::this_thread::sleep_for(std::chrono::milliseconds(1)); });
  ASSERT_EQ(asked.size(), 40u);
  for (size_t i = 0; i < asked.size(); ++i) EXPECT_EQ(asked[i], i);
}

// What a test sees in flight: the estimates of the tasks running and the reservations held.
struct Ledger {
  std::mutex mutex;
  uint64_t in_flight = 0, peak = 0;
  std::vector<std::string> events;
  void add(uint64_t bytes, const std::string& event) {
    std::lock_guard lock(mutex);
    in_flight += bytes;
    peak = std::max(peak, in_flight);
    events.push_back(event);
  }
  void remove(uint64_t bytes) {
    std::lock_guard lock(mutex);
    in_flight -= bytes;
  }
  size_t when(const std::string& event) {  // events.size() when it has not happened
    std::lock_guard lock(mutex);
    return size_t(std::find(events.begin(), events.end(), event) - events.begin());
  }
  bool happened(const std::string& event) {
    std::lock_guard lock(mutex);
    return std::find(events.begin(), events.end(), event) != events.end();
  }
};

// A task that finds it needs more memory than its estimate (a picture inside a document) waits
// until the others finish, and no task starts meanwhile: it is not overtaken for ever. Task 0
// asks once tasks 1-3 run; they end 50 ms apart. The reservation fits once two of them are gone,
// and only then may task 4 start: without the hold-back it would start as soon as task 1 ended.
TEST(Scheduler, ReservationsWaitForMemoryAndHoldBackNewTasks) {
  constexpr uint64_t kBudget = 100;
  Ledger ledger;
  batch::Scheduler scheduler(4, kBudget);
  const batch::SchedulerStats stats = scheduler.run(
      8, [](size_t) { return uint64_t(10); },
      [&](size_t i) {
        ledger.add(10, "start " + std::to_string(i));
        if (i == 0) {  // 80 beside its own 10: only with one other task running
          while (!ledger.happened("start 3"))
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          scheduler.reserve(80);
          ledger.add(80, "reserved");
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
          ledger.remove(80);
          scheduler.release(80);
        } else {
          std::this_thread::sleep_for(std::chrono::milliseconds(i < 4 ? 50 + 50 * i : 3));
        }
        ledger.remove(10);
        ledger.add(0, "end " + std::to_string(i));  // before the scheduler hears of it
      });
  EXPECT_EQ(stats.started, 8u);
  EXPECT_LE(ledger.peak, kBudget);
  EXPECT_GE(stats.peak_in_flight, 90u);
  EXPECT_GT(ledger.when("start 4"), ledger.when("end 2"))
      << ::testing::PrintToString(ledger.events);
}

// A reservation larger than the whole budget goes ahead once it is alone, and tasks that all
// wait for memory at once go ahead in turn rather than waiting for each other for ever.
TEST(Scheduler, ReservationsThatCanNeverFitStillEnd) {
  std::atomic<size_t> granted{0};
  batch::Scheduler scheduler(4, 100);
  const batch::SchedulerStats stats = scheduler.run(
      8, [](size_t) { return uint64_t(40); },
      [&](size_t) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        scheduler.reserve(500);
        ++granted;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        scheduler.release(500);
      });
  EXPECT_EQ(stats.started, 8u);
  EXPECT_EQ(granted.load(), 8u);
  EXPECT_GE(stats.peak_in_flight, 540u);
}

// Caps this process's address space at what it maps now, plus room for `stacks` threads' stacks
// and `heap` bytes: the system then refuses threads beyond that, as a container's task limit
// would. New threads take 64 MiB stacks, so that none reuses a smaller one that glibc cached
// from the tests before. For a forked child only.
bool cap_address_space(double stacks, size_t heap) {
  constexpr size_t stack = 64u << 20;
  pthread_attr_t attr;
  if (::pthread_attr_init(&attr) != 0 || ::pthread_attr_setstacksize(&attr, stack) != 0 ||
      ::pthread_setattr_default_np(&attr) != 0)
    return false;
  ::pthread_attr_destroy(&attr);
  long pages = 0;
  std::ifstream("/proc/self/statm") >> pages;
  const rlim_t room =
      rlim_t(pages) * ::sysconf(_SC_PAGE_SIZE) + rlim_t(stacks * double(stack)) + heap;
  const rlimit limit{room, room};
  return ::setrlimit(RLIMIT_AS, &limit) == 0;
}

// Runs `child` in a forked process and expects it to exit with 0.
void expect_child_succeeds(const std::function<int()>& child) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(child());
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// Threads the system refuses (here: address space for their stacks; in a container, its task
// limit) leave the work to the ones it started, where std::thread's exception ended the process.
TEST(Scheduler, ThreadsTheSystemRefusesLeaveTheWorkToTheOthers) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the sanitizer's shadow memory does not fit under an address-space limit";
#endif
  expect_child_succeeds([] {
    // Room for three threads and a little heap: some threads start, not 512.
    if (!cap_address_space(3, 16u << 20)) return 3;
    std::atomic<size_t> done{0};
    batch::Scheduler scheduler(512, 100);
    const batch::SchedulerStats stats = scheduler.run(
        2000, [](size_t) { return uint64_t(1); }, [&](size_t) { ++done; });
    return done == 2000 && stats.started == 2000 && stats.workers > 0 && stats.workers < 512 ? 0
                                                                                             : 1;
  });
}

// Where the system gives no thread at all, the calling thread does the work (the run failed
// with "Resource temporarily unavailable" before, when the CLI's progress ticker had taken the
// last one).
TEST(Scheduler, WhereEveryThreadIsRefusedTheCallerDoesTheWork) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the sanitizer's shadow memory does not fit under an address-space limit";
#endif
  expect_child_succeeds([] {
    if (!cap_address_space(0.5, 0)) return 3;
    std::atomic<size_t> done{0}, elsewhere{0};
    const std::thread::id caller = std::this_thread::get_id();
    batch::Scheduler scheduler(8, 100);
    const batch::SchedulerStats stats = scheduler.run(
        50, [](size_t) { return uint64_t(1); },
        [&](size_t) { ++done, elsewhere += std::this_thread::get_id() != caller; });
    return done == 50 && elsewhere == 0 && stats.workers == 1 ? 0 : 1;
  });
}

// The journal's committer thread starts with its first row; refused, it lost every row: the
// transaction begun for that row stayed open with none counted, every later row failed to begin
// another, and closing rolled them all back. The rows now commit without it.
TEST(Journal, ARefusedCommitterThreadLosesNoRow) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the sanitizer's shadow memory does not fit under an address-space limit";
#endif
  TempDir dir;
  const std::string path = (dir / "j.sqlite").string();
  expect_child_succeeds([&] {
    try {
      batch::Journal j(path);
      j.begin_run("run-1", "mode=lossless\n");
      if (!cap_address_space(0.5, 0)) return 3;
      int failures = 0;
      for (int i = 0; i < 20; ++i) {
        try {  // as the run records: a row's failure is kept for flush(), not fatal
          j.record(row("/t/f" + std::to_string(i), 1, Action::kKept));
        } catch (const std::exception&) {
          ++failures;
        }
      }
      j.flush();
      return failures == 0 ? 0 : 1;
    } catch (const std::exception&) {
      return 2;
    }
  });
  batch::Journal reopened(path);
  EXPECT_EQ(reopened.count(), 20u);
}

// A JPEG with a 5000-byte APP1 before its 4000x3000 frame header, whose components have the
// sampling factors `factors` (0x22: 2x2).
std::vector<uint8_t> jpeg_head(const std::vector<uint8_t>& factors = {0x22, 0x11, 0x11}) {
  const uint8_t n = uint8_t(factors.size());
  std::vector<uint8_t> b = {0xFF, 0xD8, 0xFF, 0xE1, 5000 >> 8, 5000 & 0xFF};
  for (int i = 0; i < 4998; ++i) b.push_back(0);
  for (uint8_t byte : {0xFF, 0xC0, 0, 8 + 3 * n, 8, 3000 >> 8, 3000 & 0xFF, 4000 >> 8, 4000 & 0xFF})
    b.push_back(uint8_t(byte));
  b.push_back(n);
  for (uint8_t c = 0; c < n; ++c)
    for (uint8_t byte : {uint8_t(c + 1), factors[c], uint8_t(0)}) b.push_back(byte);
  return b;
}

// Items inside files are priced as files are, through the gate the engine is given.
TEST(Scheduler, TheItemGatePricesItemsAsFiles) {
  Policy compact;
  compact.mode = Mode::kCompact;
  const std::vector<uint8_t> jpeg = jpeg_head();
  batch::Scheduler scheduler(1, 1ull << 40);
  batch::ItemGate gate(scheduler);
  uint64_t admitted = 0;
  const batch::SchedulerStats stats = scheduler.run(
      1, [](size_t) { return uint64_t(1000); },
      [&](size_t) {
        admitted = gate.admit(jpeg, compact);
        gate.release(admitted);
      });
  EXPECT_EQ(admitted, batch::memory_estimate(jpeg.size(), jpeg, compact));
  EXPECT_GT(admitted, 12'000'000u * 16);  // its 4000x3000 pixels, not its 5 kB
  EXPECT_EQ(stats.peak_in_flight, 1000 + admitted);
}

TEST(MemoryEstimate, ImagesArePricedByTheirPixels) {
  Policy lossless, compact;
  compact.mode = Mode::kCompact;
  constexpr uint64_t kMiB = 1 << 20;
  // Anything else: 16 times its size, at least 1 MiB.
  EXPECT_EQ(batch::memory_estimate(0, {}, lossless), kMiB);
  EXPECT_EQ(batch::memory_estimate(10 * kMiB, {}, lossless), 160 * kMiB);
  // A large file of a kind lighten has no optimiser for is streamed, not read: its copy buffer.
  const std::vector<uint8_t> gif = {'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0};
  EXPECT_EQ(batch::memory_estimate(200 * kMiB, gif, lossless), kMiB);
  EXPECT_EQ(batch::memory_estimate(2 * kMiB, gif, lossless), 32 * kMiB);  // small: read whole
  const std::vector<uint8_t> zip = {'P', 'K', 3, 4, 20, 0, 0, 0};  // its kind waits for names
  EXPECT_EQ(batch::memory_estimate(200 * kMiB, zip, lossless), 3200 * kMiB);

  // JPEG: bytes a pixel and a DCT coefficient (1.5 a pixel at 4:2:0, 4 in CMYK).
  const std::vector<uint8_t> jpeg = jpeg_head();
  const uint64_t size = 3 * kMiB;  // a q90 12 MP photo: 16 times it would be 48 MiB
  EXPECT_EQ(batch::memory_estimate(size, jpeg, lossless),
            12'000'000u * 4 + 18'000'000u * 11 / 4 + 4 * size);
  // Perceptual modes also 4 kB a column of the 4000 for the metric's full-width bands.
  constexpr uint64_t kColumns = 4000u * 4096;
  EXPECT_EQ(batch::memory_estimate(size, jpeg, compact),
            12'000'000u * 16 + 18'000'000u * 11 / 2 + kColumns + 4 * size);
  const std::vector<uint8_t> cmyk = jpeg_head({0x11, 0x11, 0x11, 0x11});
  EXPECT_EQ(batch::memory_estimate(size, cmyk, compact),
            12'000'000u * 16 + 48'000'000u * 11 / 2 + kColumns + 4 * size);
  // 4:2:2 in 2x1 and 4x2 alike: 2 coefficients a pixel.
  for (uint8_t luma : {0x21, 0x42}) {
    const uint8_t chroma = luma == 0x21 ? 0x11 : 0x22;
    EXPECT_EQ(batch::memory_estimate(size, jpeg_head({luma, chroma, chroma}), compact),
              12'000'000u * 16 + 24'000'000u * 11 / 2 + kColumns + 4 * size);
  }
  // Components that do not parse are priced as four at full resolution.
  EXPECT_EQ(batch::memory_estimate(size, jpeg_head({0x22, 0x01, 0x11}), compact),
            batch::memory_estimate(size, cmyk, compact));
  // A strip 65000 pixels wide and 16 high peaked at 202 MB in compact for its 1 MP.
  std::vector<uint8_t> strip = jpeg;
  for (const auto& [at, value] : {std::pair{5009, 16}, std::pair{5011, 65000}})
    strip[size_t(at)] = uint8_t(value >> 8), strip[size_t(at) + 1] = uint8_t(value);
  EXPECT_GT(batch::memory_estimate(size, strip, compact), 202'000'000u);
  EXPECT_EQ(batch::memory_estimate(size, strip, lossless), 16 * size);  // no metric
  Policy capped = compact;
  capped.limits.max_pixels = 11'999'999;  // larger frames are refused before decoding
  EXPECT_EQ(batch::memory_estimate(size, jpeg, capped), 16 * size);

  // The first short read ends inside the APP1: the batch reads further for this file only.
  const ByteView short_head(jpeg.data(), batch::kEstimateHeadBytes);
  EXPECT_TRUE(batch::frame_header_beyond(short_head));
  EXPECT_FALSE(batch::frame_header_beyond(jpeg));
  EXPECT_EQ(batch::memory_estimate(size, short_head, compact), 16 * size);

  // PNG: IHDR of 2000x1000 RGBA at 16 bits, 16 MB of raw samples.
  std::vector<uint8_t> png = {0x89, 'P', 'N',  'G',  '\r', '\n', 0x1A, '\n', 0,    0,
                              0,    13,  'I',  'H',  'D',  'R',  0,    0,    0x07, 0xD0,
                              0,    0,   0x03, 0xE8, 16,   6,    0,    0,    0};
  EXPECT_EQ(batch::memory_estimate(kMiB, png, lossless), 16'000'000u * 14 + 4 * kMiB);
  Policy png_capped = lossless;
  png_capped.limits.max_pixels = 1'999'999;
  EXPECT_EQ(batch::memory_estimate(kMiB, png, png_capped), 16 * kMiB);

  // Damaged headers fall back to the size.
  const std::vector<uint8_t> broken = {0xFF, 0xD8, 0xFF, 0xE1, 0, 1, 0xFF, 0xC0};
  EXPECT_FALSE(batch::frame_header_beyond(broken));
  EXPECT_EQ(batch::memory_estimate(kMiB, broken, compact), 16 * kMiB);
}

}  // namespace
}  // namespace lighten::testing
