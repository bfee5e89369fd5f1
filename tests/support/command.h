// Runs a shell command for a test and returns what it printed on stdout (empty when it could
// not be started): ffprobe, ffmpeg and other independent readers.
#pragma once

#include <cstdio>
#include <string>

namespace lighten::testing {

inline std::string command_output(const std::string& cmd) {
  std::string out;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  pclose(pipe);
  return out;
}

}  // namespace lighten::testing
