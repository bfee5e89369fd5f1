#include <fmt/format.h>

#include <algorithm>

#include "lighten/lighten.h"
#include "lighten/report.h"

namespace lighten {
namespace {

double saved_percent(uint64_t before, uint64_t after) {
  if (before == 0) return 0.0;
  return 100.0 * (double(before) - double(after)) / double(before);
}

std::string kept_text(const std::map<Reason, uint64_t>& kept) {
  std::string text;
  for (const auto& [reason, count] : kept) {
    if (!text.empty()) text += ", ";
    text += fmt::format("{} {}", count, reason_name(reason));
  }
  return text.empty() ? "-" : text;
}

}  // namespace

std::string counted(uint64_t count, std::string_view noun) {
  return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

std::string printable_text(std::string_view text) {
  const auto is_control = [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; };
  if (std::none_of(text.begin(), text.end(), is_control)) return std::string(text);
  std::string out = "$'";
  for (const char c : text) {
    if (c == '\'')
      out += "\\'";
    else if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (is_control(c))
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else
      out += c;
  }
  return out + "'";
}

std::string format_bytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  double v = double(bytes);
  size_t unit = 0;
  while (v >= 1000.0 && unit + 1 < std::size(kUnits)) {
    v /= 1000.0;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.2f} {}", v, kUnits[unit]);
}

void print_summary_table(std::ostream& out, const BatchSummary& summary, bool dry_run) {
  const char* replaced_header = dry_run ? "would shrink" : "optimised";
  out << fmt::format("{:<8} {:>8} {:>12} {:>12} {:>12} {:>7}  {}\n", "kind", "files",
                     replaced_header, "before", "after", "saved", "left alone (reason)");
  auto row = [&](std::string_view name, const KindTotals& t) {
    out << fmt::format("{:<8} {:>8} {:>12} {:>12} {:>12} {:>6.1f}%  {}\n", name, t.files,
                       t.replaced, format_bytes(t.bytes_in), format_bytes(t.bytes_out),
                       saved_percent(t.bytes_in, t.bytes_out), kept_text(t.kept));
  };
  for (const auto& [kind, totals] : summary.by_kind) row(kind_name(kind), totals);
  if (summary.by_kind.size() != 1) row("total", summary.total);
  // A run stopped (Ctrl-C, a full disk) is not done: the files it did not start wait for the
  // next.
  if (summary.not_started > 0)
    out << fmt::format("{}stopped after {:.1f} s with {} not started",
                       dry_run ? "dry run: nothing written; " : "", summary.seconds,
                       counted(summary.not_started, "file"));
  else
    out << fmt::format("{} in {:.1f} s", dry_run ? "dry run: nothing written" : "done",
                       summary.seconds);
  // Throughput only counts work this run did; journal rows were done by an earlier one.
  if (summary.seconds > 0 && summary.from_journal == 0)
    out << fmt::format(", {:.1f} MB/s", double(summary.total.bytes_in) / 1e6 / summary.seconds);
  if (summary.from_journal == summary.total.files && summary.total.files > 0)
    out << fmt::format(
        "; nothing left to do: {} done by an earlier run (the table shows the journal's "
        "results)",
        summary.from_journal == 1 ? "the one file was"
                                  : fmt::format("all {} files were", summary.from_journal));
  else if (summary.from_journal > 0)
    out << fmt::format("; {} already done by an earlier run (journal)",
                       counted(summary.from_journal, "file"));
  if (summary.links > 0)
    out << fmt::format("; symbolic links {} in the mirror: {}", dry_run ? "to make" : "held",
                       summary.links);
  if (summary.cleaned_temps > 0)
    out << fmt::format("; removed {} left by an interrupted run",
                       counted(summary.cleaned_temps, "temporary file"));
  if (summary.io_errors > 0)
    out << fmt::format("; {} failed on I/O (listed above with the cause; fix it and run again{})",
                       counted(summary.io_errors, "file"),
                       summary.journal_path.empty() ? "" : ": finished files are skipped");
  out << "\n";
  if (!summary.journal_path.empty()) out << "journal: " << summary.journal_path << "\n";
}

}  // namespace lighten
