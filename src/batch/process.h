// One file through the batch: journal check, read, optimise, write, journal.
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include "batch/journal.h"
#include "batch/store.h"
#include "batch/walk.h"
#include "lighten/batch.h"
#include "lighten/lighten.h"

namespace lighten::batch {

// The first write of a mirror that found its disk (or the user's quota) full: every later write
// would fail the same way, so the run starts no file after it. (In place, a later file may fit
// where this one did not, and each file replaced frees space: a run there goes on.)
class DestinationFull {
 public:
  // Takes a failed write's status; only ENOSPC and EDQUOT in making files and folders and in
  // writing their data count (ext4 also says ENOSPC for an extended attribute too large for
  // its inode, whatever the free space).
  void note(const IoStatus& status);
  bool hit() const { return hit_.load(); }
  std::string message() const;  // the first such failure, "" before one

 private:
  std::atomic<bool> hit_{false};
  mutable std::mutex mutex_;
  std::string message_;
};

struct RunContext {
  const BatchOptions& options;
  Store& store;
  Journal* journal;  // null when the run keeps none (dry run, use_journal off)
  std::string run_id;
  std::string policy_fingerprint;
  DestinationFull* destination_full = nullptr;  // told of every failed write, when set
  MemoryGate* memory_gate = nullptr;            // told of the items inside files, when set
};

// Never throws for anything the file or the disk does: problems end as the result's reason.
FileResult process_file(const RunContext& context, const WalkEntry& entry);

// Whether the journal holds a final result for this file as it is now under this run's policy,
// and in a mirror the mirror still holds the copy the row says was written (process_file then
// takes the result from there; the scheduler prices such a file at nothing).
bool journal_says_done(const RunContext& context, const WalkEntry& entry);

// The journal's key for a path: absolute and lexically normal, so any working directory agrees.
std::string journal_key(const std::string& path);

// OUT/relative, for mirror mode.
std::string mirror_path(const std::string& output_dir, const std::string& relative);

}  // namespace lighten::batch
