// `lighten probe PATH [--compare OPTIMISED]`: where a loader's data waits, before and after.
#include <fmt/format.h>

#include <cmath>

#include <iostream>
#include <map>
#include <memory>

#include "commands.h"
#include "lighten/options.h"
#include "lighten/probe.h"

namespace lighten::cli {
namespace {

struct ProbeArgs {
  ProbeOptions options;
  std::string bandwidth;
  std::string decoder = "pil";
  std::string json;
  bool quiet = false;
};

int run_probe_command(ProbeArgs& args) {
  ProbeOptions& options = args.options;
  // Ranges let NaN through (every comparison with it is false): the model then printed nan.
  for (const auto& [flag, value] :
       {std::pair{"--step-ms", options.step_ms}, std::pair{"--latency", options.latency_ms}})
    if (!std::isfinite(value)) {
      fmt::print(stderr, "lighten probe: {} {}: not a number of milliseconds\n", flag, value);
      return kExitUsage;
    }
  try {
    if (!args.bandwidth.empty()) options.bandwidth = parse_bandwidth(args.bandwidth);
    options.decoder = args.decoder == "direct" ? DecoderStyle::kDirect : DecoderStyle::kPil;
  } catch (const OptionError& e) {
    fmt::print(stderr, "lighten probe: {}\n", e.what());
    return kExitUsage;
  }
  if (!options.compare_path.empty() && same_path(options.compare_path, options.path)) {
    fmt::print(stderr,
               "lighten probe: --compare {} is the data set itself; give its optimised copy (the "
               "mirror `lighten optimize {} -o OUT` wrote)\n",
               options.compare_path, options.path);
    return kExitUsage;
  }
  // "-": the JSON on standard output, and the table on standard error, so that neither is mixed
  // into the other.
  const bool json_out = args.json == "-";
  if (!args.json.empty() && !json_out)
    if (const std::string why = unwritable_reason(args.json); !why.empty()) {
      fmt::print(stderr, "lighten probe: --json {}: {}\n", args.json, why);
      return kExitUsage;
    }
  ProbeProgress progress;
  if (!args.quiet) progress = [](std::string_view line) { fmt::print(stderr, "  {}\n", line); };
  ProbeReport report;
  try {
    report = run_probe(options, progress);
  } catch (const OptionError& e) {
    fmt::print(stderr, "lighten probe: {}\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "lighten probe: {}\n", e.what());
    return kExitFailures;
  }
  print_probe_report(json_out ? std::cerr : std::cout, report);
  if (!args.json.empty()) {
    try {
      write_probe_json(json_out ? "/dev/stdout" : args.json, report);
    } catch (const std::exception& e) {
      fmt::print(stderr, "lighten probe: {}\n", e.what());
      return kExitFailures;
    }
  }
  return kExitOk;
}

}  // namespace

Command add_probe_command(CLI::App& app) {
  auto args = std::make_shared<ProbeArgs>();
  ProbeOptions& o = args->options;
  CLI::App* cmd = app.add_subcommand(
      "probe",
      "Measure where a data loader waits on these files (open, read, decode, batching), "
      "optionally beside their optimised copy; reads only, writes nothing but --json");
  cmd->add_option("path", o.path, "Directory (or file) of the data set")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("--compare", o.compare_path,
                  "The optimised copy of PATH (as `lighten optimize PATH -o OUT` wrote it); "
                  "files are matched by relative path")
      ->check(CLI::ExistingPath);
  cmd->add_option("--sample", o.sample, "Files to time (the inventory counts all)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 10'000'000u));
  cmd->add_option("--workers", o.workers, "Loader workers and parallel readers")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1024u));
  cmd->add_option("--batch", o.batch, "Samples per batch")
      ->capture_default_str()
      ->check(CLI::Range(1u, 65536u));
  cmd->add_option("--step-ms", o.step_ms, "Consumer (GPU step) time per batch, in ms")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3.6e6));
  cmd->add_option("--bandwidth", args->bandwidth,
                  "Emulate a link shared by all reads: 1gbit, 200mbit, 50MB/s (default: none)");
  cmd->add_option("--latency", o.latency_ms, "Emulated delay per open, in ms (e.g. 2)")
      ->check(CLI::Range(0.0, 3.6e6));
  cmd->add_flag("--cold", o.cold,
                "Evict each file from the page cache before reading it (posix_fadvise); says "
                "when the file system does not allow it");
  // A plain string checked against the names: CLI11 cannot print an enum's values in the help.
  cmd->add_option("--decoder", args->decoder,
                  "How the modelled loader decodes: pil (Pillow, four bytes a colour pixel; "
                  "most PyTorch datasets) or direct (packed RGB, as torchvision.io and OpenCV)")
      ->transform(CLI::IsMember({"pil", "direct"}, CLI::ignore_case))
      ->capture_default_str();
  cmd->add_option("--passes", o.passes, "Passes over the sample the loader model simulates")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000u));
  cmd->add_option("--max-pixels", o.max_pixels,
                  "Images with more pixels count as failed decodes and are not decoded, as "
                  "Pillow refuses them (DecompressionBombError)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t(1), uint64_t(1) << 40));
  cmd->add_flag("--follow-symlinks", o.follow_symlinks, "Follow symbolic links while walking");
  cmd->add_option(
      "--json", args->json,
      "Also write the figures as JSON to this file (- for standard output; the table then goes to "
      "standard error)");
  cmd->add_flag("-q,--quiet", args->quiet, "No progress lines");
  return {cmd, [args] { return run_probe_command(*args); }};
}

}  // namespace lighten::cli
