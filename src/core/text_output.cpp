#include "core/text_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <stdexcept>

namespace lighten {
namespace {

// The descriptor a path names without a file of its own (/dev/stdout, /dev/fd/3): written as
// the shell set it up (a pipe, a terminal, a file opened for appending), never reopened.
std::optional<int> open_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"})
    if (path.starts_with(prefix) && path.size() > prefix.size() &&
        path.size() - prefix.size() < 6 &&
        std::all_of(path.begin() + long(prefix.size()), path.end(),
                    [](char c) { return c >= '0' && c <= '9'; }))
      return std::stoi(path.substr(prefix.size()));
  return std::nullopt;
}

// Where a write to `path` should land: through symbolic links to what they name, so that a
// link stays a link (and a dangling one gets its target). Throws on a loop.
std::string through_links(const std::string& path) {
  std::filesystem::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p.string();
    std::error_code ec;
    const std::filesystem::path target = std::filesystem::read_symlink(p, ec);
    if (ec) return p.string();
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  errno = ELOOP;
  return {};
}

void write_all(int fd, std::string_view text, const std::function<void()>& fail) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail();
    done += size_t(n);
  }
}

}  // namespace

namespace {

// Hands what a stream is given to `put` in pieces of 64 kB.
class PieceBuffer final : public std::streambuf {
 public:
  explicit PieceBuffer(const std::function<void(std::string_view)>& put) : put_(put) {
    setp(piece_.data(), piece_.data() + piece_.size());
  }
  int sync() override {
    put_(std::string_view(pbase(), size_t(pptr() - pbase())));
    setp(piece_.data(), piece_.data() + piece_.size());
    return 0;
  }
  int_type overflow(int_type c) override {
    sync();
    if (!traits_type::eq_int_type(c, traits_type::eof())) sputc(traits_type::to_char_type(c));
    return traits_type::not_eof(c);
  }

 private:
  const std::function<void(std::string_view)>& put_;
  std::array<char, 1 << 16> piece_{};
};

// Gives `produce` a function that writes to a temporary file beside `requested` (renamed over
// it once all is written and synced), or to the pipe, device or descriptor it names.
void write_atomically(
    const std::string& requested,
    const std::function<void(const std::function<void(std::string_view)>&)>& produce,
    std::string_view advice) {
  auto error = [&](std::string_view op, int err) {
    return std::runtime_error(std::string(op) + " " + requested + ": " + std::strerror(err) + "; " +
                              std::string(advice));
  };
  if (const std::optional<int> fd = open_descriptor(requested)) {
    produce([&](std::string_view text) {
      write_all(*fd, text, [&] { throw error("cannot write", errno); });
    });
    return;
  }
  const std::string path = through_links(requested);
  if (path.empty()) throw error("cannot write", ELOOP);
  // A pipe, a terminal or a device is written as it is: renaming a file over it would replace
  // the device node.
  struct stat st;
  const bool special = ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  if (special && S_ISDIR(st.st_mode)) throw error("cannot write", EISDIR);
  const std::string temp = special ? path : path + ".tmp-" + std::to_string(::getpid());
  const int fd = special ? ::open(path.c_str(), O_WRONLY | O_CLOEXEC)
                         : ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool open = fd >= 0;
  const auto give_up = [&] {  // the temporary file goes; `path` stays as it was
    if (open) ::close(fd);
    open = false;
    if (!special) ::unlink(temp.c_str());
  };
  auto fail = [&](std::string_view op) {
    const int err = errno;
    give_up();
    throw error(op, err);
  };
  if (!open) fail(special ? "cannot open" : "cannot create");
  try {
    produce([&](std::string_view text) { write_all(fd, text, [&] { fail("cannot write"); }); });
  } catch (...) {
    give_up();
    throw;
  }
  if (!special && ::fsync(fd) != 0) fail("cannot write");
  open = false;
  if (::close(fd) != 0) fail("cannot write");
  if (!special && ::rename(temp.c_str(), path.c_str()) != 0) fail("cannot rename onto");
}

}  // namespace

void write_text_atomically(const std::string& requested, std::string_view text,
                           std::string_view advice) {
  write_atomically(
      requested, [&](const auto& put) { put(text); }, advice);
}

void write_stream_atomically(const std::string& path,
                             const std::function<void(std::ostream&)>& write,
                             std::string_view advice) {
  write_atomically(
      path,
      [&](const std::function<void(std::string_view)>& put) {
        PieceBuffer buffer(put);
        std::ostream out(&buffer);
        out.exceptions(std::ios::badbit);  // a failed write throws its own error through
        write(out);
        out.flush();
        // A writer that left the stream failed may have kept its last piece from the file.
        if (!out)
          throw std::runtime_error("cannot write " + path +
                                   ": the text was not all "
                                   "written; " +
                                   std::string(advice));
      },
      advice);
}

std::string utc_time_text(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[64];
  const size_t n = std::strftime(text, sizeof text, format, &tm);
  return std::string(text, n);
}

}  // namespace lighten
