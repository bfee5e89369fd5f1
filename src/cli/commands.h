// Each subcommand registers its flags on the app and returns the action to run if chosen.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace lighten::cli {

using Action = std::function<int()>;  // returns the process exit code

struct Command {
  CLI::App* app;  // the subcommand, owned by the parent app
  Action run;
};

enum ExitCode : int { kExitOk = 0, kExitFailures = 1, kExitUsage = 2 };

// Why an output file could not be written at `path`, found before the work rather than after
// hours of it; empty when it can be (outputs are written at the end). `made_dir` is a folder
// the run makes first (a mirror), which need not exist yet.
std::string unwritable_reason(const std::string& path, const std::string& made_dir = {});

// Whether two paths name one file: spelled alike once made absolute ("a.csv", "./a.csv"), or
// the same file where both exist.
bool same_path(const std::string& a, const std::string& b);

Command add_optimize_command(CLI::App& app);
Command add_info_command(CLI::App& app);
Command add_journal_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_probe_command(CLI::App& app);
Command add_report_command(CLI::App& app);

}  // namespace lighten::cli
