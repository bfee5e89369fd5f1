#include "batch/store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "core/errors.h"
#include "core/file_backed_buffer.h"

namespace lighten::batch {
namespace {

constexpr std::string_view kTempMarker = ".lighten-tmp-";
constexpr size_t kTempSuffixLength = 6;     // mkstemp's XXXXXX
constexpr size_t kMaxBaseInTempName = 200;  // keeps temp names under NAME_MAX
constexpr size_t kCopyChunk = 1 << 20;

FileStat from_stat(const struct stat& s) {
  FileStat st;
  st.size = uint64_t(s.st_size);
  st.mtime_ns = int64_t(s.st_mtim.tv_sec) * 1'000'000'000 + s.st_mtim.tv_nsec;
  st.mode = s.st_mode;
  st.dev = s.st_dev;
  st.ino = s.st_ino;
  st.links = uint64_t(s.st_nlink);
  return st;
}

std::pair<std::string, std::string> split_path(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  if (slash == 0) return {"/", path.substr(1)};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

// Closes a descriptor on every path out of a function.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

IoStatus write_all(int fd, const uint8_t* data, size_t size, const std::string& path) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoStatus::fail("write", path, errno);
    }
    data += n;
    size -= size_t(n);
  }
  return {};
}

// A failed write whose cause is no system call's.
IoStatus refused(std::string_view op, const std::string& path, int err, const std::string& why) {
  IoStatus s = IoStatus::fail(op, path, err);
  s.message = std::string(op) + " " + path + ": " + why;
  return s;
}

// Adds to a mirror file's `note` what it could not keep.
void add_note(std::string& note, const std::string& what) {
  note += note.empty() ? "" : "; ";
  note += what;
}

// Copies mode, owner, extended attributes and timestamps of `source` to `fd`, the temp file
// that is to become `target` (see write_atomic); messages name `target`.
// `in_place`: the temp file is to replace `source` itself. A mirror on a filesystem that refuses
// an owner, a mode or an extended attribute (NFS with root squashing, exFAT, SMB) keeps the file
// without it, told in `note`: failing would leave the file out of the mirror on every run.
IoStatus copy_metadata(int fd, const std::string& source, const std::string& target, bool in_place,
                       std::string& note) {
  struct stat s;
  if (::stat(source.c_str(), &s) != 0) return IoStatus::fail("stat", source, errno);
  const auto refused_by_destination = [&](int err) {
    return !in_place && (err == EPERM || err == EINVAL || err == ENOTSUP || err == EOPNOTSUPP);
  };
  // chown before chmod: chown clears set-id bits.
  if (::geteuid() == 0) {
    if (::fchown(fd, s.st_uid, s.st_gid) != 0) {
      if (!refused_by_destination(errno)) return IoStatus::fail("chown", target, errno);
      add_note(note, "owner not kept (the destination refuses it: " +
                         std::generic_category().message(errno) + ")");
    }
  } else {
    if (in_place && s.st_uid != ::geteuid())
      return refused("keep the owner of", source, EPERM,
                     "it belongs to uid " + std::to_string(s.st_uid) +
                         "; replacing it would make it this user's (uid " +
                         std::to_string(::geteuid()) + "); run as its owner or as root");
    // A user may give a file any group the user is in. The temp file's group is the folder's
    // in a set-group-ID folder, the user's otherwise: compared with what it got.
    struct stat made;
    if (::fstat(fd, &made) != 0) return IoStatus::fail("stat", target, errno);
    if (s.st_gid != made.st_gid && ::fchown(fd, uid_t(-1), s.st_gid) != 0 && in_place)
      return refused("keep the group of", source, errno,
                     "its group is gid " + std::to_string(s.st_gid) +
                         ", which this user cannot give a file; replacing it would change it");
  }
  // A new file takes its folder's default ACL; the file it replaces may have had none, and would
  // then open to more users than before.
  constexpr const char* kAccessAcl = "system.posix_acl_access";
  if (in_place && ::getxattr(source.c_str(), kAccessAcl, nullptr, 0) < 0 && errno == ENODATA &&
      ::fremovexattr(fd, kAccessAcl) != 0 && errno != ENODATA && errno != ENOTSUP &&
      errno != EOPNOTSUPP)
    return IoStatus::fail("remove the folder's default ACL from", target, errno);
  if (::fchmod(fd, s.st_mode & 07777) != 0) {
    if (!refused_by_destination(errno)) return IoStatus::fail("chmod", target, errno);
    add_note(note, "mode not kept (the destination refuses it: " +
                       std::generic_category().message(errno) + ")");
  }

  ssize_t names_size = ::listxattr(source.c_str(), nullptr, 0);
  if (names_size < 0 && errno != ENOTSUP) return IoStatus::fail("listxattr", source, errno);
  if (names_size > 0) {
    std::vector<char> names(size_t(names_size) + 1, '\0');
    names_size = ::listxattr(source.c_str(), names.data(), names.size());
    if (names_size < 0) return IoStatus::fail("listxattr", source, errno);
    std::vector<char> value;
    std::string unkept_attributes;
    for (ssize_t at = 0; at < names_size; at += ssize_t(std::strlen(&names[at])) + 1) {
      const char* name = &names[at];
      ssize_t n = ::getxattr(source.c_str(), name, nullptr, 0);
      if (n < 0) return IoStatus::fail(std::string("getxattr ") + name, source, errno);
      value.resize(size_t(n) + 1);
      n = ::getxattr(source.c_str(), name, value.data(), value.size());
      if (n < 0) return IoStatus::fail(std::string("getxattr ") + name, source, errno);
      if (::fsetxattr(fd, name, value.data(), size_t(n), 0) != 0) {
        if (!in_place && (errno == ENOTSUP || errno == EOPNOTSUPP)) {
          unkept_attributes += unkept_attributes.empty() ? "" : ", ";
          unkept_attributes += name;
          continue;
        }
        return IoStatus::fail(std::string("setxattr ") + name, target, errno);
      }
    }
    if (!unkept_attributes.empty())
      add_note(note,
               "extended attributes not kept (the destination's filesystem does not support "
               "them): " +
                   unkept_attributes);
  }
  // Timestamps last: nothing may touch the file after them.
  struct timespec times[2] = {s.st_atim, s.st_mtim};
  if (::futimens(fd, times) != 0) return IoStatus::fail("utimensat", target, errno);
  return {};
}

// Gives the mirror's new folder `folder` the permissions (and, for root, the owner) of the input
// folder `levels` above `source`. Failing that it stays as made: nothing is lost.
void take_folder_permissions(const std::string& folder, const std::string& source, size_t levels) {
  std::filesystem::path input(source);
  for (size_t i = 0; i < levels; ++i) input = input.parent_path();
  struct stat s;
  if (input.empty() || ::stat(input.c_str(), &s) != 0 || !S_ISDIR(s.st_mode)) return;
  if (::geteuid() == 0) (void)::chown(folder.c_str(), s.st_uid, s.st_gid);
  (void)::chmod(folder.c_str(), (s.st_mode & 07777) | S_IRWXU);
}

// Whether two paths name one file (the same inode on the same device).
bool same_file(const std::string& a, const std::string& b) {
  struct stat x, y;
  return ::stat(a.c_str(), &x) == 0 && ::stat(b.c_str(), &y) == 0 && x.st_dev == y.st_dev &&
         x.st_ino == y.st_ino;
}

IoStatus fsync_dir(const std::string& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return IoStatus::fail("open directory", dir, errno);
  if (::fsync(fd.get()) != 0) return IoStatus::fail("fsync directory", dir, errno);
  return {};
}

// After the rename the new file is in place whatever happens next: a failed directory fsync
// can at worst lose the rename on power loss, which leaves the original, so it is no error.
void sync_dir_after_rename(const std::string& dir) { (void)fsync_dir(dir); }

IoStatus make_temp(const std::string& target, std::string& temp, Fd& fd) {
  auto [dir, base] = split_path(target);
  temp = (dir == "/" ? "" : dir) + "/" + temp_prefix(base) + "XXXXXX";
  int raw = ::mkostemp(temp.data(), O_CLOEXEC);
  if (raw < 0) return IoStatus::fail("create temporary file for", target, errno);
  fd.reset(raw);
  return {};
}

// Opens `path` for reading. O_NOATIME: reading must not change the atime that the output is
// to keep (it needs the file's owner or CAP_FOWNER; without, the atime may change).
int open_for_reading(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOATIME);
  if (fd < 0 && errno == EPERM) return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  return fd;
}

// Reads until `size` bytes or the end of the file, whichever comes first; `got` says how many.
IoStatus read_up_to(int fd, uint8_t* out, size_t size, const std::string& path, size_t& got) {
  got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, out + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoStatus::fail("read", path, errno);
    if (n == 0) break;
    got += size_t(n);
  }
  return {};
}

// Opens `path` for reading, fills `st` from the opened file and hands the descriptor and size
// to `fill`.
template <typename Fill>
IoStatus read_whole(const std::string& path, FileStat& st, Fill&& fill) {
  Fd fd(open_for_reading(path));
  if (fd.get() < 0) return IoStatus::fail("open", path, errno);
  struct stat s;
  if (::fstat(fd.get(), &s) != 0) return IoStatus::fail("stat", path, errno);
  st = from_stat(s);
  return fill(fd.get(), st.size);
}

constexpr size_t kReadChunk = 1 << 20;

class LocalStore final : public Store {
 public:
  IoStatus stat(const std::string& path, bool follow_links, FileStat& out) override {
    struct stat s;
    int rc = follow_links ? ::stat(path.c_str(), &s) : ::lstat(path.c_str(), &s);
    if (rc != 0) return IoStatus::fail("stat", path, errno);
    out = from_stat(s);
    return {};
  }

  IoStatus list(const std::string& dir, std::vector<DirEntry>& out) override {
    out.clear();
    DIR* d = ::opendir(dir.c_str());
    if (!d) return IoStatus::fail("open directory", dir, errno);
    errno = 0;
    while (struct dirent* e = ::readdir(d)) {
      std::string_view name = e->d_name;
      if (name == "." || name == "..") continue;
      DirEntry entry{std::string(name), EntryType::kOther};
      unsigned char type = e->d_type;
      if (type == DT_UNKNOWN) {  // some file systems do not fill d_type
        struct stat s;
        std::string full = dir + "/" + entry.name;
        if (::lstat(full.c_str(), &s) == 0) {
          type = S_ISREG(s.st_mode)   ? DT_REG
                 : S_ISDIR(s.st_mode) ? DT_DIR
                 : S_ISLNK(s.st_mode) ? DT_LNK
                                      : DT_UNKNOWN;
        }
      }
      entry.type = type == DT_REG   ? EntryType::kFile
                   : type == DT_DIR ? EntryType::kDirectory
                   : type == DT_LNK ? EntryType::kSymlink
                                    : EntryType::kOther;
      out.push_back(std::move(entry));
      errno = 0;
    }
    int err = errno;
    ::closedir(d);
    if (err != 0) return IoStatus::fail("read directory", dir, err);
    return {};
  }

  IoStatus read(const std::string& path, std::vector<uint8_t>& bytes, FileStat& st) override {
    return read_whole(path, st, [&](int fd, uint64_t size) -> IoStatus {
      bytes.resize(size);
      size_t got = 0;
      if (IoStatus s = read_up_to(fd, bytes.data(), bytes.size(), path, got); !s.ok()) return s;
      if (got != bytes.size()) return IoStatus::fail("read (file shrank while reading)", path, EIO);
      return {};
    });
  }

  IoStatus read_head(const std::string& path, size_t max_bytes,
                     std::vector<uint8_t>& bytes) override {
    bytes.clear();
    Fd fd(open_for_reading(path));
    if (fd.get() < 0) return IoStatus::fail("open", path, errno);
    bytes.resize(max_bytes);
    size_t got = 0;
    IoStatus s = read_up_to(fd.get(), bytes.data(), max_bytes, path, got);
    bytes.resize(s.ok() ? got : 0);
    return s;
  }

  IoStatus read_into(const std::string& path, FileBackedBuffer& buffer, FileStat& st) override {
    return read_whole(path, st, [&](int fd, uint64_t size) -> IoStatus {
      std::vector<uint8_t> chunk(kReadChunk);
      uint64_t got = 0;
      while (got < size) {
        ssize_t n = ::read(fd, chunk.data(), size_t(std::min<uint64_t>(chunk.size(), size - got)));
        if (n < 0) {
          if (errno == EINTR) continue;
          return IoStatus::fail("read", path, errno);
        }
        if (n == 0) break;
        try {
          buffer.append(ByteView(chunk.data(), size_t(n)));
        } catch (const FormatError& e) {
          return IoStatus::fail(std::string("read into ") + e.what(), path, ENOSPC);
        }
        got += uint64_t(n);
      }
      if (got != size) return IoStatus::fail("read (file shrank while reading)", path, EIO);
      return {};
    });
  }

  IoStatus write_atomic(const std::string& target, std::span<const uint8_t> bytes,
                        const std::string& source, const FileStat* expected) override {
    return replace(target, source, expected,
                   [&](int fd) { return write_all(fd, bytes.data(), bytes.size(), target); });
  }

  IoStatus copy_atomic(const std::string& target, const std::string& source,
                       const FileStat* expected) override {
    return replace(target, source, expected, [&](int out) -> IoStatus {
      Fd in(::open(source.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOATIME));
      if (in.get() < 0 && errno == EPERM) in.reset(::open(source.c_str(), O_RDONLY | O_CLOEXEC));
      if (in.get() < 0) return IoStatus::fail("open", source, errno);
      // Blocks of zeros are skipped, not written: a sparse file (a disk image) stays sparse
      // where the destination's filesystem allows it, and reads as the same bytes.
      constexpr size_t kBlock = 64 << 10;
      std::vector<uint8_t> buffer(kCopyChunk);
      off_t copied = 0;
      for (;;) {
        ssize_t n = ::read(in.get(), buffer.data(), buffer.size());
        if (n < 0) {
          if (errno == EINTR) continue;
          return IoStatus::fail("read", source, errno);
        }
        if (n == 0) break;
        for (size_t at = 0; at < size_t(n); at += kBlock) {
          const size_t len = std::min(kBlock, size_t(n) - at);
          const uint8_t* block = buffer.data() + at;
          const bool zeros = block[0] == 0 && std::memcmp(block, block + 1, len - 1) == 0;
          if (zeros) {
            if (::lseek(out, off_t(len), SEEK_CUR) < 0)
              return IoStatus::fail("seek", target, errno);
          } else if (auto s = write_all(out, block, len, target); !s.ok()) {
            return s;
          }
          copied += off_t(len);
        }
      }
      // Zeros at the end make the length, written as a hole.
      if (::ftruncate(out, copied) != 0) return IoStatus::fail("truncate", target, errno);
      return {};
    });
  }

  IoStatus link_or_copy(const std::string& target, const std::string& source) override {
    struct stat a, b;
    if (::stat(source.c_str(), &a) == 0 && ::lstat(target.c_str(), &b) == 0 &&
        a.st_dev == b.st_dev && a.st_ino == b.st_ino)
      return {};  // already linked by an earlier run
    std::string temp;
    {
      Fd fd;
      if (auto s = make_temp(target, temp, fd); !s.ok()) return s;
    }
    // Link under a temp name, then rename: the target is never missing or half there.
    ::unlink(temp.c_str());
    // The file a link given as the source leads to (--follow-symlinks), not the link itself.
    if (::linkat(AT_FDCWD, source.c_str(), AT_FDCWD, temp.c_str(), AT_SYMLINK_FOLLOW) != 0) {
      int err = errno;
      if (err == EXDEV || err == EPERM || err == EMLINK)
        return copy_atomic(target, source, nullptr);
      return IoStatus::fail("link", target, err);
    }
    int rc = ::rename(temp.c_str(), target.c_str());
    int err = errno;
    // rename() between two links of one file succeeds and does nothing: drop the temp name.
    ::unlink(temp.c_str());
    if (rc != 0) return IoStatus::fail("rename", target, err);
    sync_dir_after_rename(split_path(target).first);
    return {};
  }

  IoStatus read_link(const std::string& path, std::string& text) override {
    text.assign(256, '\0');
    for (;;) {
      const ssize_t n = ::readlink(path.c_str(), text.data(), text.size());
      if (n < 0) return IoStatus::fail("read link", path, errno);
      if (size_t(n) < text.size()) {
        text.resize(size_t(n));
        return {};
      }
      if (text.size() >= 1 << 20) return IoStatus::fail("read link", path, ENAMETOOLONG);
      text.resize(text.size() * 2);  // cut: the link is longer than the buffer
    }
  }

  IoStatus make_link(const std::string& target, const std::string& text) override {
    std::string present;
    if (read_link(target, present).ok() && present == text) return {};  // an earlier run's
    std::string temp;
    {
      Fd fd;
      if (auto s = make_temp(target, temp, fd); !s.ok()) return s;
    }
    // Under a temp name first, then renamed: the target is never missing or half there.
    ::unlink(temp.c_str());
    if (::symlink(text.c_str(), temp.c_str()) != 0) return IoStatus::fail("symlink", target, errno);
    if (::rename(temp.c_str(), target.c_str()) != 0) {
      const int err = errno;
      ::unlink(temp.c_str());
      return IoStatus::fail("rename", target, err);
    }
    sync_dir_after_rename(split_path(target).first);
    return {};
  }

  IoStatus make_dirs(const std::string& dir) override {
    if (dir.empty()) return {};
    struct stat s;
    if (::stat(dir.c_str(), &s) == 0) {
      if (S_ISDIR(s.st_mode)) return {};
      return IoStatus::fail("create directory", dir, ENOTDIR);
    }
    auto parent = split_path(dir).first;
    if (parent != dir && parent != "." && parent != "/")
      if (auto st = make_dirs(parent); !st.ok()) return st;
    if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
      return IoStatus::fail("create directory", dir, errno);
    return {};
  }

  IoStatus make_dirs_for(const std::string& root, const std::string& relative,
                         const std::string& source) override {
    if (auto s = make_dirs(root); !s.ok()) return s;
    std::string path = root;
    size_t start = 0;
    // Each folder up to the file's own name, which is left to the caller.
    for (size_t end; (end = relative.find('/', start)) != std::string::npos;) {
      const std::string part = relative.substr(start, end - start);
      start = end + 1;
      const size_t below = size_t(std::count(relative.begin() + long(start), relative.end(), '/'));
      if (part.empty() || part == ".") continue;
      if (path.empty() || path.back() != '/') path += '/';
      path += part;
      struct stat s;
      if (::lstat(path.c_str(), &s) == 0) {
        if (S_ISDIR(s.st_mode)) continue;
        if (!S_ISLNK(s.st_mode)) return IoStatus::fail("create directory", path, ENOTDIR);
        // ENOENT: another worker replaced it first.
        if (::unlink(path.c_str()) != 0 && errno != ENOENT)
          return IoStatus::fail("remove link", path, errno);
      }
      if (::mkdir(path.c_str(), 0777) == 0) {
        if (!source.empty()) take_folder_permissions(path, source, below + 1);
      } else if (!(errno == EEXIST && ::lstat(path.c_str(), &s) == 0 && S_ISDIR(s.st_mode))) {
        return IoStatus::fail("create directory", path, errno);
      }
    }
    return {};
  }

  void take_permissions_of(const std::string& folder, const std::string& like) override {
    take_folder_permissions(folder, like, 0);
  }

  IoStatus remove(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return IoStatus::fail("remove", path, errno);
    return {};
  }

 private:
  IoStatus replace(const std::string& target, const std::string& source, const FileStat* expected,
                   const FillFn& fill) {
    std::string temp;
    Fd fd;
    if (auto s = make_temp(target, temp, fd); !s.ok()) return s;
    auto fail = [&](IoStatus status) {
      ::close(fd.release());
      ::unlink(temp.c_str());
      return status;
    };
    if (auto s = fill(fd.get()); !s.ok()) return fail(s);
    std::string note;
    if (auto s = copy_metadata(fd.get(), source, target, same_file(target, source), note); !s.ok())
      return fail(s);
    if (::fsync(fd.get()) != 0) return fail(IoStatus::fail("fsync", temp, errno));
    if (::close(fd.release()) != 0) return fail(IoStatus::fail("close", temp, errno));
    if (expected) {
      struct stat s;
      if (::stat(source.c_str(), &s) != 0) return fail(IoStatus::fail("stat", source, errno));
      FileStat now = from_stat(s);
      if (now.size != expected->size || now.mtime_ns != expected->mtime_ns ||
          now.ino != expected->ino) {
        IoStatus changed;
        changed.source_changed = true;
        changed.message = source + " changed while it was being optimised; left as it is";
        return fail(changed);
      }
    }
    if (::rename(temp.c_str(), target.c_str()) != 0)
      return fail(IoStatus::fail("rename", target, errno));
    sync_dir_after_rename(split_path(target).first);
    IoStatus done;
    done.note = std::move(note);
    return done;
  }
};

}  // namespace

bool FileStat::is_regular() const { return S_ISREG(mode); }
bool FileStat::is_directory() const { return S_ISDIR(mode); }
bool FileStat::is_symlink() const { return S_ISLNK(mode); }

IoStatus IoStatus::fail(std::string_view op, const std::string& path, int err) {
  IoStatus s;
  s.error = err == 0 ? EIO : err;
  s.op = op;
  s.message = std::string(op) + " " + path + ": " + std::generic_category().message(s.error);
  return s;
}

std::string temp_prefix(std::string_view base_name) {
  if (base_name.size() > kMaxBaseInTempName) base_name = base_name.substr(0, kMaxBaseInTempName);
  // Built by appending: GCC 12 warns falsely (-Wrestrict) on "." + std::string at -O2.
  std::string prefix(1, '.');
  prefix.append(base_name).append(kTempMarker);
  return prefix;
}

bool is_temp_name(std::string_view name) {
  if (name.size() < 1 + kTempMarker.size() + kTempSuffixLength || name[0] != '.') return false;
  auto at = name.size() - kTempSuffixLength - kTempMarker.size();
  const std::string_view suffix = name.substr(name.size() - kTempSuffixLength);
  return name.substr(at, kTempMarker.size()) == kTempMarker &&
         std::all_of(suffix.begin(), suffix.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
}

std::string temp_cut_target(std::string_view temp_name) {
  if (!is_temp_name(temp_name)) return {};
  return std::string(
      temp_name.substr(1, temp_name.size() - 1 - kTempMarker.size() - kTempSuffixLength));
}

std::string temp_target(std::string_view temp_name) {
  std::string base = temp_cut_target(temp_name);
  if (base.size() >= kMaxBaseInTempName) return {};
  return base;
}

std::unique_ptr<Store> make_local_store() { return std::make_unique<LocalStore>(); }

IoStatus make_private_dir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return IoStatus::fail("create directory", dir, errno);
  struct stat s;
  if (::lstat(dir.c_str(), &s) != 0) return IoStatus::fail("look at", dir, errno);
  if (!S_ISDIR(s.st_mode) || s.st_uid != ::geteuid() || (s.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return IoStatus::fail("use", dir, EPERM);
  return {};
}

}  // namespace lighten::batch
