// lighten: makes image, video and document files smaller without changing their format.
#include <malloc.h>

#include <csignal>
#include <iostream>

#include "commands.h"
#include "lighten/lighten.h"

int main(int argc, char** argv) {
  // A write over `ulimit -f` must fail with EFBIG (reported per file), not kill the batch.
  std::signal(SIGXFSZ, SIG_IGN);
  // Every file brings buffers of the same few sizes (coefficients, pixels, outputs). glibc would
  // give large freed blocks back to the kernel and take page faults to get them again for the
  // next file (a tenth of lossless JPEG time); keeping them costs only the peak it had anyway.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);

  CLI::App app{
      "lighten: makes image, video and document files smaller without changing their "
      "format, extension or resolution"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(lighten::version()));
  const std::vector<lighten::cli::Command> commands{
      lighten::cli::add_optimize_command(app), lighten::cli::add_info_command(app),
      lighten::cli::add_journal_command(app),  lighten::cli::add_compare_command(app),
      lighten::cli::add_probe_command(app),    lighten::cli::add_report_command(app),
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? lighten::cli::kExitOk : lighten::cli::kExitUsage;
  }
  for (const auto& command : commands)
    if (command.app->parsed()) return command.run();
  return lighten::cli::kExitUsage;
}
