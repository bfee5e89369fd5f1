// The journal: one SQLite file (WAL) recording each file's result, so that a killed or
// repeated run skips what is done, and shards of a job array merge into one record.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "lighten/batch.h"

struct sqlite3;
struct sqlite3_stmt;

namespace lighten::batch {

struct JournalRow {
  std::string path;  // the key: absolute, lexically normal
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  std::string hash;  // xxh3-64 of the input, hex
  Kind kind = Kind::kUnknown;
  Action action = Action::kKept;
  Reason reason = Reason::kNoGain;
  std::string message;
  std::string detail;
  uint64_t bytes_before = 0;
  uint64_t bytes_after = 0;
  uint64_t out_size = 0;  // the file written (in place: the replaced file; mirror: OUT/...)
  int64_t out_mtime_ns = 0;
  double ms = 0;
  std::string run_id;
  std::string policy_fingerprint;
  int64_t done_ns = 0;  // when the row was written (merges keep the newest)

  FileResult to_result() const;
};

// Thread-safe: one connection behind a mutex; rows are committed in batches.
class Journal {
 public:
  // Opens (or creates) the journal; throws std::runtime_error when it cannot.
  explicit Journal(const std::string& path, bool create = true);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  void begin_run(const std::string& run_id, const std::string& policy_text);
  std::optional<JournalRow> find(const std::string& path);
  // Throws when the row cannot be written; the first such error is also kept for flush().
  void record(const JournalRow& row);
  // Commits the rows pending; throws when that fails, or when a row of this journal's life could
  // not be written before (a full disk, say), with the first error.
  void flush();
  // Replaces the rows that stand for no file (problems of the walk: an unreadable folder, a
  // dangling link; links a mirror could not make; files met again through a link) with this
  // run's, so that `lighten report` shows the latest walk's. `shard_tag` ends the run ids of
  // one shard's runs (".shard-2-of-4"; "" for a run of the whole tree): a shard replaces only
  // the rows of earlier runs of that shard, as shards may share a journal. A failure is kept
  // for flush().
  void replace_walk_rows(const std::string& run_id, const std::vector<FileResult>& rows,
                         const std::string& shard_tag);
  std::vector<JournalRow> rows(const std::string& run_id);
  uint64_t count();
  const std::string& path() const { return path_; }

 private:
  void exec(const char* sql);
  void insert_locked(const JournalRow& row);
  void commit_locked();

  // Commits the rows pending once the oldest is kJournalBatchTime old, whether or not another
  // row comes: a file done just before a long one would otherwise wait for it, uncommitted.
  void commit_when_due();

  std::string path_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* find_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;
  std::mutex mutex_;
  size_t pending_ = 0;
  std::chrono::steady_clock::time_point first_pending_;
  std::string first_error_;  // of a row that was not written
  // The thread of commit_when_due, started with the first row; told to end by `closing_`.
  std::thread committer_;
  std::condition_variable wake_;
  bool closing_ = false;
};

// Rows are committed at least this often, so a kill loses little work.
inline constexpr size_t kJournalBatchRows = 200;
inline constexpr std::chrono::milliseconds kJournalBatchTime{1000};

}  // namespace lighten::batch
