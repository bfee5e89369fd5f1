// `lighten compare A B [--json]`: perceptual scores of B against A.
#include <fmt/format.h>

#include <cmath>
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
  double butteraugli_max_mp = kButteraugliMaxPixels / 1e6;
};

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int run_compare(const CompareArgs& args) {
  ImageScores s;
  try {
    s = compare_images(read_all(args.reference), read_all(args.distorted), !args.no_butteraugli,
                       uint64_t(args.butteraugli_max_mp * 1e6));
  } catch (const ImageDecodeError& e) {
    fmt::print(stderr, "lighten compare: {}: {}\n",
               e.is_distorted ? args.distorted : args.reference, e.what());
    return kExitFailures;
  } catch (const std::exception& e) {
    fmt::print(stderr, "lighten compare: {}\n", e.what());
    return kExitFailures;
  }
  // JSON has no infinity: a score the metric could not measure (an input it read as NaN or an
  // infinite butteraugli distance) is null there, and "inf" in the text.
  auto number = [](const std::optional<double>& v, int digits) {
    return v && std::isfinite(*v) ? fmt::format("{:.{}f}", *v, digits) : std::string("null");
  };
  if (args.json) {
    fmt::print(
        "{{\"ssimulacra2\": {}, \"ssimulacra2_worst_tile\": {}, \"floor_score\": {}, "
        "\"butteraugli\": {}}}\n",
        number(s.ssimulacra2, 4), number(s.ssimulacra2_worst_tile, 4), number(s.floor_score, 4),
        number(s.butteraugli, 4));
    if (!args.no_butteraugli && !s.butteraugli_note.empty())
      fmt::print(stderr, "lighten compare: butteraugli {}\n", s.butteraugli_note);
  } else {
    if (s.ssimulacra2)
      fmt::print("ssimulacra2: {:.2f} (worst tile {:.2f})\n", *s.ssimulacra2,
                 *s.ssimulacra2_worst_tile);
    else
      fmt::print("ssimulacra2: n/a (under 8 px on a side, the metric has no scale to measure)\n");
    if (!s.ssimulacra2 || s.floor_score != *s.ssimulacra2)
      fmt::print("floor score: {:.2f} (under 256 px a side, also scored mirrored out to 256 px)\n",
                 s.floor_score);
    fmt::print("butteraugli: {}\n", s.butteraugli ? fmt::format("{:.4f}", *s.butteraugli)
                                    : args.no_butteraugli
                                        ? std::string("not computed (--no-butteraugli)")
                                        : s.butteraugli_note);
  }
  return kExitOk;
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Print SSIMULACRA2 (and butteraugli when built in) of DISTORTED against REFERENCE, each "
      "read through the ICC profile it carries, as stored (EXIF orientation is not applied)");
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
  cmd->add_option("--butteraugli-max-mp", args->butteraugli_max_mp,
                  "Compute butteraugli only up to this many megapixels (libjxl holds about 240 "
                  "bytes per pixel and aborts when memory runs out)")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 1e6));
  return {cmd, [args] { return run_compare(*args); }};
}

}  // namespace lighten::cli
