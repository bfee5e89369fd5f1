#include "core/machine_limits.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace lighten {
namespace {

// Limits at or above this are "no limit" (cgroup v1 writes 2^63 rounded down to a page).
constexpr uint64_t kNoMemoryLimit = 1ull << 60;

std::optional<std::string> read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text;
  char buffer[4096];
  // Control files are a line long; anything past 1 MiB is not one.
  while (text.size() < (1u << 20) && in.read(buffer, sizeof buffer).gcount() > 0)
    text.append(buffer, size_t(in.gcount()));
  return text;
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

std::optional<int64_t> parse_integer(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// mountinfo writes space, tab, newline and backslash in paths as \ooo.
std::string unescape_mount_path(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size() &&
        std::all_of(text.begin() + i + 1, text.begin() + i + 4,
                    [](char c) { return c >= '0' && c <= '7'; })) {
      out += char((text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 + (text[i + 3] - '0'));
      i += 3;
    } else {
      out += text[i];
    }
  }
  return out;
}

struct CgroupMount {
  std::string root;                      // the part of the hierarchy mounted there
  std::string mount_point;               // where, under the caller's root
  bool unified = false;                  // cgroup2
  std::vector<std::string> controllers;  // v1: from the super options
};

std::vector<CgroupMount> cgroup_mounts(const std::string& root, const std::string& mountinfo) {
  std::vector<CgroupMount> mounts;
  std::istringstream lines(mountinfo);
  for (std::string line; std::getline(lines, line);) {
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    const std::vector<std::string> before = split(std::string_view(line).substr(0, dash), ' ');
    const std::vector<std::string> after = split(std::string_view(line).substr(dash + 3), ' ');
    if (before.size() < 5 || after.size() < 3) continue;
    CgroupMount mount;
    if (after[0] == "cgroup2") {
      mount.unified = true;
    } else if (after[0] == "cgroup") {
      mount.controllers = split(after[2], ',');
    } else {
      continue;
    }
    mount.root = unescape_mount_path(before[3]);
    const std::string point = unescape_mount_path(before[4]);
    mount.mount_point = root == "/" ? point : root + point;
    mounts.push_back(std::move(mount));
  }
  return mounts;
}

// The folders whose limits apply to `path` in `mount`, deepest first. A path outside the
// mount's root (a container seeing the host's path without a cgroup namespace) is taken as
// the mount's top, which is what such a container has mounted.
std::vector<std::string> cgroup_folders(const CgroupMount& mount, const std::string& path) {
  std::string relative;
  if (mount.root == "/") {
    relative = path;
  } else if (path.compare(0, mount.root.size(), mount.root) == 0 &&
             (path.size() == mount.root.size() || path[mount.root.size()] == '/')) {
    relative = path.substr(mount.root.size());
  }
  while (!relative.empty() && relative.back() == '/') relative.pop_back();
  std::vector<std::string> folders;
  for (;;) {
    folders.push_back(mount.mount_point + relative);
    const size_t slash = relative.rfind('/');
    if (relative.empty() || slash == std::string::npos) break;
    relative.resize(slash);
  }
  return folders;
}

void lower(std::optional<uint64_t>& limit, uint64_t value) {
  if (value < kNoMemoryLimit) limit = limit ? std::min(*limit, value) : value;
}

void lower(std::optional<double>& limit, double value) {
  if (value > 0) limit = limit ? std::min(*limit, value) : value;
}

void read_unified_limits(const std::string& folder, CgroupLimits& limits) {
  if (const auto text = read_small_file(folder + "/memory.max")) {
    if (const auto bytes = parse_integer(*text); bytes && *bytes >= 0) lower(limits.memory, *bytes);
  }
  if (const auto text = read_small_file(folder + "/cpu.max")) {
    const std::vector<std::string> fields = split(*text, ' ');
    if (fields.size() == 2) {
      const auto quota = parse_integer(fields[0]), period = parse_integer(fields[1]);
      if (quota && period && *quota > 0 && *period > 0)
        lower(limits.cpus, double(*quota) / *period);
    }
  }
}

void read_v1_limits(const CgroupMount& mount, const std::string& folder, CgroupLimits& limits) {
  const auto has = [&](const char* name) {
    return std::find(mount.controllers.begin(), mount.controllers.end(), name) !=
           mount.controllers.end();
  };
  if (has("memory")) {
    if (const auto text = read_small_file(folder + "/memory.limit_in_bytes")) {
      if (const auto bytes = parse_integer(*text); bytes && *bytes >= 0)
        lower(limits.memory, *bytes);
    }
  }
  if (has("cpu")) {
    const auto quota_text = read_small_file(folder + "/cpu.cfs_quota_us");
    const auto period_text = read_small_file(folder + "/cpu.cfs_period_us");
    if (quota_text && period_text) {
      const auto quota = parse_integer(*quota_text), period = parse_integer(*period_text);
      if (quota && period && *quota > 0 && *period > 0)
        lower(limits.cpus, double(*quota) / *period);
    }
  }
}

}  // namespace

CgroupLimits read_cgroup_limits(const std::string& root) {
  CgroupLimits limits;
  const std::string proc = root == "/" ? "/proc/self" : root + "/proc/self";
  const auto groups = read_small_file(proc + "/cgroup");
  const auto mountinfo = read_small_file(proc + "/mountinfo");
  if (!groups || !mountinfo) return limits;
  const std::vector<CgroupMount> mounts = cgroup_mounts(root, *mountinfo);
  std::istringstream lines(*groups);
  // Each line is "hierarchy:controllers:path"; cgroup2's has hierarchy 0 and no controllers.
  for (std::string line; std::getline(lines, line);) {
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string path = line.substr(second + 1);
    const bool unified = line.compare(0, first, "0") == 0 && second == first + 1;
    const std::vector<std::string> controllers =
        split(line.substr(first + 1, second - first - 1), ',');
    for (const CgroupMount& mount : mounts) {
      if (mount.unified != unified) continue;
      if (!unified && std::none_of(controllers.begin(), controllers.end(), [&](const auto& c) {
            return std::find(mount.controllers.begin(), mount.controllers.end(), c) !=
                   mount.controllers.end();
          }))
        continue;
      for (const std::string& folder : cgroup_folders(mount, path)) {
        if (unified) {
          read_unified_limits(folder, limits);
        } else {
          read_v1_limits(mount, folder, limits);
        }
      }
    }
  }
  return limits;
}

unsigned usable_cores() {
  unsigned cores = 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) cores = unsigned(CPU_COUNT(&set));
  if (cores == 0) cores = std::thread::hardware_concurrency();
  if (const auto quota = read_cgroup_limits().cpus)
    cores = std::min(cores == 0 ? ~0u : cores,
                     unsigned(std::clamp(std::ceil(*quota), 1.0, double(~0u))));
  return std::max(1u, cores);
}

std::optional<uint64_t> usable_memory() {
  std::optional<uint64_t> memory;
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0) memory = uint64_t(pages) * uint64_t(page_size);
  if (const auto limit = read_cgroup_limits().memory)
    memory = memory ? std::min(*memory, *limit) : *limit;
  return memory;
}

}  // namespace lighten
