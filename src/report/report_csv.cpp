// The per-kind CSV: one row per kind and a total, for a spreadsheet beside the HTML page.
#include <fmt/format.h>

#include <stdexcept>

#include "core/text_output.h"
#include "lighten/report.h"
#include "report/csv.h"

namespace lighten {
namespace {

void write_row(std::ostream& out, std::string_view name, const ReportTotals& t,
               uint64_t left_alone) {
  const uint64_t saved = t.bytes_after < t.bytes_before ? t.bytes_before - t.bytes_after : 0;
  const double percent = t.bytes_before ? 100.0 * double(saved) / double(t.bytes_before) : 0.0;
  out << csv::field(name) << ',' << t.files << ',' << t.optimized << ',' << left_alone << ','
      << t.bytes_before << ',' << t.bytes_after << ',' << saved << ','
      << fmt::format("{:.2f}", percent) << ','
      << (t.scored ? fmt::format("{:.2f}", t.score_min) : "") << ','
      << (t.scored ? fmt::format("{:.2f}", t.score_sum / double(t.scored)) : "") << ','
      << fmt::format("{:.3f}", t.ms / 1e3) << '\n';
}

}  // namespace

void write_kinds_csv(std::ostream& out, const ReportSummary& summary) {
  out << "kind,files,optimized,left_alone,bytes_before,bytes_after,bytes_saved,saved_percent,"
         "ssimulacra2_min,ssimulacra2_mean,cpu_seconds\n";
  for (const auto& [kind, totals] : summary.kinds)
    write_row(out, kind_name(kind), totals, totals.files - totals.optimized);
  write_row(out, "total", summary.total, summary.total.files - summary.total.optimized);
  if (!out.flush()) throw std::runtime_error("cannot write the CSV");
}

void write_csv_file(const std::string& path, const std::function<void(std::ostream&)>& write) {
  write_stream_atomically(path, write,
                          "choose a writable place for the CSV, or - for standard output");
}

}  // namespace lighten
