// A journal of a million files must make a report quickly and a page that stays small: the
// page embeds aggregates and a bounded sample, never a row per file.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>

#include "batch/journal.h"
#include "lighten/report.h"

namespace fs = std::filesystem;

namespace lighten {
namespace {

constexpr int kRows = 1'000'000;
// Generous bounds for a shared 2-core machine; the figures are printed for the README.
constexpr double kMaxSeconds = 60;
constexpr uintmax_t kMaxHtmlBytes = 4'000'000;

void exec(sqlite3* db, const char* sql) {
  char* error = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
}

// Rows like a real perceptual run over photos and documents: most files shrink, some are left
// alone for a handful of reasons, JPEGs carry a score in their detail.
void fill_journal(const std::string& path) {
  { batch::Journal schema(path); }  // the real schema
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  exec(db, "PRAGMA synchronous=OFF");
  exec(db, "INSERT INTO runs VALUES('run-a', '2026-01-01T00:00:00Z', 'mode=high\neffort=5\n')");
  exec(db, "BEGIN");
  sqlite3_stmt* insert = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "INSERT INTO files(path, size, mtime_ns, hash, kind, action, "
                               "reason, message, detail, bytes_before, bytes_after, out_size, "
                               "out_mtime_ns, ms, run_id, policy_fp, done_ns) VALUES(?1, ?2, 0, "
                               "'0', ?3, ?4, ?5, ?6, ?7, ?2, ?8, ?8, 0, ?9, 'run-a', 'fp', ?10)",
                               -1, &insert, nullptr),
            SQLITE_OK);
  std::mt19937_64 random(42);
  const char* kinds[] = {"jpeg", "jpeg", "jpeg", "png", "pdf", "docx", "pptx", "unknown"};
  const int64_t start_ns = 1'767'225'600'000'000'000;  // 2026-01-01T00:00:00Z
  char path_text[96], detail[200];
  for (int i = 0; i < kRows; ++i) {
    const std::string kind = kinds[random() % 8];
    const int64_t before = 20'000 + int64_t(random() % 8'000'000);
    const bool kept = kind == "unknown" || random() % 10 == 0;
    const double score = 80.0 + double(random() % 1500) / 100.0;
    const int64_t after = kept ? before : before - before * int64_t(5 + random() % 70) / 100;
    std::snprintf(path_text, sizeof path_text, "/nas/claims/%04d/%03d/photo-%07d.%s", i / 10'000,
                  (i / 100) % 100, i, kind.c_str());
    std::snprintf(detail, sizeof detail,
                  kind == "jpeg" && !kept ? "requantised q~92 -> q78.00 (Robidoux tables) with "
                                            "trellis, SSIMULACRA2 %.2f (worst tile 75.0, floor "
                                            "80.0, 4 evaluations)"
                                          : "recompressed",
                  score);
    sqlite3_bind_text(insert, 1, path_text, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(insert, 2, before);
    sqlite3_bind_text(insert, 3, kind.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert, 4, kept ? "kept" : "replaced", -1, SQLITE_STATIC);
    const int reason = !kept ? 0 : kind == "unknown" ? 2 : int(1 + random() % 6);
    sqlite3_bind_int(insert, 5, reason);
    sqlite3_bind_text(insert, 6, kept ? "left alone for a reason" : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(insert, 7, detail, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(insert, 8, after);
    sqlite3_bind_double(insert, 9, double(random() % 5000) / 10.0);
    sqlite3_bind_int64(insert, 10, start_ns + int64_t(i) * 3'000'000);  // 3 ms apart
    ASSERT_EQ(sqlite3_step(insert), SQLITE_DONE);
    sqlite3_reset(insert);
  }
  sqlite3_finalize(insert);
  exec(db, "COMMIT");
  sqlite3_close(db);
}

TEST(ReportScale, AMillionRowJournalMakesASmallPageQuickly) {
  const fs::path dir =
      fs::temp_directory_path() / ("lighten-report-1m-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string journal = (dir / "journal.sqlite").string();
  const std::string html = (dir / "report.html").string();
  fill_journal(journal);

  const auto start = std::chrono::steady_clock::now();
  const ReportSummary summary = summarize_journal(journal);
  write_html_report(html, summary, {});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const uintmax_t size = fs::file_size(html);
  std::printf("report of %d journal rows: %.2f s, HTML %.2f MB (%zu scatter points of %llu)\n",
              kRows, seconds, double(size) / 1e6, summary.scatter.size(),
              static_cast<unsigned long long>(summary.total.scored));
  RecordProperty("seconds", std::to_string(seconds));
  RecordProperty("html_bytes", std::to_string(size));

  EXPECT_EQ(summary.total.files, uint64_t(kRows));
  EXPECT_EQ(summary.scatter.size(), ReportLimits{}.scatter_points);
  EXPECT_NEAR(summary.wall_seconds, kRows * 0.003, 1.0);
  EXPECT_LT(seconds, kMaxSeconds);
  EXPECT_LT(size, kMaxHtmlBytes);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lighten
