// The live line as a user sees it: never wider than the terminal, no colour under NO_COLOR or
// off a terminal, and file lines that say which file, what went wrong and what to do.
#include "progress_view.h"

#include "lighten/report.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace lighten::cli {
namespace {

ProgressFigures busy_run() {
  return {.files_done = 123'456,
          .files_total = 1'000'000,
          .bytes_in = 57'320'000'000,
          .bytes_out = 10'820'000'000,
          .bytes_per_s = 412'300'000,
          .eta_s = 3725,
          .failures = 3};
}

TEST(ProgressLine, FitsEveryWidthAndDropsFieldsLeastUsefulFirst) {
  const ProgressFigures f = busy_run();
  const std::string wide = format_progress_line(f, 200);
  EXPECT_EQ(wide,
            "123456/1000000 files  57.32 GB -> 10.82 GB  saved 81.1%  412.3 MB/s  ETA 1h02m  3 "
            "failed");
  for (size_t width = 0; width <= 200; ++width) {
    const std::string line = format_progress_line(f, width);
    EXPECT_LT(line.size(), std::max<size_t>(width, 1)) << width << ": " << line;
    EXPECT_EQ(line.find('\n'), std::string::npos);
  }
  // On an 80-column terminal the byte counts go first; the failures stay.
  const std::string eighty = format_progress_line(f, 80);
  EXPECT_EQ(eighty, "123456/1000000 files  saved 81.1%  412.3 MB/s  ETA 1h02m  3 failed");
  EXPECT_EQ(format_progress_line(f, 40), "123456/1000000  ETA 1h02m  3 failed");
}

TEST(ProgressLine, UnknownEtaAndDurations) {
  ProgressFigures f;
  f.files_total = 10;
  EXPECT_EQ(format_progress_line(f, 200), "0/10 files  0 B -> 0 B  saved 0.0%  0.0 MB/s  ETA --");
  EXPECT_EQ(format_duration(59), "59s");
  EXPECT_EQ(format_duration(61), "1m01s");
  EXPECT_EQ(format_duration(7200), "2h00m");
  EXPECT_EQ(format_duration(-1), "--");
}

TEST(ProgressLine, ColourOnlyOnATerminalWithoutNoColor) {
  EXPECT_TRUE(colour_allowed(true, nullptr, "xterm-256color"));
  EXPECT_TRUE(colour_allowed(true, "", "xterm"));  // NO_COLOR counts only when not empty
  EXPECT_FALSE(colour_allowed(true, "1", "xterm"));
  EXPECT_FALSE(colour_allowed(false, nullptr, "xterm"));
  EXPECT_FALSE(colour_allowed(true, nullptr, "dumb"));
}

TEST(ProgressLine, FailureLinesNameTheFileTheProblemAndWhatToDo) {
  FileResult r;
  r.path = "/data/photos/a.jpg";
  r.reason = Reason::kIoError;
  r.message = "write /out/a.jpg: No space left on device";
  const std::string plain = file_line(r, false, true);
  EXPECT_EQ(plain.find("\x1b"), std::string::npos);
  EXPECT_EQ(plain.rfind("/data/photos/a.jpg: failed (io-error): write /out/a.jpg: No space", 0), 0u)
      << plain;
  EXPECT_NE(plain.find("run again: finished files are skipped"), std::string::npos) << plain;
  EXPECT_NE(file_line(r, true, true).find("\x1b[31mfailed\x1b[0m"), std::string::npos);
  // Without a journal a second run does everything again: the line must not promise skips.
  const std::string unjournaled = file_line(r, false, false);
  EXPECT_NE(unjournaled.find("run again."), std::string::npos) << unjournaled;
  EXPECT_EQ(unjournaled.find("skipped"), std::string::npos) << unjournaled;

  r.reason = Reason::kEncrypted;
  r.message = "the PDF needs a password";
  EXPECT_EQ(file_line(r, true, true),
            "/data/photos/a.jpg: left alone (encrypted): the PDF needs a password");
}

// A newline in a file name must not start a line of its own in the log: whoever reads the log
// (or greps it) would take it for another file's.
TEST(ProgressLine, ControlCharactersInNamesAreEscapedOnOneLine) {
  FileResult r;
  r.path = "/d/a.jpg\nb.jpg: failed (io-error)\t\x1b[2J\\x'";
  r.reason = Reason::kCorrupt;
  r.message = "not a JPEG";
  EXPECT_EQ(file_line(r, false, true),
            "$'/d/a.jpg\\nb.jpg: failed (io-error)\\t\\x1b[2J\\\\x\\'': left alone (corrupt): not "
            "a JPEG");
  // A name holding a backslash and an n is told apart from one holding a newline.
  EXPECT_EQ(printable_text("a\\nb.jpg"), "a\\nb.jpg");
  EXPECT_EQ(printable_text("a\nb.jpg"), "$'a\\nb.jpg'");
  EXPECT_EQ(counted(1, "file"), "1 file");
  EXPECT_EQ(counted(0, "file"), "0 files");
  EXPECT_EQ(counted(12, "symbolic link"), "12 symbolic links");
}

TEST(ProgressView, OffATerminalItWritesPlainLinesAndQuietKeepsErrors) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  {
    ProgressView view(out, Verbosity::kQuiet, false, true);
    view.on_discovered(2, 200);
    FileResult ok;
    ok.path = "/d/ok.png";
    ok.action = Action::kReplaced;
    ok.bytes_in = 100;
    ok.bytes_out = 90;
    view.on_file(ok);
    FileResult bad;
    bad.path = "/d/bad.png";
    bad.reason = Reason::kIoError;
    bad.message = "read: Permission denied";
    view.on_file(bad);
    view.on_finish({});
  }
  std::rewind(out);
  std::string text(4096, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), out));
  std::fclose(out);
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;  // no live-line control codes
  EXPECT_EQ(text.find("\x1b"), std::string::npos) << text;
  EXPECT_EQ(text.find("ok.png"), std::string::npos) << text;  // quiet: no line per file
  EXPECT_NE(text.find("/d/bad.png: failed (io-error): read: Permission denied."), std::string::npos)
      << text;
}

// The run ticks the view about every second: off a terminal a log line comes every few seconds
// even while one long file (a video) finishes nothing; not before the walk is done, nor after.
TEST(ProgressView, TicksWriteTheProgressWhileNoFileFinishes) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  const auto text = [&] {
    std::fflush(out);
    std::rewind(out);
    std::string t(4096, '\0');
    t.resize(std::fread(t.data(), 1, t.size(), out));
    std::fseek(out, 0, SEEK_END);
    return t;
  };
  ProgressView view(out, Verbosity::kNormal, false, true);
  view.tick();
  EXPECT_EQ(text(), "");
  view.on_discovered(1, 5'000'000);
  const std::string walked = text();
  view.tick();
  const std::string ticked = text();
  EXPECT_NE(ticked.size(), walked.size()) << ticked;
  EXPECT_NE(ticked.find("0/1", walked.size()), std::string::npos) << ticked;
  view.tick();  // within the interval: nothing more
  EXPECT_EQ(text(), ticked);
  view.on_finish({});
  const std::string finished = text();
  view.tick();
  EXPECT_EQ(text(), finished);
  std::fclose(out);
}

}  // namespace
}  // namespace lighten::cli
