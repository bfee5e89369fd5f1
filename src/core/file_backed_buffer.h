// A growable byte buffer in an unlinked temporary file, mapped shared: what it holds is page
// cache the kernel writes back and evicts, not process memory, so a multi-GB output (a long
// video) stays within the memory of a few frames. Writes at any offset below size() (patching a
// length field written earlier) go through data().
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/bytes.h"
#include "lighten/outcome.h"

namespace lighten {

class FileBackedBuffer final : public OutputStorage {
 public:
  // Creates the file in the temporary directory ($TMPDIR, else /tmp) with room for
  // `capacity` bytes. Throws FormatError (limit-exceeded) when it cannot.
  explicit FileBackedBuffer(uint64_t capacity);
  ~FileBackedBuffer() override;
  FileBackedBuffer(const FileBackedBuffer&) = delete;
  FileBackedBuffer& operator=(const FileBackedBuffer&) = delete;

  // Throws FormatError (limit-exceeded) when the file system has no room for more.
  void append(ByteView bytes);
  void push_back(uint8_t byte) { append(ByteView(&byte, 1)); }
  size_t size() const { return size_; }
  // Valid until the next append.
  uint8_t* data() { return map_; }
  std::span<const uint8_t> view() const override { return {map_, size_}; }

 private:
  void grow(uint64_t at_least);

  int fd_ = -1;
  uint8_t* map_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace lighten
