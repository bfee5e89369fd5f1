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
  // Those thresholds hold for the main arena only. Each worker thread would get an arena of its
  // own, built of 64 MB heaps that glibc unmaps as soon as they empty, so every candidate's
  // coefficient arrays (libjpeg's, zeroed on allocation) faulted their pages in again: with one
  // arena, perceptual JPEG took 11-15 % less CPU on the 16 camera photos (25 % at --effort 1).
  // The workers' allocations are few and large, so sharing one arena costs no waiting to speak of
  // (8 workers on 2 cores ran faster too). M_TOP_PAD of 64 MB instead keeps the workers' own heaps
  // mapped: the same CPU, but a quarter more peak memory on a lossless run of the whole corpus.
  mallopt(M_ARENA_MAX, 1);

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
