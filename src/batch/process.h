// One file through the batch: journal check, read, optimise, write, journal.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <set>
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

// In a mirror, a name of an input file with hard links beyond the first: its first name's
// output and result, which it takes as a hard link of its own, as the input holds them.
struct FirstName {
  std::string out_path;
  FileResult result;
};

// Never throws for anything the file or the disk does: problems end as the result's reason.
// With `first`, the file is linked to that output (and processed as any other where it cannot
// be: the first name's output is missing, or the link fails and a copy does too).
FileResult process_file(const RunContext& context, const WalkEntry& entry,
                        const FirstName* first = nullptr);

// The names of hard-linked input files beyond their first, for a mirror: each is taken after
// every first name is done, with its first name's result.
class HardLinkedNames {
 public:
  // `first` (an index into the run's files) is the first name of the file `later` names.
  void add(size_t later, size_t first);
  // The first name of the file at `index`, where `index` names a later one.
  std::optional<size_t> first_of(size_t index) const;
  // The first name at `index` is done (whether or not it has later ones); from workers.
  void finish(size_t index, const FileResult& result);
  // The result of the first name at `first`, once finished (an empty one if it never was).
  FileResult result_of(size_t first) const;

 private:
  std::map<size_t, size_t> first_of_;  // later -> first, fixed before the run starts
  std::set<size_t> firsts_;
  mutable std::mutex mutex_;
  std::map<size_t, FileResult> results_;  // of first names with later ones, once done
};
// Whether the journal holds a final result for this file as it is now under this run's policy,
// and in a mirror the mirror still holds the copy the row says was written (process_file then
// takes the result from there; the scheduler prices such a file at nothing).
bool journal_says_done(const RunContext& context, const WalkEntry& entry);

// The journal's key for a path: absolute and lexically normal, so any working directory agrees.
std::string journal_key(const std::string& path);

// OUT/relative, for mirror mode.
std::string mirror_path(const std::string& output_dir, const std::string& relative);

}  // namespace lighten::batch
