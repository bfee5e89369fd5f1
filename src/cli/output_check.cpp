// Output paths checked before the work: a report that cannot be written is found before the
// run (or the probe), not after hours of it.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "commands.h"

namespace lighten::cli {

std::string unwritable_reason(const std::string& path, const std::string& made_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path == "-") return "this report is written to a file, not to standard output: give a name";
  if (fs::is_directory(path, ec)) return path + " is a directory: give a file name";
  const fs::path parent = fs::path(path).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  const auto normal = [](const std::string& p) {
    std::error_code error;
    return (fs::absolute(p, error) / "").lexically_normal();  // "out" and "out/" alike
  };
  if (!fs::exists(dir, ec) && !made_dir.empty() && normal(dir) == normal(made_dir)) return {};
  if (!fs::is_directory(dir, ec)) return "the directory " + dir + " does not exist";
  if (::access(dir.c_str(), W_OK) != 0) return "the directory " + dir + " is not writable";
  return {};
}

bool same_path(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec, ea, eb;
  return fs::absolute(a, ea).lexically_normal() == fs::absolute(b, eb).lexically_normal() ||
         fs::equivalent(a, b, ec);
}

}  // namespace lighten::cli
