#include "core/text_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace lighten {

void write_text_atomically(const std::string& path, std::string_view text,
                           std::string_view advice) {
  const std::string temp = path + ".tmp-" + std::to_string(::getpid());
  auto fail = [&](std::string_view op) {
    const int err = errno;
    ::unlink(temp.c_str());
    throw std::runtime_error(std::string(op) + " " + path + ": " + std::strerror(err) + "; " +
                             std::string(advice));
  };
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create");
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      fail("cannot write");
    }
    done += size_t(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("cannot write");
  }
  if (::close(fd) != 0) fail("cannot write");
  if (::rename(temp.c_str(), path.c_str()) != 0) fail("cannot rename onto");
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
