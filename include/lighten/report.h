// Reports of a batch run: the summary table for people, a JSON document with a row per file, and
// the HTML page and CSV built from a journal (or from a run's results) by aggregating in C++.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "lighten/batch.h"

namespace lighten {

// A per-kind table: files, optimised, bytes before/after, saved %, files left alone by reason.
void print_summary_table(std::ostream& out, const BatchSummary& summary, bool dry_run);

// Writes the summary and one row per file as JSON to `path` (atomically). Throws on I/O errors.
// `stopped_because`: why the run stopped before starting every file ("interrupted", "the disk
// is full (...)"), "" when it ran to the end.
void write_json_report(const std::string& path, const BatchSummary& summary,
                       const std::vector<FileResult>& rows, const Policy& policy, bool dry_run,
                       const std::string& stopped_because = "");

// "1.23 MB", "512 B": decimal units, as storage is billed.
std::string format_bytes(uint64_t bytes);

// "1 file", "3 files": a count and its noun, made plural with an "s".
std::string counted(uint64_t count, std::string_view noun);

// Text fit for one line of a log. Text with control characters (a newline in a file name) comes
// back quoted as a shell would read it, $'a\nb.jpg' (\n, \r, \t, \xHH, \\ and \'), as GNU ls
// shows such names; other text comes back as it is.
std::string printable_text(std::string_view text);

// One sentence for people: what to do about files left alone (or failed) for this reason.
// `journaled`: the run kept a journal, so running it again skips the files it finished.
std::string_view reason_advice(Reason reason, bool journaled);

// The SSIMULACRA2 a perceptual output reached, read from the outcome's detail text (a JPEG's
// "requantised ... SSIMULACRA2 86.41 ...", a document's or a video's "worst SSIMULACRA2
// 80.06"); nullopt for lossless outputs.
std::optional<double> ssimulacra2_from_detail(std::string_view detail);

// ---- The HTML page and the CSV: aggregates of any number of files in bounded memory ----

// One file as the report reads it; the views need to live only during ReportAggregator::add.
struct ReportFile {
  std::string_view path;
  Kind kind = Kind::kUnknown;
  Action action = Action::kKept;
  Reason reason = Reason::kNoGain;
  std::string_view message;
  uint64_t bytes_before = 0;
  uint64_t bytes_after = 0;
  double ms = 0;
  std::optional<double> ssimulacra2;  // perceptual outputs only
};

// A file the page names: an example of a reason, or one of the slowest.
struct ReportExample {
  std::string path;
  Kind kind = Kind::kUnknown;
  Action action = Action::kKept;
  Reason reason = Reason::kNoGain;
  std::string message;
  uint64_t bytes_before = 0;
  uint64_t bytes_after = 0;
  double ms = 0;
};

struct ReportTotals {
  uint64_t files = 0;
  uint64_t optimized = 0;
  uint64_t bytes_before = 0;
  uint64_t bytes_after = 0;
  double ms = 0;        // time spent on the files, summed over workers
  uint64_t scored = 0;  // files with a perceptual score
  double score_sum = 0, score_min = 0;
};

struct ReportReasonGroup {
  uint64_t files = 0;
  uint64_t bytes = 0;
  std::vector<ReportExample> examples;  // the largest files, largest first
};

struct ReportScatterPoint {
  double ssimulacra2 = 0;
  uint64_t bytes_before = 0;
  uint64_t bytes_saved = 0;
  Kind kind = Kind::kUnknown;
  std::string path;
};

struct ReportRun {
  std::string run_id;
  std::string started;                                      // UTC, ISO 8601
  double started_s = 0;                                     // Unix time; 0 when unknown
  double last_done_s = 0;                                   // when its last file was recorded
  std::vector<std::pair<std::string, std::string>> policy;  // name, value
};

inline constexpr size_t kSavingsBins = 50;  // 2 % of the file's size each

struct ReportSummary {
  std::string source;     // the journal, or a description of the run
  bool journaled = true;  // false for a run's own report under --no-journal
  bool dry_run = false;
  std::vector<ReportRun> runs;
  ReportTotals total;
  std::map<Kind, ReportTotals> kinds;
  std::map<Reason, ReportReasonGroup> left_alone;     // files kept as they were (and failures)
  std::array<uint64_t, kSavingsBins> savings_bins{};  // optimised files by the share they saved
  std::vector<ReportExample> slowest;                 // slowest first
  std::vector<ReportScatterPoint> scatter;            // a deterministic sample of the scored files
  double wall_seconds = 0;                            // time the runs took, overlaps counted once
  // A run's own page: files an earlier run finished, counted in the totals but not in
  // `wall_seconds` (no throughput is shown then, as the terminal shows none).
  uint64_t from_earlier_runs = 0;
  // A run's own page: files it did not start, having stopped early (interrupted, or the disk
  // full), and why ("" when it ran to the end).
  uint64_t not_started = 0;
  std::string stopped_because;
};

struct ReportLimits {
  size_t examples_per_reason = 10;
  size_t slowest = 25;
  size_t scatter_points = 5000;
};

// Folds files into a ReportSummary. Memory is bounded by ReportLimits, not by the file count;
// the result does not depend on the order files arrive in (ties are broken by path).
class ReportAggregator {
 public:
  explicit ReportAggregator(ReportLimits limits = {});
  void add(const ReportFile& file);
  // The summary so far; `source`, `runs`, `dry_run` and `wall_seconds` are the caller's to set.
  ReportSummary finish() const;

 private:
  struct Sampled {
    uint64_t priority;
    ReportScatterPoint point;
  };
  ReportLimits limits_;
  ReportSummary summary_;
  std::vector<Sampled> scatter_heap_;  // max-heap on priority: keeps the lowest hashes
};

// Reads a journal written by `lighten optimize` (read-only, one pass) into a summary.
// Throws std::runtime_error naming the journal and what to do when it cannot be read.
ReportSummary summarize_journal(const std::string& journal_path, ReportLimits limits = {});

// The self-contained HTML page: the chart library, styles, script and the aggregates inlined;
// it loads nothing from the network. `probe_json_paths` are files written by
// `lighten probe --compare ... --json FILE` (their stage breakdown is drawn before/after).
std::string render_html_report(const ReportSummary& summary,
                               const std::vector<std::string>& probe_json_paths);
// Renders and writes atomically. Throws std::runtime_error naming the file on errors.
void write_html_report(const std::string& path, const ReportSummary& summary,
                       const std::vector<std::string>& probe_json_paths);

// CSV for spreadsheets (RFC 4180, header row): one row per kind and a final "total" row.
void write_kinds_csv(std::ostream& out, const ReportSummary& summary);
// CSV with one row per file of the journal, in path order, streamed.
void write_files_csv(std::ostream& out, const std::string& journal_path);
// Streams what `write` puts out (one of the CSVs above) into a temporary file beside `path` and
// renames it over `path` once all is written: a failure partway leaves `path` as it was.
// Throws std::runtime_error naming the file on errors.
void write_csv_file(const std::string& path, const std::function<void(std::ostream&)>& write);

}  // namespace lighten
