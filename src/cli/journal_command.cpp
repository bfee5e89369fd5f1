// `lighten journal merge OUT IN...`: joins the journals of shards run on several machines.
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "commands.h"
#include "lighten/batch.h"

namespace lighten::cli {
namespace {

struct JournalArgs {
  std::string output;
  std::vector<std::string> inputs;
};

}  // namespace

Command add_journal_command(CLI::App& app) {
  auto args = std::make_shared<JournalArgs>();
  CLI::App* cmd = app.add_subcommand("journal", "Work with run journals");
  cmd->require_subcommand(1);
  CLI::App* merge =
      cmd->add_subcommand("merge",
                          "Merge shard journals into one; the newest row for a path wins, and "
                          "what the walks met that is no file is taken from the journals named");
  merge->add_option("output", args->output, "Journal to create or extend")->required();
  merge->add_option("inputs", args->inputs, "Journals to merge")
      ->required()
      ->check(CLI::ExistingFile);
  return {cmd, [args] {
            // The output extended with itself would wait on its own lock ("database is locked").
            for (const std::string& input : args->inputs)
              if (std::error_code ec; std::filesystem::equivalent(input, args->output, ec)) {
                fmt::print(stderr,
                           "lighten journal merge: {} is both the output and an input; name "
                           "each journal once\n",
                           input);
                return int(kExitUsage);
              }
            try {
              const uint64_t rows = merge_journals(args->inputs, args->output);
              fmt::print("{}: {} files after merging {} journals\n", args->output, rows,
                         args->inputs.size());
              return int(kExitOk);
            } catch (const std::exception& e) {
              fmt::print(stderr, "lighten journal merge: {}\n", e.what());
              return int(kExitFailures);
            }
          }};
}

}  // namespace lighten::cli
