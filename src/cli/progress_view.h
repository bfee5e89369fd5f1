// What the user sees while a batch runs: one live line on a terminal, log lines elsewhere.
#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "lighten/batch.h"

namespace lighten::cli {

enum class Verbosity { kQuiet, kNormal, kVerbose };

// The figures of the live line.
struct ProgressFigures {
  uint64_t files_done = 0, files_total = 0;
  uint64_t bytes_in = 0, bytes_out = 0;  // of the files done
  double bytes_per_s = 0;                // this run's own work (journal skips excluded)
  double eta_s = -1;                     // < 0: unknown
  uint64_t failures = 0;
};

// The live line, at most width - 1 columns (a line as wide as the terminal wraps on some
// terminals and could then not be redrawn in place): fields are dropped, least useful first.
std::string format_progress_line(const ProgressFigures& figures, size_t width);

// "1h02m", "3m05s", "12s", "--" when unknown.
std::string format_duration(double seconds);

// Colour only on a terminal, never with NO_COLOR set (https://no-color.org) or TERM=dumb.
bool colour_allowed(bool is_terminal, const char* no_color, const char* term);

// Columns of the terminal on `fd`, else $COLUMNS, else 80.
size_t terminal_columns(int fd);

// The line for a file that failed or was left alone: which file, what happened, what to do
// (for failures). `colour` marks "failed" in red; `journaled` says a run again skips the
// files this one finished.
std::string file_line(const FileResult& result, bool colour, bool journaled);

// True for outcomes that are failures (the user must act), not reasons to leave a file alone.
bool is_failure(Reason reason);

class ProgressView final : public ProgressSink {
 public:
  // `journaled`: the run keeps a journal (failure lines then say finished files are skipped).
  ProgressView(std::FILE* out, Verbosity verbosity, bool keep_rows, bool journaled);

  void on_discovered(uint64_t files, uint64_t bytes) override;
  void on_file(const FileResult& result) override;
  void on_finish(const BatchSummary& summary) override;
  // Called about every second while the run goes on: the live line's rate and ETA move, and a
  // log (not a terminal) gets its line every few seconds, also while one long file (a video)
  // finishes nothing. Nothing before the walk is done or after the run is.
  void tick();

  // Every file's result, when keep_rows was asked for (for --report).
  const std::vector<FileResult>& rows() const { return rows_; }

 private:
  using Clock = std::chrono::steady_clock;
  void draw(bool force);
  void clear_line();
  ProgressFigures figures() const;

  std::FILE* out_;
  Verbosity verbosity_;
  bool keep_rows_;
  bool journaled_;
  bool live_;    // a terminal that can redraw one line in place
  bool colour_;  // NO_COLOR unset, a terminal, not TERM=dumb
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_draw_{};
  uint64_t total_files_ = 0, total_bytes_ = 0;
  uint64_t done_files_ = 0, done_bytes_in_ = 0, done_bytes_out_ = 0, failures_ = 0;
  uint64_t worked_bytes_ = 0;  // bytes this run read itself (not answered from the journal)
  bool line_shown_ = false;
  bool discovered_ = false, finished_ = false;
  std::vector<FileResult> rows_;
  std::mutex mutex_;  // tick() comes from a thread of its own
};

}  // namespace lighten::cli
