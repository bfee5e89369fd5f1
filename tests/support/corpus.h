// Where the shared corpus is, and reading files from it. Tests that need it skip when absent.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace lighten::testing {

inline std::filesystem::path shared_dir() { return LIGHTEN_SHARED_DIR; }

// Every regular file of ../shared/corpus/<category>, sorted by name; empty when absent.
inline std::vector<std::filesystem::path> corpus_files(const std::string& category) {
  std::vector<std::filesystem::path> files;
  auto dir = shared_dir() / "corpus" / category;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

inline std::vector<uint8_t> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

}  // namespace lighten::testing

// Skips the current test with a clear message when the shared corpus category is missing.
#define LIGHTEN_REQUIRE_CORPUS(files, category)                                                \
  if ((files).empty())                                                                         \
  GTEST_SKIP() << "shared corpus not found at " << ::lighten::testing::shared_dir() / "corpus" \
               << "/" << (category) << " (clone ../shared beside the repository)"
