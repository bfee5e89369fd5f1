// The Store seam: every file access of the batch goes through it, so that object storage or
// throttled reads (for the probe) can stand in for local files later.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lighten {
class FileBackedBuffer;
}

namespace lighten::batch {

struct FileStat {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint32_t mode = 0;  // st_mode
  uint64_t dev = 0;
  uint64_t ino = 0;
  uint64_t links = 1;  // st_nlink: names of this file
  bool is_regular() const;
  bool is_directory() const;
  bool is_symlink() const;
};

// The result of one operation: ok, or the operation, the path and errno, ready for a report.
struct IoStatus {
  int error = 0;                // errno; 0 = ok
  bool source_changed = false;  // the source moved under us: nothing was written
  std::string op;               // "write"
  std::string message;          // "write /a/b.jpg: No space left on device"
  // A write that succeeded without carrying everything over: "extended attributes not kept ..."
  std::string note;

  bool ok() const { return error == 0 && !source_changed; }
  static IoStatus fail(std::string_view op, const std::string& path, int err);
};

enum class EntryType : uint8_t { kFile, kDirectory, kSymlink, kOther };
struct DirEntry {
  std::string name;
  EntryType type = EntryType::kOther;
};

// Writes the whole content into an open file descriptor (used for streaming copies).
using FillFn = std::function<IoStatus(int fd)>;

class Store {
 public:
  virtual ~Store() = default;
  virtual IoStatus stat(const std::string& path, bool follow_links, FileStat& out) = 0;
  // Entries of one directory (without "." and ".."), in no particular order.
  virtual IoStatus list(const std::string& dir, std::vector<DirEntry>& out) = 0;
  // Reads the whole file; `st` is the state of the opened file, so size and mtime match bytes.
  virtual IoStatus read(const std::string& path, std::vector<uint8_t>& bytes, FileStat& st) = 0;
  // At most `max_bytes` from the start of the file (fewer when it is shorter).
  virtual IoStatus read_head(const std::string& path, size_t max_bytes,
                             std::vector<uint8_t>& bytes) = 0;
  // The same into a file-backed buffer: for inputs too large to hold in memory (long videos).
  virtual IoStatus read_into(const std::string& path, FileBackedBuffer& buffer, FileStat& st) = 0;
  // Writes `target` atomically: temp file beside it, data, metadata of `source` (mode, owner
  // when root, extended attributes, atime and mtime), fsync, rename, fsync of the directory.
  // With `expected`, the source must still have that size and mtime just before the rename.
  // Replacing `source` itself (in place), a user other than root leaves a file of another owner,
  // or of a group the user cannot give, as it is rather than make it the user's; elsewhere (a
  // mirror) the owner is the user's and the group is kept where the user may give it, and
  // extended attributes the destination's filesystem cannot hold are left out and named in
  // the status's note.
  virtual IoStatus write_atomic(const std::string& target, std::span<const uint8_t> bytes,
                                const std::string& source, const FileStat* expected) = 0;
  // Same as write_atomic, streaming the source's content instead of holding it in memory.
  virtual IoStatus copy_atomic(const std::string& target, const std::string& source,
                               const FileStat* expected) = 0;
  // Makes `target` a hard link to `source`, replacing what was there; copies across devices.
  virtual IoStatus link_or_copy(const std::string& target, const std::string& source) = 0;
  // The text of the symbolic link `path` (where it points, as written).
  virtual IoStatus read_link(const std::string& path, std::string& text) = 0;
  // Makes `target` a symbolic link holding `text`, replacing what was there (atomically).
  virtual IoStatus make_link(const std::string& target, const std::string& text) = 0;
  virtual IoStatus make_dirs(const std::string& dir) = 0;
  // Makes `root` and the folders below it that the file `relative` (a path inside it) needs.
  // Below `root` every one is a real folder: a symbolic link in the way (a mirror's copy of an
  // input's link, from an earlier run) is replaced by a folder, so that nothing is written
  // through it, outside `root`. With `source` (the input's path of what `relative` mirrors,
  // whose last components are those of `relative`), each folder made takes the permissions of
  // the input's folder it mirrors, with the owner's always (the files go in), and, for root, its
  // owner: a private folder stays private in the mirror.
  virtual IoStatus make_dirs_for(const std::string& root, const std::string& relative,
                                 const std::string& source = {}) = 0;
  // Gives the folder `folder`, just made, the permissions of the folder `like` (with the owner's
  // own) and, for root, its owner, as make_dirs_for gives the folders it makes.
  virtual void take_permissions_of(const std::string& folder, const std::string& like) = 0;
  virtual IoStatus remove(const std::string& path) = 0;
};

std::unique_ptr<Store> make_local_store();

// Makes `dir` (its parent must exist) as a folder only this user may write (0700), or checks the
// one already there: not a link, this user's, and writable by no one else. In a shared folder such
// as /tmp another user could have made it first, with a link in it to where the journal's writes
// would then go.
IoStatus make_private_dir(const std::string& dir);

// The temp file name write_atomic uses for `target`'s base name, before the random suffix.
std::string temp_prefix(std::string_view base_name);
// True for a name write_atomic would use for its temp files (strays of killed runs): the
// marker, then mkstemp's six letters and digits.
bool is_temp_name(std::string_view name);
// The base name a temp file was made for; empty when it was cut to fit.
std::string temp_target(std::string_view temp_name);
// What a temp name holds of the base name, whole or cut; empty for other names.
std::string temp_cut_target(std::string_view temp_name);

}  // namespace lighten::batch
