// The file-backed buffer that holds long videos' outputs: appends across growth keep every byte,
// earlier bytes can be patched, and a temporary directory that cannot take the file is a
// FormatError with the directory named, not a crash.
#include "core/file_backed_buffer.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/errors.h"

namespace lighten {
namespace {

TEST(FileBackedBuffer, AppendsAcrossGrowthAndPatches) {
  FileBackedBuffer buffer(16);
  std::vector<uint8_t> expected;
  std::vector<uint8_t> chunk(300'000);
  for (int round = 0; round < 12; ++round) {  // 3.6 MB: several times the first capacity
    for (size_t i = 0; i < chunk.size(); ++i) chunk[i] = uint8_t(i * 7 + round);
    buffer.append(chunk);
    expected.insert(expected.end(), chunk.begin(), chunk.end());
  }
  buffer.push_back(0x5A);
  expected.push_back(0x5A);
  buffer.data()[10] = 0xEE;
  expected[10] = 0xEE;
  ASSERT_EQ(buffer.size(), expected.size());
  const auto view = buffer.view();
  EXPECT_TRUE(std::equal(view.begin(), view.end(), expected.begin(), expected.end()));
  const OutputStorage& storage = buffer;
  EXPECT_EQ(storage.view().size(), expected.size());
}

TEST(FileBackedBuffer, AnUnusableTemporaryDirectoryIsAFormatError) {
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  ::setenv("TMPDIR", "/nonexistent/lighten-test", 1);
  try {
    FileBackedBuffer buffer(1000);
    ADD_FAILURE() << "a buffer was made in a directory that does not exist";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.reason(), Reason::kLimitExceeded);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/lighten-test"), std::string::npos)
        << e.what();
  }
  if (old)
    ::setenv("TMPDIR", saved.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
}

}  // namespace
}  // namespace lighten
