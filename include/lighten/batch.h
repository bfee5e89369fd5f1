// Optimising trees of files: walk, schedule, write atomically, journal, resume.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lighten/outcome.h"
#include "lighten/policy.h"

namespace lighten {

struct Shard {
  uint32_t index = 0;  // 0-based
  uint32_t count = 1;
};
// Parses "K/N" (1 <= K <= N); throws OptionError.
Shard parse_shard(std::string_view text);

enum class UnchangedFiles : uint8_t { kCopy, kHardlink };

struct BatchOptions {
  std::vector<std::string> inputs;  // files and directories
  std::string output_dir;           // mirror mode; empty with in_place
  bool in_place = false;
  bool dry_run = false;
  unsigned jobs = 0;           // 0 = all cores
  uint64_t memory_budget = 0;  // bytes; 0 = half of physical memory, at most 8 GiB
  std::string journal_path;    // empty = default location (see default_journal_path)
  bool use_journal = true;
  bool follow_symlinks = false;
  UnchangedFiles unchanged = UnchangedFiles::kCopy;
  Shard shard;
  Policy policy;
  // Set (by the caller's SIGINT handler, say): no file starts after it; those running finish
  // and are journaled, so that the next run resumes after them.
  const std::atomic<bool>* stop = nullptr;
};

// What run_batch throws when the options cannot make a run (an output directory and in place,
// a mirror whose inputs would overlap or land on one path): the caller's mistake, no file's.
struct BatchOptionError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Whether a mirror run of `options` writes one of its files at `path`: it lies in the output
// directory where the copy of an existing input goes (a report must not take its place).
bool mirror_writes_at(const BatchOptions& options, const std::string& path);

// Where the journal lives when none is given: OUT/.lighten-journal.sqlite in mirror mode,
// $XDG_STATE_HOME/lighten/ (or ~/.local/state/lighten/) named after the inputs otherwise.
std::string default_journal_path(const BatchOptions& options);

// One file's result as the batch saw it.
struct FileResult {
  std::string path;  // as found by the walk
  Kind kind = Kind::kUnknown;
  Action action = Action::kKept;
  Reason reason = Reason::kNoGain;
  std::string message;
  std::string detail;
  // What the optimiser warns of (metadata `strip` dropped a gain map's XMP, say); the journal
  // keeps them at the end of the detail.
  std::vector<std::string> warnings;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  double ms = 0;
  bool from_journal = false;  // done by an earlier run, not redone
};

struct KindTotals {
  uint64_t files = 0;
  uint64_t replaced = 0;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  std::map<Reason, uint64_t> kept;  // files left alone, by reason
};

struct BatchSummary {
  std::map<Kind, KindTotals> by_kind;
  KindTotals total;
  uint64_t io_errors = 0;    // files whose read or write failed
  uint64_t failures = 0;     // outputs that failed verification, internal errors
  uint64_t not_started = 0;  // files left for a later run by `stop` or a full disk
  // Why the run started no more files, where it was not `stop`: the write that found the
  // mirror's disk or quota full ("" otherwise).
  std::string stopped_because;
  // The journal's last rows could not be written (a full disk, say): the files they name are
  // looked at again by the next run ("" when all were written).
  std::string journal_error;
  uint64_t from_journal = 0;       // skipped because an earlier run finished them
  uint64_t cleaned_temps = 0;      // stray temporary files from killed runs removed
  uint64_t links = 0;              // symbolic links the mirror holds as links (to make, dry)
  uint64_t links_not_started = 0;  // links not tried after a full disk or `stop`
  // Worker threads the system refused to start (a container's task limit): the others ran.
  uint64_t workers_refused = 0;
  double seconds = 0;
  std::string journal_path;
  std::string run_id;
};

// Receives progress from the batch; called from worker threads, serialised by the batch.
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  virtual void on_discovered(uint64_t files, uint64_t bytes) { (void)files, (void)bytes; }
  virtual void on_file(const FileResult& result) { (void)result; }
  virtual void on_finish(const BatchSummary& summary) { (void)summary; }
};

// Runs the batch. Throws std::runtime_error only for problems with the run itself (unwritable
// output directory, unusable journal); per-file problems end up in the summary.
BatchSummary run_batch(const BatchOptions& options, ProgressSink& progress);

// Rows of one run (or all runs when run_id is empty) read back from a journal, in path order.
std::vector<FileResult> read_journal(const std::string& journal_path, const std::string& run_id);

// Merges shard journals into `output` (created if absent); the newest row for a path wins.
// Returns the number of rows in the merged journal.
uint64_t merge_journals(const std::vector<std::string>& inputs, const std::string& output);

}  // namespace lighten
