// `lighten info FILE...`: what a file is and what lighten would do with it.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

#include "commands.h"
#include "lighten/lighten.h"
#include "lighten/report.h"
#include "policy_flags.h"

namespace lighten::cli {
namespace {

struct InfoArgs {
  std::vector<std::string> files;
  PolicyFlags policy;
};

bool is_damage_or_failure(Reason reason) {
  return reason == Reason::kCorrupt || reason == Reason::kTruncated ||
         reason == Reason::kVerifyFailed || reason == Reason::kInternalError;
}

int run_info(InfoArgs& args) {
  Policy policy;
  try {
    policy = args.policy.build();
  } catch (const OptionError& e) {
    fmt::print(stderr, "lighten info: {}\n", e.what());
    return kExitUsage;
  }
  int status = kExitOk;
  for (const auto& path : args.files) {
    // Names are shown as optimize -v shows them: a newline or escape in one cannot forge a line.
    const std::string shown = printable_text(path);
    // One that cannot be read is said and counted; the others are still described. Pipes and
    // /dev/stdin are read as files are; devices (/dev/zero would never end) and folders are not.
    std::error_code ec;
    const auto type = std::filesystem::status(path, ec).type();
    using Type = std::filesystem::file_type;
    if (ec || (type != Type::regular && type != Type::fifo && type != Type::socket)) {
      fmt::print(stderr, "lighten info: {}: {}\n", shown,
                 ec                        ? ec.message()
                 : type == Type::directory ? "a directory"
                                           : "not a file or a pipe");
      status = kExitFailures;
      continue;
    }
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in),
                               std::istreambuf_iterator<char>()};
    if (!in.is_open() || (!in.good() && !in.eof())) {
      fmt::print(stderr, "lighten info: {}: cannot read the file\n", shown);
      status = kExitFailures;
      continue;
    }
    const FileInfo info = describe(bytes);
    fmt::print("{}\n  kind: {}\n", shown, kind_name(info.kind));
    for (const auto& [name, value] : info.properties) fmt::print("  {}: {}\n", name, value);
    if (!info.problem.empty()) fmt::print("  problem: {}\n", info.problem);
    // As a run judges it: a name that claims another kind than the content is left alone.
    if (const std::string why = misnaming(path, info.kind); !why.empty()) {
      fmt::print("  lighten would: leave it alone (misnamed: {})\n", why);
      if (!info.problem.empty() && is_damage_or_failure(info.problem_reason))
        status = kExitFailures;
      continue;
    }
    const Outcome outcome = optimize(bytes, policy);
    if (outcome.replaced()) {
      const double saved =
          100.0 * (double(outcome.bytes_in) - double(outcome.bytes_out)) / double(outcome.bytes_in);
      fmt::print("  lighten would: write {} ({} -> {}, {:.1f}% smaller, {}verified)\n",
                 outcome.detail, format_bytes(outcome.bytes_in), format_bytes(outcome.bytes_out),
                 saved, outcome.quality.pixels_identical ? "pixel-identical, " : "");
    } else {
      fmt::print("  lighten would: leave it alone ({}: {})\n", reason_name(outcome.reason),
                 outcome.message);
    }
    for (const auto& w : outcome.warnings) fmt::print("  warning: {}\n", w);
    // A damaged file, or one lighten fails on, makes the run fail: scripts check files this way.
    if (is_damage_or_failure(outcome.reason) ||
        (!info.problem.empty() && is_damage_or_failure(info.problem_reason)))
      status = kExitFailures;
  }
  return status;
}

}  // namespace

Command add_info_command(CLI::App& app) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd =
      app.add_subcommand("info",
                         "Say what each file is and what lighten would do with it; exits 1 when "
                         "a file cannot be read, is damaged (corrupt, truncated) or fails");
  cmd->add_option("files", args->files, "Files to look at")->required();
  args->policy.add_to(*cmd);
  return {cmd, [args] { return run_info(*args); }};
}

}  // namespace lighten::cli
