// `lighten compare A B [--json]`: perceptual scores of B against A.
#include <fmt/format.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "lighten/compare.h"

namespace lighten::cli {
namespace {

struct CompareArgs {
  std::string reference, distorted;
  bool json = false;
  bool no_butteraugli = false;
};

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int run_compare(const CompareArgs& args) {
  ImageScores s;
  try {
    s = compare_images(read_all(args.reference), read_all(args.distorted), !args.no_butteraugli);
  } catch (const std::exception& e) {
    fmt::print(stderr, "lighten compare: {}\n", e.what());
    return kExitFailures;
  }
  const std::string butteraugli = s.butteraugli ? fmt::format("{:.4f}", *s.butteraugli) : "null";
  if (args.json) {
    fmt::print(
        "{{\"ssimulacra2\": {:.4f}, \"ssimulacra2_worst_tile\": {:.4f}, \"floor_score\": {:.4f}, "
        "\"butteraugli\": {}}}\n",
        s.ssimulacra2, s.ssimulacra2_worst_tile, s.floor_score, butteraugli);
  } else {
    fmt::print("ssimulacra2: {:.2f} (worst tile {:.2f})\n", s.ssimulacra2,
               s.ssimulacra2_worst_tile);
    if (s.floor_score != s.ssimulacra2)
      fmt::print("floor score: {:.2f} (under 256 px a side, also scored mirrored out to 256 px)\n",
                 s.floor_score);
    fmt::print("butteraugli: {}\n",
               s.butteraugli ? butteraugli : std::string("not computed (no libjxl, or skipped)"));
  }
  return kExitOk;
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Print SSIMULACRA2 (and butteraugli when built in) of DISTORTED against REFERENCE");
  cmd->add_option("reference", args->reference, "The original image (JPEG or PNG)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("distorted", args->distorted, "The image to score, of the same size")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_flag(
      "--json", args->json,
      "Print {\"ssimulacra2\": ..., \"ssimulacra2_worst_tile\": ..., \"floor_score\": ..., "
      "\"butteraugli\": ...}");
  cmd->add_flag("--no-butteraugli", args->no_butteraugli,
                "Skip butteraugli (it takes seconds and gigabytes on large photos)");
  return {cmd, [args] { return run_compare(*args); }};
}

}  // namespace lighten::cli
