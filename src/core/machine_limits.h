// What this process may use of the machine: the cores it may run on and the memory it may hold,
// as its CPU affinity and its control groups (v1 or v2: a container's, a systemd unit's) allow.
// A container on a large host sees the host's cores and memory through sysconf; sizing workers
// by those starts more threads than its CPU quota runs and budgets memory the kernel kills it for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace lighten {

struct CgroupLimits {
  std::optional<double> cpus;      // the CPU quota in cores (quota / period), tightest level
  std::optional<uint64_t> memory;  // bytes, tightest level
};

// Reads the limits of the control groups that `proc/self/cgroup` under `root` names, finding
// their folders through `proc/self/mountinfo` (also under `root`; mount points are taken
// relative to it) and walking up to the mount's top, since every level's limit applies. `root`
// is "/" for this process; tests give a folder holding a fake tree. Unreadable or absent files
// mean no limit; nothing throws.
CgroupLimits read_cgroup_limits(const std::string& root = "/");

// The cores this process may use: its CPU affinity, lowered to a CPU quota rounded up. At least 1.
unsigned usable_cores();

// Physical memory, lowered to a control group's memory limit; nullopt when neither is known.
std::optional<uint64_t> usable_memory();

}  // namespace lighten
