// Reading a journal for the report: one read-only pass over the files table, folded into a
// ReportAggregator, so a journal of millions of rows needs only the memory of the aggregates.
#include <sqlite3.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>
#include "lighten/report.h"
#include "report/csv.h"

namespace lighten {
namespace {

struct CloseDb {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct FinalizeStatement {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Db = std::unique_ptr<sqlite3, CloseDb>;
using Statement = std::unique_ptr<sqlite3_stmt, FinalizeStatement>;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error("journal " + path + ": " + what);
}

// `path` as an SQLite URI that opens the file as immutable: nothing beside it is created.
std::string immutable_uri(const std::string& path) {
  // An absolute path after an empty authority: "file:" and "//tmp/j" would read "tmp" as a host.
  std::string uri = path.starts_with('/') ? "file://" : "file:";
  for (const char c : path) {
    if (c == '%' || c == '?' || c == '#')
      uri += fmt::format("%{:02x}", static_cast<unsigned char>(c));
    else
      uri += c;
  }
  return uri + "?immutable=1";
}

Db open_read_only(const std::string& path) {
  sqlite3* raw = nullptr;
  // Without a -wal file beside it no run has the journal open (SQLite removes the log when the
  // last writer closes): it is read as it lies, since a read-only connection would leave a -wal
  // and a -shm file in the folder, which it cannot remove.
  std::error_code no_log;
  const bool logged = std::filesystem::exists(path + "-wal", no_log);
  int rc = logged || no_log ? sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr)
                            : sqlite3_open_v2(immutable_uri(path).c_str(), &raw,
                                              SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  Db db(raw);
  // A WAL journal is read through a -shm file beside it, which a read-only folder (an archive,
  // another user's run) cannot hold: such a journal, which no run is writing, is read as it lies.
  if (rc == SQLITE_OK &&
      sqlite3_exec(db.get(), "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) !=
          SQLITE_OK &&
      (sqlite3_errcode(db.get()) == SQLITE_READONLY ||
       sqlite3_errcode(db.get()) == SQLITE_CANTOPEN)) {
    // Read so, rows a run committed to the write-ahead log but not yet into the file would be
    // left out without a word.
    std::error_code ec;
    const uintmax_t wal = std::filesystem::file_size(path + "-wal", ec);
    if (!ec && wal > 0)
      fail(path, "its write-ahead log (" + path +
                     "-wal) holds rows that cannot be read here: SQLite needs to write the -shm "
                     "file beside it; run `lighten report` as the user who ran lighten, or copy "
                     "the journal with its -wal file to a writable folder");
    raw = nullptr;
    rc = sqlite3_open_v2(immutable_uri(path).c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                         nullptr);
    db.reset(raw);
  }
  if (rc != SQLITE_OK)
    fail(path, std::string("cannot open: ") + (raw ? sqlite3_errmsg(raw) : "out of memory") +
                   "; pass the journal `lighten optimize` wrote (OUT/.lighten-journal.sqlite, "
                   "or the --journal FILE of the run)");
  sqlite3_busy_timeout(db.get(), 30'000);  // a running batch may be committing
  return db;
}

Statement prepare(sqlite3* db, const std::string& path, const std::string& sql) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    const std::string message = sqlite3_errmsg(db);
    if (message.find("no such table") != std::string::npos)
      fail(path,
           "not a lighten journal (" + message + "); pass the journal `lighten optimize` wrote");
    fail(path, "cannot read: " + message +
                   "; pass the journal `lighten optimize` wrote (OUT/.lighten-journal.sqlite, or "
                   "the --journal FILE of the run)");
  }
  return Statement(raw);
}

std::string_view text_of(sqlite3_stmt* s, int column) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, column));
  return p ? std::string_view(p, size_t(sqlite3_column_bytes(s, column))) : std::string_view();
}

bool has_column(sqlite3* db, const std::string& path, std::string_view table,
                std::string_view column) {
  Statement s = prepare(db, path, "PRAGMA table_info(" + std::string(table) + ")");
  while (sqlite3_step(s.get()) == SQLITE_ROW)
    if (text_of(s.get(), 1) == column) return true;
  return false;
}

// "2026-12-07T03:30:12.345Z", or to the second as journals before milliseconds wrote it.
double parse_utc(const std::string& text) {
  std::tm tm{};
  const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!rest) return 0;
  const double fraction = *rest == '.' ? std::strtod(rest, nullptr) : 0.0;
  return double(timegm(&tm)) + fraction;
}

std::vector<std::pair<std::string, std::string>> parse_policy(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, end);
    const size_t eq = line.find('=');
    if (eq != std::string_view::npos)
      out.emplace_back(std::string(line.substr(0, eq)), std::string(line.substr(eq + 1)));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return out;
}

// Time the runs took: each run from its start to its last recorded file; runs that overlap
// (shards on several machines) count once, gaps between runs (a resumed batch) not at all.
double wall_seconds(std::vector<ReportRun> runs) {
  std::sort(runs.begin(), runs.end(),
            [](const ReportRun& a, const ReportRun& b) { return a.started_s < b.started_s; });
  double total = 0, open_start = 0, open_end = -1;
  for (const ReportRun& r : runs) {
    if (r.last_done_s <= 0) continue;
    const double start = r.started_s > 0 ? std::min(r.started_s, r.last_done_s) : r.last_done_s;
    if (start > open_end) {
      if (open_end >= 0) total += open_end - open_start;
      open_start = start;
      open_end = r.last_done_s;
    } else {
      open_end = std::max(open_end, r.last_done_s);
    }
  }
  if (open_end >= 0) total += open_end - open_start;
  return total;
}

}  // namespace

ReportSummary summarize_journal(const std::string& journal_path, ReportLimits limits) {
  Db db = open_read_only(journal_path);
  std::vector<ReportRun> runs;
  {
    Statement s = prepare(db.get(), journal_path, "SELECT run_id, started, policy FROM runs");
    while (sqlite3_step(s.get()) == SQLITE_ROW) {
      ReportRun run;
      run.run_id = text_of(s.get(), 0);
      run.started = text_of(s.get(), 1);
      run.started_s = parse_utc(run.started);
      run.policy = parse_policy(text_of(s.get(), 2));
      runs.push_back(std::move(run));
    }
  }
  // A journal may carry the score in a column of its own; older ones only in the detail text.
  const bool score_column = has_column(db.get(), journal_path, "files", "ssimulacra2");
  Statement s = prepare(db.get(), journal_path,
                        std::string("SELECT path, kind, action, reason, message, bytes_before, "
                                    "bytes_after, ms, run_id, done_ns, detail") +
                            (score_column ? ", ssimulacra2" : "") + " FROM files");
  ReportAggregator aggregator(limits);
  size_t last_run = 0;  // rows of one run come together: look that run up first
  int rc;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
    sqlite3_stmt* row = s.get();
    ReportFile f;
    f.path = text_of(row, 0);
    f.kind = kind_from_name(text_of(row, 1));
    f.action = text_of(row, 2) == "replaced" ? Action::kReplaced : Action::kKept;
    f.reason = Reason(sqlite3_column_int(row, 3));
    f.message = text_of(row, 4);
    f.bytes_before = uint64_t(sqlite3_column_int64(row, 5));
    f.bytes_after = uint64_t(sqlite3_column_int64(row, 6));
    f.ms = sqlite3_column_double(row, 7);
    if (score_column && sqlite3_column_type(row, 11) != SQLITE_NULL)
      f.ssimulacra2 = sqlite3_column_double(row, 11);
    else if (f.action == Action::kReplaced)
      f.ssimulacra2 = ssimulacra2_from_detail(text_of(row, 10));
    aggregator.add(f);

    const std::string_view run_id = text_of(row, 8);
    const double done_s = double(sqlite3_column_int64(row, 9)) / 1e9;
    if (last_run >= runs.size() || runs[last_run].run_id != run_id) {
      last_run = size_t(std::find_if(runs.begin(), runs.end(),
                                     [&](const ReportRun& r) { return r.run_id == run_id; }) -
                        runs.begin());
      if (last_run == runs.size()) {  // a row whose run was not recorded (a hand-made merge)
        ReportRun unknown;
        unknown.run_id = run_id;
        runs.push_back(std::move(unknown));
      }
    }
    ReportRun& run = runs[last_run];
    run.last_done_s = std::max(run.last_done_s, done_s);
    if (run.started_s <= 0 || done_s - f.ms / 1e3 < run.started_s)
      run.started_s = done_s - f.ms / 1e3;  // unknown start: the first file's start
  }
  if (rc != SQLITE_DONE)
    fail(journal_path, std::string("cannot read: ") + sqlite3_errmsg(db.get()));
  // What the latest walk met that is no file (journals from before it was kept have none).
  if (has_column(db.get(), journal_path, "walk_rows", "path")) {
    Statement w = prepare(db.get(), journal_path, "SELECT path, reason, message FROM walk_rows");
    while ((rc = sqlite3_step(w.get())) == SQLITE_ROW)
      aggregator.add({.path = text_of(w.get(), 0),
                      .kind = Kind::kUnknown,
                      .action = Action::kKept,
                      .reason = Reason(sqlite3_column_int(w.get(), 1)),
                      .message = text_of(w.get(), 2),
                      .bytes_before = 0,
                      .bytes_after = 0,
                      .ms = 0,
                      .ssimulacra2 = std::nullopt});
    if (rc != SQLITE_DONE)
      fail(journal_path, std::string("cannot read: ") + sqlite3_errmsg(db.get()));
  }

  ReportSummary summary = aggregator.finish();
  summary.source = journal_path;
  // Runs that wrote no row (nothing left to do) say nothing about the files: leave them out.
  std::erase_if(runs, [](const ReportRun& r) { return r.last_done_s <= 0; });
  summary.wall_seconds = wall_seconds(runs);
  std::sort(runs.begin(), runs.end(),
            [](const ReportRun& a, const ReportRun& b) { return a.started_s < b.started_s; });
  summary.runs = std::move(runs);
  return summary;
}

void write_files_csv(std::ostream& out, const std::string& journal_path) {
  Db db = open_read_only(journal_path);
  const bool score_column = has_column(db.get(), journal_path, "files", "ssimulacra2");
  const bool walk_rows = has_column(db.get(), journal_path, "walk_rows", "path");
  Statement s = prepare(
      db.get(), journal_path,
      std::string("SELECT path, kind, action, reason, bytes_before, bytes_after, ms, message, "
                  "detail") +
          (score_column ? ", ssimulacra2" : "") + " FROM files" +
          (walk_rows ? std::string(" UNION ALL SELECT path, 'unknown', 'kept', reason, 0, 0, 0, "
                                   "message, ''") +
                           (score_column ? ", NULL" : "") + " FROM walk_rows"
                     : "") +
          " ORDER BY path");
  out << "path,kind,action,reason,bytes_before,bytes_after,saved_percent,ssimulacra2,ms,message,"
         "detail\n";
  int rc;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
    sqlite3_stmt* row = s.get();
    const bool replaced = text_of(row, 2) == "replaced";
    const auto before = uint64_t(sqlite3_column_int64(row, 4));
    const auto after = uint64_t(sqlite3_column_int64(row, 5));
    std::optional<double> score;
    if (score_column && sqlite3_column_type(row, 9) != SQLITE_NULL)
      score = sqlite3_column_double(row, 9);
    else if (replaced)
      score = ssimulacra2_from_detail(text_of(row, 8));
    const double saved =
        before == 0 ? 0.0 : 100.0 * (double(before) - double(after)) / double(before);
    out << csv::field(text_of(row, 0)) << ',' << csv::field(text_of(row, 1)) << ','
        << (replaced ? "optimized" : "kept") << ','
        << reason_name(Reason(sqlite3_column_int(row, 3))) << ',' << before << ',' << after << ','
        << fmt::format("{:.2f}", saved) << ',' << (score ? fmt::format("{:.2f}", *score) : "")
        << ',' << fmt::format("{:.1f}", sqlite3_column_double(row, 6)) << ','
        << csv::field(text_of(row, 7)) << ',' << csv::field(text_of(row, 8)) << '\n';
  }
  if (rc != SQLITE_DONE)
    fail(journal_path, std::string("cannot read: ") + sqlite3_errmsg(db.get()));
  if (!out.flush()) throw std::runtime_error("cannot write the CSV");
}

}  // namespace lighten
