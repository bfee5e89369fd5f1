#include "batch/journal.h"

#include <sqlite3.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>

#include "core/text_output.h"

namespace lighten::batch {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS runs(
  run_id TEXT PRIMARY KEY, started TEXT NOT NULL, policy TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
  path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, hash TEXT,
  kind TEXT, action TEXT, reason INTEGER, message TEXT, detail TEXT,
  bytes_before INTEGER, bytes_after INTEGER, out_size INTEGER, out_mtime_ns INTEGER,
  ms REAL, run_id TEXT, policy_fp TEXT, done_ns INTEGER);
CREATE TABLE IF NOT EXISTS walk_rows(
  path TEXT PRIMARY KEY, reason INTEGER NOT NULL, message TEXT, run_id TEXT);
)sql";

constexpr const char* kColumns =
    "path, size, mtime_ns, hash, kind, action, reason, message, detail, bytes_before, "
    "bytes_after, out_size, out_mtime_ns, ms, run_id, policy_fp, done_ns";

// Now in UTC to the millisecond ("2026-12-07T03:30:12.345Z"): readable, sorts as text, and
// precise enough that a short run's throughput is not off by a second.
std::string start_time_text() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      now - std::chrono::system_clock::from_time_t(seconds))
                      .count();
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[40];
  const size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(text + n, sizeof text - n, ".%03dZ", int(std::clamp<int64_t>(ms, 0, 999)));
  return text;
}

[[noreturn]] void fail(sqlite3* db, const std::string& what, const std::string& path) {
  throw std::runtime_error("journal " + path + ": " + what + ": " +
                           (db ? sqlite3_errmsg(db) : "out of memory"));
}

std::string text_column(sqlite3_stmt* s, int i) {
  auto p = sqlite3_column_text(s, i);
  return p ? std::string(reinterpret_cast<const char*>(p)) : std::string();
}

JournalRow read_row(sqlite3_stmt* s) {
  JournalRow r;
  r.path = text_column(s, 0);
  r.size = uint64_t(sqlite3_column_int64(s, 1));
  r.mtime_ns = sqlite3_column_int64(s, 2);
  r.hash = text_column(s, 3);
  r.kind = kind_from_name(text_column(s, 4));
  r.action = text_column(s, 5) == "replaced" ? Action::kReplaced : Action::kKept;
  r.reason = Reason(sqlite3_column_int(s, 6));
  r.message = text_column(s, 7);
  r.detail = text_column(s, 8);
  r.bytes_before = uint64_t(sqlite3_column_int64(s, 9));
  r.bytes_after = uint64_t(sqlite3_column_int64(s, 10));
  r.out_size = uint64_t(sqlite3_column_int64(s, 11));
  r.out_mtime_ns = sqlite3_column_int64(s, 12);
  r.ms = sqlite3_column_double(s, 13);
  r.run_id = text_column(s, 14);
  r.policy_fingerprint = text_column(s, 15);
  r.done_ns = sqlite3_column_int64(s, 16);
  return r;
}

void bind_text(sqlite3_stmt* s, int i, const std::string& v) {
  sqlite3_bind_text(s, i, v.data(), int(v.size()), SQLITE_TRANSIENT);
}

}  // namespace

FileResult JournalRow::to_result() const {
  FileResult r;
  r.path = path;
  r.kind = kind;
  r.action = action;
  r.reason = reason;
  r.message = message;
  r.detail = detail;
  r.bytes_in = bytes_before;
  r.bytes_out = bytes_after;
  r.ms = ms;
  return r;
}

Journal::Journal(const std::string& path, bool create) : path_(path) {
  int rc = sqlite3_open_v2(
      path.c_str(), &db_,
      SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw std::runtime_error("journal " + path + ": open: " + message);
  }
  try {
    // Shards on one machine may share a journal: wait for each other's commits.
    sqlite3_busy_timeout(db_, 30'000);
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=NORMAL");
    exec(kSchema);
    std::string find = std::string("SELECT ") + kColumns + " FROM files WHERE path = ?1";
    if (sqlite3_prepare_v2(db_, find.c_str(), -1, &find_, nullptr) != SQLITE_OK)
      fail(db_, "prepare", path_);
    std::string insert = std::string("INSERT OR REPLACE INTO files(") + kColumns +
                         ") VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17)";
    if (sqlite3_prepare_v2(db_, insert.c_str(), -1, &insert_, nullptr) != SQLITE_OK)
      fail(db_, "prepare", path_);
  } catch (...) {
    sqlite3_finalize(find_);
    sqlite3_finalize(insert_);
    sqlite3_close(db_);
    throw;
  }
}

Journal::~Journal() {
  if (committer_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
    }
    wake_.notify_all();
    committer_.join();
  }
  try {
    flush();
  } catch (...) {  // a destructor must not throw; the rows are redone next time
  }
  sqlite3_finalize(find_);
  sqlite3_finalize(insert_);
  sqlite3_close(db_);
}

void Journal::exec(const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : "unknown error";
    sqlite3_free(error);
    throw std::runtime_error("journal " + path_ + ": " + message);
  }
}

void Journal::begin_run(const std::string& run_id, const std::string& policy_text) {
  std::lock_guard lock(mutex_);
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO runs VALUES(?1, ?2, ?3)", -1, &s, nullptr) !=
      SQLITE_OK)
    fail(db_, "prepare", path_);
  bind_text(s, 1, run_id);
  bind_text(s, 2, start_time_text());
  bind_text(s, 3, policy_text);
  int rc = sqlite3_step(s);
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) fail(db_, "insert run", path_);
}

std::optional<JournalRow> Journal::find(const std::string& path) {
  std::lock_guard lock(mutex_);
  sqlite3_reset(find_);
  bind_text(find_, 1, path);
  int rc = sqlite3_step(find_);
  std::optional<JournalRow> row;
  if (rc == SQLITE_ROW) row = read_row(find_);
  sqlite3_reset(find_);
  return row;
}

void Journal::record(const JournalRow& r) {
  std::lock_guard lock(mutex_);
  try {
    insert_locked(r);
  } catch (const std::exception& e) {
    if (first_error_.empty()) first_error_ = e.what();
    throw;
  }
}

void Journal::commit_when_due() {
  std::unique_lock lock(mutex_);
  while (!closing_) {
    const auto due = first_pending_ + kJournalBatchTime;
    if (pending_ > 0 && std::chrono::steady_clock::now() >= due) {
      try {
        commit_locked();
      } catch (const std::exception& e) {  // kept for flush(), as a row's failure is
        if (first_error_.empty()) first_error_ = e.what();
      }
      continue;
    }
    if (pending_ > 0)
      wake_.wait_until(lock, due);
    else
      wake_.wait_for(lock, kJournalBatchTime);
  }
}

void Journal::insert_locked(const JournalRow& r) {
  const bool first = pending_ == 0;
  if (first) {
    exec("BEGIN IMMEDIATE");
    first_pending_ = std::chrono::steady_clock::now();
  }
  // Counted before anything else can throw: a transaction left open with nothing pending made
  // every later row fail to begin one, and the close rolled them all back.
  ++pending_;
  if (first && !committer_.joinable()) {
    try {
      committer_ = std::thread([this] { commit_when_due(); });
    } catch (const std::system_error&) {  // threads refused: rows then commit as later ones
    } catch (const std::bad_alloc&) {     // come in and at flush(), only not on a timer
    }
  }
  sqlite3_reset(insert_);
  bind_text(insert_, 1, r.path);
  sqlite3_bind_int64(insert_, 2, int64_t(r.size));
  sqlite3_bind_int64(insert_, 3, r.mtime_ns);
  bind_text(insert_, 4, r.hash);
  bind_text(insert_, 5, std::string(kind_name(r.kind)));
  bind_text(insert_, 6, r.action == Action::kReplaced ? "replaced" : "kept");
  sqlite3_bind_int(insert_, 7, int(r.reason));
  bind_text(insert_, 8, r.message);
  bind_text(insert_, 9, r.detail);
  sqlite3_bind_int64(insert_, 10, int64_t(r.bytes_before));
  sqlite3_bind_int64(insert_, 11, int64_t(r.bytes_after));
  sqlite3_bind_int64(insert_, 12, int64_t(r.out_size));
  sqlite3_bind_int64(insert_, 13, r.out_mtime_ns);
  sqlite3_bind_double(insert_, 14, r.ms);
  bind_text(insert_, 15, r.run_id);
  bind_text(insert_, 16, r.policy_fingerprint);
  sqlite3_bind_int64(insert_, 17, r.done_ns);
  int rc = sqlite3_step(insert_);
  sqlite3_reset(insert_);
  if (rc != SQLITE_DONE) fail(db_, "insert", path_);
  if (pending_ >= kJournalBatchRows ||
      std::chrono::steady_clock::now() - first_pending_ >= kJournalBatchTime)
    commit_locked();
}

void Journal::commit_locked() {
  if (pending_ == 0) return;
  pending_ = 0;  // even when COMMIT fails: the next record starts a new transaction
  try {
    exec("COMMIT");
  } catch (...) {
    if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

void Journal::flush() {
  std::lock_guard lock(mutex_);
  try {
    commit_locked();
  } catch (const std::exception& e) {
    if (first_error_.empty()) first_error_ = e.what();
  }
  if (!first_error_.empty()) throw std::runtime_error(first_error_);
}

void Journal::replace_walk_rows(const std::string& run_id, const std::vector<FileResult>& rows,
                                const std::string& shard_tag) {
  std::lock_guard lock(mutex_);
  sqlite3_stmt* s = nullptr;
  try {
    commit_locked();
    exec("BEGIN IMMEDIATE");
    if (shard_tag.empty()) {
      exec("DELETE FROM walk_rows");
    } else {
      if (sqlite3_prepare_v2(db_, "DELETE FROM walk_rows WHERE substr(run_id, -length(?1)) = ?1",
                             -1, &s, nullptr) != SQLITE_OK)
        fail(db_, "prepare", path_);
      bind_text(s, 1, shard_tag);
      if (sqlite3_step(s) != SQLITE_DONE) fail(db_, "delete", path_);
      sqlite3_finalize(s);
      s = nullptr;
    }
    if (sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO walk_rows VALUES(?1, ?2, ?3, ?4)", -1, &s,
                           nullptr) != SQLITE_OK)
      fail(db_, "prepare", path_);
    for (const FileResult& r : rows) {
      sqlite3_reset(s);
      bind_text(s, 1, r.path);
      sqlite3_bind_int(s, 2, int(r.reason));
      bind_text(s, 3, r.message);
      bind_text(s, 4, run_id);
      if (sqlite3_step(s) != SQLITE_DONE) fail(db_, "insert", path_);
    }
    sqlite3_finalize(s);
    s = nullptr;
    exec("COMMIT");
  } catch (const std::exception& e) {
    sqlite3_finalize(s);
    if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    if (first_error_.empty()) first_error_ = e.what();
  }
}

std::vector<JournalRow> Journal::rows(const std::string& run_id) {
  std::lock_guard lock(mutex_);
  std::string sql = std::string("SELECT ") + kColumns + " FROM files" +
                    (run_id.empty() ? "" : " WHERE run_id = ?1") + " ORDER BY path";
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK)
    fail(db_, "prepare", path_);
  if (!run_id.empty()) bind_text(s, 1, run_id);
  std::vector<JournalRow> out;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) out.push_back(read_row(s));
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) fail(db_, "read", path_);
  return out;
}

uint64_t Journal::count() {
  std::lock_guard lock(mutex_);
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT count(*) FROM files", -1, &s, nullptr) != SQLITE_OK)
    fail(db_, "prepare", path_);
  uint64_t n = 0;
  if (sqlite3_step(s) == SQLITE_ROW) n = uint64_t(sqlite3_column_int64(s, 0));
  sqlite3_finalize(s);
  return n;
}

}  // namespace lighten::batch

namespace lighten {

std::vector<FileResult> read_journal(const std::string& journal_path, const std::string& run_id) {
  batch::Journal journal(journal_path, /*create=*/false);
  std::vector<FileResult> out;
  for (const auto& row : journal.rows(run_id)) out.push_back(row.to_result());
  return out;
}

namespace {

// Throws, naming `path`, unless it is a journal lighten wrote (its runs and files tables, with
// every column the merge copies); read only, so a bad input changes nothing.
void check_is_journal(const std::string& path) {
  sqlite3* db = nullptr;
  std::string problem;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    problem = db ? sqlite3_errmsg(db) : "out of memory";
  } else {
    sqlite3_busy_timeout(db, 30'000);
    for (const std::string& sql :
         {std::string("SELECT * FROM runs LIMIT 0"),
          std::string("SELECT ") + batch::kColumns + " FROM files LIMIT 0"}) {
      sqlite3_stmt* s = nullptr;
      const bool ok = sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK;
      if (!ok) problem = sqlite3_errmsg(db);
      sqlite3_finalize(s);
      if (!ok) break;
    }
  }
  sqlite3_close(db);
  if (!problem.empty())
    throw std::runtime_error("journal " + path + ": not a journal lighten wrote (" + problem +
                             "); nothing was merged");
}

}  // namespace

uint64_t merge_journals(const std::vector<std::string>& inputs, const std::string& output) {
  for (const auto& input : inputs) {
    struct stat st;
    if (::stat(input.c_str(), &st) != 0)  // ATTACH would create an empty one
      throw std::runtime_error("journal " + input + ": no such file; nothing was merged");
    check_is_journal(input);
  }
  batch::Journal merged(output);
  sqlite3* db = nullptr;
  // A second connection for ATTACH; the Journal above made the schema.
  if (sqlite3_open(output.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    throw std::runtime_error("journal " + output + ": cannot open for merging");
  }
  sqlite3_busy_timeout(db, 30'000);
  auto exec = [&](const std::string& sql) {
    char* error = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      std::string message = error ? error : "unknown error";
      sqlite3_free(error);
      sqlite3_close(db);
      throw std::runtime_error("merging journals into " + output + ": " + message);
    }
  };
  // The walk rows are those of the journals named in this merge: a row an earlier merge brought
  // in may describe a walk that a shard has since redone. (Cleared with the first input's rows,
  // so that a merge that fails before them leaves the journal as it was.)
  bool first = true;
  for (const auto& input : inputs) {
    char* quoted = sqlite3_mprintf("%Q", input.c_str());
    std::string name = quoted;
    sqlite3_free(quoted);
    exec("ATTACH DATABASE " + name + " AS src");
    exec("BEGIN IMMEDIATE");
    if (first) exec("DELETE FROM main.walk_rows");
    first = false;
    exec("INSERT OR IGNORE INTO main.runs SELECT * FROM src.runs");
    exec(std::string("INSERT INTO main.files(") + batch::kColumns + ") SELECT " + batch::kColumns +
         " FROM src.files WHERE true ON CONFLICT(path) DO UPDATE SET "
         "size=excluded.size, mtime_ns=excluded.mtime_ns, hash=excluded.hash, "
         "kind=excluded.kind, action=excluded.action, reason=excluded.reason, "
         "message=excluded.message, detail=excluded.detail, "
         "bytes_before=excluded.bytes_before, bytes_after=excluded.bytes_after, "
         "out_size=excluded.out_size, out_mtime_ns=excluded.out_mtime_ns, ms=excluded.ms, "
         "run_id=excluded.run_id, policy_fp=excluded.policy_fp, done_ns=excluded.done_ns "
         "WHERE excluded.done_ns > files.done_ns");
    // Journals from before the walk rows had none.
    sqlite3_stmt* has = nullptr;
    bool walk_rows = false;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM src.sqlite_master WHERE name = 'walk_rows'", -1, &has,
                           nullptr) == SQLITE_OK)
      walk_rows = sqlite3_step(has) == SQLITE_ROW;
    sqlite3_finalize(has);
    if (walk_rows) exec("INSERT OR REPLACE INTO main.walk_rows SELECT * FROM src.walk_rows");
    exec("COMMIT");
    exec("DETACH DATABASE src");
  }
  sqlite3_close(db);
  return merged.count();
}

}  // namespace lighten
