// Helpers of the batch tests: temp trees, running the CLI, decoding JPEGs to compare pixels.
#pragma once

#include <grp.h>
#include <gtest/gtest.h>
#include <jpeglib.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/corpus.h"

namespace lighten::testing {

namespace fs = std::filesystem;

// A directory removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "lighten-batch-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data()) ? pattern : throw std::runtime_error("mkdtemp failed");
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

inline std::string cli_path() { return LIGHTEN_CLI; }
inline bool cli_available() { return ::access(LIGHTEN_CLI, X_OK) == 0; }

#define LIGHTEN_REQUIRE_CLI() \
  if (!::lighten::testing::cli_available()) GTEST_SKIP() << "CLI not built at " << LIGHTEN_CLI

// Starts `lighten ARGS...`, or `sh -c 'PREFIX; exec lighten ARGS...'` with a shell prefix.
// Its output goes to `log` so that the test output stays readable.
// With `as_uid`, the child drops to that user and group first (root only).
inline pid_t start_cli(const std::vector<std::string>& args, const std::string& shell_prefix = "",
                       const std::string& log = "/dev/null", int as_uid = -1) {
  std::vector<std::string> argv;
  if (shell_prefix.empty()) {
    argv.push_back(cli_path());
    argv.insert(argv.end(), args.begin(), args.end());
  } else {
    std::string command = shell_prefix + "; exec \"$0\" \"$@\"";
    argv = {"/bin/sh", "-c", command, cli_path()};
    argv.insert(argv.end(), args.begin(), args.end());
  }
  pid_t pid = ::fork();
  if (pid == 0) {
    FILE* out = std::fopen(log.c_str(), "a");
    if (out) {
      ::dup2(::fileno(out), 1);
      ::dup2(::fileno(out), 2);
    }
    if (as_uid >= 0 && (::setgroups(0, nullptr) != 0 || ::setgid(gid_t(as_uid)) != 0 ||
                        ::setuid(uid_t(as_uid)) != 0))
      ::_exit(126);
    std::vector<char*> raw;
    for (auto& a : argv) raw.push_back(a.data());
    raw.push_back(nullptr);
    ::execv(raw[0], raw.data());
    ::_exit(127);
  }
  return pid;
}

// Exit status, or 128 + signal.
inline int wait_cli(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) < 0) return -1;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

inline int run_cli(const std::vector<std::string>& args, const std::string& shell_prefix = "",
                   const std::string& log = "/dev/null", int as_uid = -1) {
  return wait_cli(start_cli(args, shell_prefix, log, as_uid));
}

// Every regular file below `root` (relative path -> bytes).
inline std::map<std::string, std::vector<uint8_t>> snapshot(const fs::path& root) {
  std::map<std::string, std::vector<uint8_t>> files;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) files[fs::relative(e.path(), root).string()] = read_file(e.path());
  return files;
}

inline bool has_temp_files(const fs::path& root) {
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.path().filename().string().find(".lighten-tmp-") != std::string::npos) return true;
  return false;
}

struct DecodedImage {
  int width = 0, height = 0, components = 0;
  std::vector<uint8_t> pixels;
  bool operator==(const DecodedImage&) const = default;
};

// Full decode with libjpeg (every pixel, the library's default output colour space).
inline std::optional<DecodedImage> decode_jpeg(const std::vector<uint8_t>& bytes) {
  struct Error {
    jpeg_error_mgr mgr;
    jmp_buf jump;
  };
  jpeg_decompress_struct d;
  Error error;
  d.err = jpeg_std_error(&error.mgr);
  error.mgr.error_exit = [](j_common_ptr c) { longjmp(reinterpret_cast<Error*>(c->err)->jump, 1); };
  error.mgr.output_message = [](j_common_ptr) {};
  DecodedImage image;
  jpeg_create_decompress(&d);
  if (setjmp(error.jump)) {
    jpeg_destroy_decompress(&d);
    return std::nullopt;
  }
  jpeg_mem_src(&d, bytes.data(), bytes.size());
  jpeg_read_header(&d, TRUE);
  jpeg_start_decompress(&d);
  image.width = int(d.output_width);
  image.height = int(d.output_height);
  image.components = d.output_components;
  size_t row = size_t(d.output_width) * size_t(d.output_components);
  image.pixels.resize(row * d.output_height);
  while (d.output_scanline < d.output_height) {
    JSAMPROW line = image.pixels.data() + row * d.output_scanline;
    jpeg_read_scanlines(&d, &line, 1);
  }
  jpeg_finish_decompress(&d);
  jpeg_destroy_decompress(&d);
  return image;
}

// The same bytes, or a JPEG whose full decode is identical to the original's.
inline ::testing::AssertionResult same_or_equivalent(const std::vector<uint8_t>& original,
                                                     const std::vector<uint8_t>& now) {
  if (original == now) return ::testing::AssertionSuccess();
  auto a = decode_jpeg(original);
  auto b = decode_jpeg(now);
  if (!a) return ::testing::AssertionFailure() << "changed, and the original does not decode";
  if (!b) return ::testing::AssertionFailure() << "changed into something that does not decode";
  if (!(*a == *b)) return ::testing::AssertionFailure() << "decodes to different pixels";
  return ::testing::AssertionSuccess();
}

// The 16 largest JPEGs of the corpus (camera photos) and `small` of the smallest ones.
inline std::vector<fs::path> crash_corpus(size_t small) {
  auto files = corpus_files("jpeg");
  std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
    return fs::file_size(a) > fs::file_size(b);
  });
  std::vector<fs::path> chosen;
  for (size_t i = 0; i < files.size() && i < 16; ++i) chosen.push_back(files[i]);
  for (size_t i = 0; i < small && 16 + i < files.size(); ++i)
    chosen.push_back(files[files.size() - 1 - i]);
  return chosen;
}

inline void copy_into(const std::vector<fs::path>& files, const fs::path& dir) {
  fs::create_directories(dir);
  for (const auto& f : files) {
    fs::copy_file(f, dir / f.filename(), fs::copy_options::overwrite_existing);
    fs::permissions(dir / f.filename(), fs::perms::owner_read | fs::perms::owner_write |
                                            fs::perms::group_read | fs::perms::others_read);
  }
}

}  // namespace lighten::testing
