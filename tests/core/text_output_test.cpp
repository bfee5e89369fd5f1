// Reports written whole: over a regular file by rename, through a symbolic link to what it
// names (the link stays a link), and straight into a pipe, which a rename would replace.
#include "core/text_output.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

namespace lighten {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class TextOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lighten_text_output_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "real");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(TextOutput, ARegularFileIsReplacedWhole) {
  const fs::path p = dir_ / "report.html";
  write_text_atomically(p, "old", "");
  write_text_atomically(p, "new", "");
  EXPECT_EQ(read_text(p), "new");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 2);
}

// A stream of many pieces reaches the file whole; a writer that fails partway leaves the file
// as it was and no temporary file beside it.
TEST_F(TextOutput, AStreamIsWrittenWholeOrNotAtAll) {
  const fs::path p = dir_ / "files.csv";
  write_text_atomically(p, "old", "");
  std::string expected;
  for (int i = 0; i < 50000; ++i) expected += "row " + std::to_string(i) + "\n";
  write_stream_atomically(
      p, [&](std::ostream& out) { out << expected; }, "");
  EXPECT_EQ(read_text(p), expected);
  EXPECT_THROW(write_stream_atomically(
                   p,
                   [](std::ostream& out) {
                     for (int i = 0; i < 50000; ++i) out << "partial row " << i << '\n';
                     throw std::runtime_error("the journal failed");
                   },
                   ""),
               std::runtime_error);
  EXPECT_EQ(read_text(p), expected);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 2);
}

TEST_F(TextOutput, ALinkStaysALinkAndWhatItNamesIsWritten) {
  const fs::path target = dir_ / "real" / "target.html", link = dir_ / "link.html";
  write_text_atomically(target, "old", "");
  fs::create_symlink(fs::path("real") / "target.html", link);
  write_text_atomically(link, "new", "");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read_text(target), "new");
  // A dangling link gets its target made.
  const fs::path dangling = dir_ / "dangling.json";
  fs::create_symlink(fs::path("real") / "later.json", dangling);
  write_text_atomically(dangling, "{}", "");
  EXPECT_TRUE(fs::is_symlink(dangling));
  EXPECT_EQ(read_text(dir_ / "real" / "later.json"), "{}");
}

TEST_F(TextOutput, APipeIsWrittenAndStaysAPipe) {
  const fs::path pipe = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = read_text(pipe); });
  write_text_atomically(pipe, "through the pipe", "");
  reader.join();
  EXPECT_EQ(got, "through the pipe");
  EXPECT_TRUE(fs::is_fifo(pipe));
}

// /dev/fd/N and /proc/self/fd/N are the descriptors the process holds, written as the shell
// set them up: into a pipe, or appended to a file opened for appending (as `>> log` does),
// never replaced by a file of their own.
TEST_F(TextOutput, DescriptorPathsAreWrittenThroughTheirDescriptor) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  write_text_atomically("/dev/fd/" + std::to_string(ends[1]), "into the pipe", "");
  ::close(ends[1]);
  char got[64] = {};
  EXPECT_EQ(::read(ends[0], got, sizeof got), 13);
  ::close(ends[0]);
  EXPECT_EQ(std::string(got), "into the pipe");
  const fs::path log = dir_ / "log.txt";
  write_text_atomically(log, "EARLIER\n", "");
  const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  write_text_atomically("/proc/self/fd/" + std::to_string(fd), "report\n", "");
  ::close(fd);
  EXPECT_EQ(read_text(log), "EARLIER\nreport\n");
}

TEST_F(TextOutput, ALinkLoopIsAnError) {
  fs::create_symlink("loop-b", dir_ / "loop-a");
  fs::create_symlink("loop-a", dir_ / "loop-b");
  EXPECT_THROW(write_text_atomically(dir_ / "loop-a", "x", ""), std::runtime_error);
  EXPECT_TRUE(fs::is_symlink(dir_ / "loop-a"));
}

TEST_F(TextOutput, AFolderIsRefusedWithAdvice) {
  try {
    write_text_atomically(dir_ / "real", "x", "choose a file");
    ADD_FAILURE() << "wrote over a folder";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("choose a file"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_directory(dir_ / "real"));
}

}  // namespace
}  // namespace lighten
