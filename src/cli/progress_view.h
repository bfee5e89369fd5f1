// What the user sees while a batch runs: one live line on a terminal, log lines elsewhere.
#pragma once

#include <chrono>
#include <cstdio>
#include <vector>

#include "lighten/batch.h"

namespace lighten::cli {

enum class Verbosity { kQuiet, kNormal, kVerbose };

class ProgressView final : public ProgressSink {
 public:
  ProgressView(std::FILE* out, Verbosity verbosity, bool keep_rows);

  void on_discovered(uint64_t files, uint64_t bytes) override;
  void on_file(const FileResult& result) override;
  void on_finish(const BatchSummary& summary) override;

  // Every file's result, when keep_rows was asked for (for --report).
  const std::vector<FileResult>& rows() const { return rows_; }

 private:
  using Clock = std::chrono::steady_clock;
  void draw(bool force);
  void clear_line();
  std::string status_text() const;

  std::FILE* out_;
  Verbosity verbosity_;
  bool keep_rows_;
  bool live_;  // a terminal: redraw one line in place
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_draw_{};
  uint64_t total_files_ = 0, total_bytes_ = 0;
  uint64_t done_files_ = 0, done_bytes_in_ = 0, done_bytes_out_ = 0, failures_ = 0;
  bool line_shown_ = false;
  std::vector<FileResult> rows_;
};

}  // namespace lighten::cli
