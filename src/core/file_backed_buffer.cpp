#include "core/file_backed_buffer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/errors.h"

namespace lighten {
namespace {

std::string temp_dir() {
  const char* dir = std::getenv("TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

[[noreturn]] void fail(const std::string& what, int err) {
  throw FormatError(
      Reason::kLimitExceeded, 0,
      "the temporary output in " + temp_dir() + ": " + what + ": " + std::strerror(err));
}

// An unlinked file: nothing is left behind however the process ends.
int open_unlinked() {
  const std::string dir = temp_dir();
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  std::string name = dir + "/lighten-output-XXXXXX";  // file systems without O_TMPFILE
  fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) fail("cannot create a file", errno);
  ::unlink(name.c_str());
  return fd;
}

constexpr uint64_t kMinCapacity = 1 << 20;

}  // namespace

FileBackedBuffer::FileBackedBuffer(uint64_t capacity) {
  fd_ = open_unlinked();
  try {
    grow(std::max(capacity, kMinCapacity));
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

FileBackedBuffer::~FileBackedBuffer() {
  if (map_) ::munmap(map_, capacity_);
  ::close(fd_);
}

void FileBackedBuffer::grow(uint64_t at_least) {
  const uint64_t wanted = std::max<uint64_t>(at_least, capacity_ + capacity_ / 2);
  if (wanted > uint64_t(SIZE_MAX / 2)) fail("too large", EFBIG);
  // Blocks are allocated now: a full disk shows here as an error, not as SIGBUS on a later
  // write through the mapping.
  const int rc = ::posix_fallocate(fd_, off_t(capacity_), off_t(wanted - capacity_));
  if (rc != 0) fail("cannot grow to " + std::to_string(wanted) + " bytes", rc);
  void* map = map_ ? ::mremap(map_, capacity_, size_t(wanted), MREMAP_MAYMOVE)
                   : ::mmap(nullptr, size_t(wanted), PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (map == MAP_FAILED) fail("cannot map " + std::to_string(wanted) + " bytes", errno);
  map_ = static_cast<uint8_t*>(map);
  capacity_ = size_t(wanted);
}

void FileBackedBuffer::append(ByteView bytes) {
  if (bytes.empty()) return;
  if (bytes.size() > capacity_ - size_) grow(uint64_t(size_) + bytes.size());
  std::memcpy(map_ + size_, bytes.data(), bytes.size());
  size_ += bytes.size();
}

}  // namespace lighten
