// Finding the files of a batch: directories recursively, in a stable order.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "batch/store.h"

namespace lighten::batch {

struct WalkOptions {
  bool follow_symlinks = false;
  bool clean_temps = true;  // remove stray temp files of killed runs (off for dry runs)
  std::vector<std::string> exclude_paths;  // files or directories never walked (journal, output)
  bool skip_journals = false;              // skip every journal a mirror holds (is_journal_name)
  // Symbolic links not followed go to WalkResult::links (a mirror recreates them) instead of
  // being reported as skipped.
  bool collect_links = false;
  // Also remove symbolic links with temp names (make_link's strays): only in a mirror's output,
  // where lighten alone writes; an input tree's links are its owner's.
  bool clean_temp_links = false;
  // Take a temp name for one only beside the file it was made for, as an in-place run's always
  // is (its original stays until the rename): in an input tree, a file of the user's that merely
  // looks like one is walked as any other. A mirror's output holds temp files of files not yet
  // written, and only lighten writes there: off.
  bool temps_beside_their_file = false;
  // Whether this run owns the file a stray temp file was written for (its relative path; "" where
  // the temp name, cut for a long file name, no longer tells it): parallel shards over one tree
  // must not remove each other's live temp files.
  std::function<bool(const std::string&)> owns_temp;
};

struct WalkEntry {
  std::string path;      // as found: input joined with the names below it
  std::string relative;  // path inside the mirror (see walk())
  FileStat stat;         // of the file itself, also where `path` names a link to it
  // `path` leads through a symbolic link (the file's own name, or a folder above it): the file
  // may be reached under other names too.
  bool through_link = false;
};

struct WalkProblem {
  std::string path;
  std::string message;
  bool io_error = false;  // false: skipped on purpose (symlink not followed, special file)
};

// A symbolic link found below an input and not followed.
struct WalkLink {
  std::string path;      // as found
  std::string relative;  // path inside the mirror
  std::string text;      // where it points, as written in the link
};

struct WalkResult {
  std::vector<WalkEntry> files;
  std::vector<WalkLink> links;  // with WalkOptions::collect_links
  std::vector<WalkProblem> problems;
  uint64_t total_bytes = 0;
  uint64_t cleaned_temps = 0;
};

// Whether `name` is a journal lighten keeps in a mirror, or one of SQLite's files beside it:
// .lighten-journal[.shard-K-of-N].sqlite[-wal|-shm|-journal].
bool is_journal_name(std::string_view name);

// The name an input is mirrored under when there are several: its last component ("dir/" gives
// "dir", "." and ".." give "input").
std::string input_name(const std::string& path);

// `path` spelled out from the root and lexically normalised ("a/./b" and "a/b" alike); as given,
// normalised, where the working directory cannot be read. Links are not resolved.
std::string absolute_normal_path(const std::string& path);

// Walks `inputs` (files and directories). Entries come in input order, and inside a directory
// depth-first in byte order of names. `relative` is the path below the input directory when
// there is one input directory, and starts with each input's base name otherwise.
WalkResult walk(Store& store, const std::vector<std::string>& inputs, const WalkOptions& options);

}  // namespace lighten::batch
