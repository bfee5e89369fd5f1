// `lighten optimize PATH... (-o OUT | --in-place)`: the batch over files and directories.
#include <fmt/format.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

#include "commands.h"
#include "lighten/batch.h"
#include "lighten/lighten.h"
#include "lighten/options.h"
#include "lighten/report.h"
#include "policy_flags.h"
#include "progress_view.h"

namespace lighten::cli {
namespace {

struct OptimizeArgs {
  BatchOptions batch;
  PolicyFlags policy;
  std::string shard;
  std::string memory_budget;
  std::string report_json;
  std::string report_html;
  bool no_journal = false;
  bool hardlink_unchanged = false;
  bool quiet = false;
  bool verbose = false;
};

// Feeds the progress view and, for --report-html, the report's aggregates (bounded memory,
// however many files the run has).
class RunSink final : public ProgressSink {
 public:
  RunSink(ProgressView& view, ReportAggregator* report) : view_(view), report_(report) {}
  void on_discovered(uint64_t files, uint64_t bytes) override { view_.on_discovered(files, bytes); }
  void on_file(const FileResult& r) override {
    view_.on_file(r);
    if (!report_) return;
    report_->add({.path = r.path,
                  .kind = r.kind,
                  .action = r.action,
                  .reason = r.reason,
                  .message = r.message,
                  .bytes_before = r.bytes_in,
                  .bytes_after = r.bytes_out,
                  .ms = r.ms,
                  .ssimulacra2 = r.action == lighten::Action::kReplaced
                                     ? ssimulacra2_from_detail(r.detail)
                                     : std::nullopt});
  }
  void on_finish(const BatchSummary& summary) override { view_.on_finish(summary); }

 private:
  ProgressView& view_;
  ReportAggregator* report_;
};

// The first SIGINT or SIGTERM asks the batch to start no further file; the files running finish
// and are journaled. The handler then gives the signal back its default, so a second one ends
// the process at once (writes are atomic: a later run removes the temporary files).
class StopOnInterrupt {
 public:
  StopOnInterrupt() {
    flag().store(false);
    signal_number() = 0;
    struct sigaction action {};
    action.sa_handler = &StopOnInterrupt::handle;
    action.sa_flags = SA_RESETHAND;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopOnInterrupt() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopOnInterrupt(const StopOnInterrupt&) = delete;
  StopOnInterrupt& operator=(const StopOnInterrupt&) = delete;
  const std::atomic<bool>& requested() const { return flag(); }
  // 128 + the signal, as shells report a process it ended.
  int exit_code() const { return 128 + signal_number(); }

 private:
  static std::atomic<bool>& flag() {
    static std::atomic<bool> stop{false};
    return stop;
  }
  static volatile sig_atomic_t& signal_number() {
    static volatile sig_atomic_t number = 0;
    return number;
  }
  static void handle(int number) {
    signal_number() = number;
    flag().store(true);
    constexpr char kMessage[] =
        "\nlighten: stopping after the files in progress (again to stop at once)\n";
    (void)!::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  }
  struct sigaction old_int_ {
  }, old_term_{};
};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler stores the flag");

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// Why the run started no more files, for its reports: files are left only by `stop` (an
// interrupt) or a full disk; "" when it ran to the end.
std::string stopped_because(const BatchSummary& summary) {
  if (summary.not_started + summary.links_not_started == 0) return "";
  return summary.stopped_because.empty() ? "interrupted"
                                         : "the disk is full (" + summary.stopped_because + ")";
}

// The kind of the file at `path` where it is one of `inputs` or lies inside one, and its first
// bytes make it a kind lighten knows (a report replacing it would lose it); kUnknown otherwise
// (no such file, another kind of file, or one outside the inputs).
Kind input_kind_at(const std::string& path, const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return Kind::kUnknown;
  const fs::path file = fs::weakly_canonical(path, ec);
  const bool inside = std::any_of(inputs.begin(), inputs.end(), [&](const std::string& input) {
    std::error_code error;
    const fs::path root = fs::weakly_canonical(input, error);
    const auto end = std::mismatch(root.begin(), root.end(), file.begin(), file.end()).first;
    return !error && end == root.end();
  });
  if (!inside) return Kind::kUnknown;
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> head(4096);
  in.read(reinterpret_cast<char*>(head.data()), std::streamsize(head.size()));
  head.resize(size_t(in.gcount()));
  return sniff(head);
}

// The HTML page of this run, built from what the run saw (also without a journal).
void write_run_report(const OptimizeArgs& args, const BatchSummary& summary,
                      const ReportAggregator& aggregator, const std::string& started) {
  ReportSummary report = aggregator.finish();
  report.source =
      summary.journal_path.empty() ? "lighten optimize (no journal)" : summary.journal_path;
  report.journaled = !summary.journal_path.empty();
  report.dry_run = args.batch.dry_run;
  report.wall_seconds = summary.seconds;
  report.from_earlier_runs = summary.from_journal;
  report.not_started = summary.not_started;
  report.stopped_because = stopped_because(summary);
  ReportRun run;
  run.run_id = summary.run_id;
  run.started = started;
  run.last_done_s = double(std::time(nullptr));
  run.started_s = run.last_done_s - summary.seconds;
  run.policy = describe_policy(args.batch.policy);
  report.runs.push_back(std::move(run));
  write_html_report(args.report_html, report, {});
}

int run_optimize(OptimizeArgs& args) {
  BatchOptions& batch = args.batch;
  try {
    batch.policy = args.policy.build();
    if (!args.shard.empty()) batch.shard = parse_shard(args.shard);
    if (!args.memory_budget.empty())
      batch.memory_budget = parse_size("memory-budget", args.memory_budget);
  } catch (const OptionError& e) {
    fmt::print(stderr, "lighten optimize: {}\n", e.what());
    return kExitUsage;
  }
  if (batch.in_place && !batch.output_dir.empty()) {
    fmt::print(stderr,
               "lighten optimize: -o OUT (a mirror) and --in-place (replace the originals) "
               "exclude each other: give one\n");
    return kExitUsage;
  }
  if (!batch.dry_run && batch.in_place == !batch.output_dir.empty()) {
    fmt::print(stderr,
               "lighten optimize: say where results go: -o OUT (a mirror) or --in-place "
               "(replace the originals), or --dry-run to only measure\n");
    return kExitUsage;
  }
  if (std::error_code ec; !batch.output_dir.empty() &&
                          std::filesystem::exists(batch.output_dir, ec) &&
                          !std::filesystem::is_directory(batch.output_dir, ec)) {
    fmt::print(stderr, "lighten optimize: -o {}: not a directory; give a folder for the mirror\n",
               batch.output_dir);
    return kExitUsage;
  }
  for (const auto& [flag, path] :
       {std::pair{"--report", &args.report_json}, std::pair{"--report-html", &args.report_html}})
    if (!path->empty())
      if (const std::string why =
              unwritable_reason(*path, batch.dry_run ? std::string() : batch.output_dir);
          !why.empty()) {
        fmt::print(stderr, "lighten optimize: {} {}: {}\n", flag, *path, why);
        return kExitUsage;
      }
  batch.use_journal = !args.no_journal;
  if (!args.report_json.empty() && !args.report_html.empty() &&
      same_path(args.report_json, args.report_html)) {
    fmt::print(stderr,
               "lighten optimize: --report and --report-html both name {}; give each its own "
               "file\n",
               args.report_json);
    return kExitUsage;
  }
  // Writing over the journal would lose the run's record (and the next run's resume); over a
  // photo or document of the inputs, that file.
  std::vector<std::string> journal_files;
  if (batch.use_journal && !batch.dry_run) {
    const std::string journal =
        batch.journal_path.empty() ? default_journal_path(batch) : batch.journal_path;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      journal_files.push_back(journal + suffix);
  }
  for (const auto& [flag, path] :
       {std::pair{"--report", &args.report_json}, std::pair{"--report-html", &args.report_html}}) {
    if (path->empty()) continue;
    std::string why;
    for (const std::string& journal : journal_files)
      if (same_path(*path, journal)) why = "the run's journal";
    if (const Kind kind = input_kind_at(*path, batch.inputs); kind != Kind::kUnknown)
      why = fmt::format("a {} file of the run's inputs", kind_name(kind));
    if (!batch.dry_run && mirror_writes_at(batch, *path))
      why = "where the mirror writes the copy of an input";
    if (!why.empty()) {
      fmt::print(stderr, "lighten optimize: {} {} is {}; choose another file\n", flag, *path, why);
      return kExitUsage;
    }
  }
  batch.unchanged = args.hardlink_unchanged ? UnchangedFiles::kHardlink : UnchangedFiles::kCopy;
  const Verbosity verbosity = args.quiet     ? Verbosity::kQuiet
                              : args.verbose ? Verbosity::kVerbose
                                             : Verbosity::kNormal;
  ProgressView view(stderr, verbosity, !args.report_json.empty(),
                    batch.use_journal && !batch.dry_run);
  ReportAggregator aggregator;
  RunSink sink(view, args.report_html.empty() ? nullptr : &aggregator);
  const std::string started = utc_now();
  BatchSummary summary;
  const StopOnInterrupt stop_on_interrupt;
  batch.stop = &stop_on_interrupt.requested();
  // The progress moves on while a long file finishes nothing.
  std::mutex ticking;
  std::condition_variable stop_ticking;
  bool ran = false;
  std::thread ticker;
  try {
    ticker = std::thread([&] {
      std::unique_lock lock(ticking);
      while (!stop_ticking.wait_for(lock, std::chrono::seconds(1), [&] { return ran; }))
        view.tick();
    });
  } catch (const std::system_error&) {  // threads refused: the work matters, the ticking not
  } catch (const std::bad_alloc&) {
  }
  const auto stop_ticker = [&] {
    {
      std::lock_guard lock(ticking);
      ran = true;
    }
    stop_ticking.notify_all();
    if (ticker.joinable()) ticker.join();
  };
  try {
    summary = run_batch(batch, sink);
    stop_ticker();
  } catch (const BatchOptionError& e) {
    stop_ticker();
    fmt::print(stderr, "lighten optimize: {}\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    stop_ticker();
    fmt::print(stderr, "lighten optimize: {}\n", e.what());
    return kExitFailures;
  }
  if (!args.quiet) print_summary_table(std::cout, summary, batch.dry_run);
  if (!args.report_json.empty()) {
    try {
      write_json_report(args.report_json, summary, view.rows(), batch.policy, batch.dry_run,
                        stopped_because(summary));
    } catch (const std::exception& e) {
      fmt::print(stderr, "lighten optimize: {}\n", e.what());
      return kExitFailures;
    }
  }
  if (!args.report_html.empty()) {
    try {
      write_run_report(args, summary, aggregator, started);
      if (!args.quiet) fmt::print(stderr, "report: {}\n", args.report_html);
    } catch (const std::exception& e) {
      fmt::print(stderr, "lighten optimize: {}\n", e.what());
      return kExitFailures;
    }
  }
  if (summary.workers_refused > 0)
    fmt::print(stderr,
               "lighten optimize: the system refused to start {} (a limit on tasks or memory); "
               "the others did the work\n",
               counted(summary.workers_refused, "worker thread"));
  const bool journaled = !summary.journal_path.empty() && summary.journal_error.empty();
  const char* resume = journaled ? ": finished files are skipped" : "";
  int exit_code = summary.io_errors + summary.failures > 0 ? kExitFailures : kExitOk;
  if (!summary.journal_error.empty()) {
    fmt::print(stderr,
               "lighten optimize: some of the journal's rows were not written ({}); the files "
               "they name are looked at again by the next run\n",
               summary.journal_error);
    exit_code = kExitFailures;
  }
  std::string not_started = counted(summary.not_started, "file");
  if (summary.links_not_started > 0)
    not_started += " and " + counted(summary.links_not_started, "symbolic link");
  const bool left_some = summary.not_started + summary.links_not_started > 0;
  if (left_some && !summary.stopped_because.empty()) {
    fmt::print(stderr,
               "lighten optimize: stopped, the disk is full ({}); {} not started. Free space "
               "and run the same command again{}\n",
               summary.stopped_because, not_started, resume);
    exit_code = kExitFailures;
  }
  if (left_some && stop_on_interrupt.requested().load()) {
    fmt::print(stderr, "lighten optimize: interrupted; {} not started. {}\n", not_started,
               journaled ? "The journal holds every finished one: the same command goes on from "
                           "there"
                         : "Without a journal, the same command starts over");
    return stop_on_interrupt.exit_code();
  }
  return exit_code;
}

}  // namespace

Command add_optimize_command(CLI::App& app) {
  auto args = std::make_shared<OptimizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "optimize",
      "Make files smaller in place or into a mirror; every output is verified before it "
      "replaces anything, and files that do not shrink are left as they are");
  cmd->add_option("paths", args->batch.inputs, "Files and directories to optimise")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("-o,--output", args->batch.output_dir,
                  "Write a complete mirror of the inputs here (unchanged files are copied)");
  CLI::Option* in_place = cmd->add_flag("--in-place", args->batch.in_place,
                                        "Replace originals atomically (temp file, fsync, rename)");
  cmd->add_flag("-n,--dry-run", args->batch.dry_run, "Measure what would be saved; write nothing");
  cmd->add_option("-j,--jobs", args->batch.jobs,
                  "Worker threads (default, and 0: the cores this process may use, after its "
                  "CPU affinity and a container's CPU quota)")
      ->check(CLI::Range(0u, 4096u));
  cmd->add_option("--memory-budget", args->memory_budget,
                  "Memory the workers may use together, e.g. 4G (default, and 0: half of RAM, or "
                  "of a container's memory limit if lower, at most 8G)");
  CLI::Option* journal = cmd->add_option(
      "--journal", args->batch.journal_path,
      "SQLite journal that makes runs resumable (default: OUT/.lighten-journal.sqlite, with "
      "--shard K/N OUT/.lighten-journal.shard-K-of-N.sqlite, "
      "or under ~/.local/state/lighten/ for --in-place)");
  cmd->add_flag("--no-journal", args->no_journal, "Keep no journal (runs cannot resume)")
      ->excludes(journal);
  cmd->add_flag("--follow-symlinks", args->batch.follow_symlinks,
                "Follow symbolic links while walking (default: a mirror holds them as links, "
                "in place they are skipped)");
  cmd->add_flag("--link-unchanged", args->hardlink_unchanged,
                "In a mirror, hard-link files that did not shrink instead of copying them")
      ->excludes(in_place);
  cmd->add_option("--shard", args->shard,
                  "Take only share K of N (e.g. 2/8), chosen by a stable hash of each path, so N "
                  "machines can split one tree");
  cmd->add_option("--report", args->report_json, "Write a JSON report with a row per file");
  cmd->add_option("--report-html", args->report_html,
                  "Write the HTML report of this run here (as `lighten report` draws it)");
  CLI::Option* quiet = cmd->add_flag("-q,--quiet", args->quiet, "Print nothing but errors");
  cmd->add_flag("-v,--verbose", args->verbose, "Print a line for every file")->excludes(quiet);
  args->policy.add_to(*cmd);
  return {cmd, [args] { return run_optimize(*args); }};
}

}  // namespace lighten::cli
