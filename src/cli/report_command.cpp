// `lighten report JOURNAL [-o report.html] [--probe PROBE.json ...] [--csv FILE|-]`: the page a
// data lead forwards, and CSV for spreadsheets, from a run's journal.
#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "lighten/report.h"

namespace lighten::cli {
namespace {

struct ReportArgs {
  std::string journal;
  std::string html;
  std::vector<std::string> probes;
  std::string csv_kinds;
  std::string csv_files;
};

// "-" is standard output; anything else a file, named in the error when it cannot be written.
void write_csv_to(const std::string& target, const std::function<void(std::ostream&)>& write) {
  if (target == "-") {
    write(std::cout);
    return;
  }
  write_csv_file(target, write);
}

int run_report(const ReportArgs& args) {
  if (args.html.empty() && args.csv_kinds.empty() && args.csv_files.empty()) {
    fmt::print(stderr,
               "lighten report: say what to write: -o report.html, --csv FILE (a row per kind) "
               "or --csv-files FILE (a row per file); - writes a CSV to standard output\n");
    return kExitUsage;
  }
  // The page is a file to open; one stream cannot carry two CSVs; two outputs cannot share a
  // file.
  if (args.html == "-") {
    fmt::print(stderr,
               "lighten report: -o takes a file for the page (it is opened from disk); - is for "
               "--csv or --csv-files\n");
    return kExitUsage;
  }
  if (args.csv_kinds == "-" && args.csv_files == "-") {
    fmt::print(stderr,
               "lighten report: --csv and --csv-files cannot both write to standard output; give "
               "one of them a file\n");
    return kExitUsage;
  }
  {
    const std::vector<std::pair<const char*, const std::string*>> outputs = {
        {"-o", &args.html}, {"--csv", &args.csv_kinds}, {"--csv-files", &args.csv_files}};
    for (size_t i = 0; i < outputs.size(); ++i)
      for (size_t k = i + 1; k < outputs.size(); ++k) {
        const std::string &a = *outputs[i].second, &b = *outputs[k].second;
        if (a.empty() || b.empty() || a == "-" || b == "-") continue;
        if (same_path(a, b)) {
          fmt::print(stderr, "lighten report: {} and {} both name {}; give each its own file\n",
                     outputs[i].first, outputs[k].first, a);
          return kExitUsage;
        }
      }
  }
  // Writing over what the report reads would lose the run's record (and its resume).
  for (const auto& [flag, target] :
       {std::pair{"-o", &args.html}, std::pair{"--csv", &args.csv_kinds},
        std::pair{"--csv-files", &args.csv_files}}) {
    std::vector<std::string> inputs = args.probes;
    inputs.push_back(args.journal);
    for (const char* suffix : {"-wal", "-shm"}) inputs.push_back(args.journal + suffix);
    if (*target == "-" || target->empty()) continue;
    for (const std::string& input : inputs) {
      std::error_code ec;
      if (std::filesystem::equivalent(*target, input, ec)) {
        fmt::print(stderr, "lighten report: {} {} is a file the report reads; choose another\n",
                   flag, *target);
        return kExitUsage;
      }
    }
    if (const std::string why = unwritable_reason(*target); !why.empty()) {
      fmt::print(stderr, "lighten report: {} {}: {}\n", flag, *target, why);
      return kExitUsage;
    }
  }
  try {
    const auto start = std::chrono::steady_clock::now();
    const ReportSummary summary = summarize_journal(args.journal);
    if (!args.html.empty()) write_html_report(args.html, summary, args.probes);
    if (!args.csv_kinds.empty())
      write_csv_to(args.csv_kinds, [&](std::ostream& out) { write_kinds_csv(out, summary); });
    if (!args.csv_files.empty())
      write_csv_to(args.csv_files, [&](std::ostream& out) { write_files_csv(out, args.journal); });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const ReportTotals& t = summary.total;
    const double saved = t.bytes_before ? 100.0 * (double(t.bytes_before) - double(t.bytes_after)) /
                                              double(t.bytes_before)
                                        : 0.0;
    fmt::print(stderr, "lighten report: {} files, {} -> {} ({:.1f}% saved){}{} in {:.1f} s\n",
               t.files, format_bytes(t.bytes_before), format_bytes(t.bytes_after), saved,
               args.html.empty() ? "" : "; wrote ", args.html, seconds);
  } catch (const std::exception& e) {
    fmt::print(stderr, "lighten report: {}\n", e.what());
    return kExitFailures;
  }
  return kExitOk;
}

}  // namespace

Command add_report_command(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write the HTML report (one self-contained file: totals, savings per kind and per file, "
      "quality, files left alone and why, the slowest files, the probe before/after) and CSV "
      "from a run's journal");
  cmd->add_option(
         "journal", args->journal,
         "The run's journal (OUT/.lighten-journal.sqlite, OUT/.lighten-journal.shard-K-of-N.sqlite "
         "with --shard, or the --journal FILE)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", args->html, "Write the HTML page here, e.g. report.html");
  cmd->add_option("--probe", args->probes,
                  "A `lighten probe DATA --compare OUT --json FILE` result to draw before/after "
                  "(repeatable)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--csv", args->csv_kinds,
                  "Write a CSV with a row per kind and a total row (- for standard output)");
  cmd->add_option("--csv-files", args->csv_files,
                  "Write a CSV with a row per file, in path order (- for standard output)");
  return {cmd, [args] { return run_report(*args); }};
}

}  // namespace lighten::cli
