#include "core/machine_limits.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace lighten {
namespace {

namespace fs = std::filesystem;

// A fake root holding proc/self/{cgroup,mountinfo} and control files, as a container sees them.
class FakeRoot {
 public:
  FakeRoot() {
    root_ = fs::temp_directory_path() /
            ("lighten_limits_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "proc/self");
  }
  ~FakeRoot() { fs::remove_all(root_); }

  void write(const std::string& relative, const std::string& text) {
    const fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  std::string root() const { return root_.string(); }

 private:
  fs::path root_;
};

constexpr const char* kUnifiedMount =
    "30 24 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n";

TEST(CgroupLimits, UnifiedLimitsOfTheProcessGroup) {
  FakeRoot fake;
  fake.write("proc/self/cgroup", "0::/\n");
  fake.write("proc/self/mountinfo",
             std::string("22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n") + kUnifiedMount);
  fake.write("sys/fs/cgroup/memory.max", "2147483648\n");
  fake.write("sys/fs/cgroup/cpu.max", "150000 100000\n");
  const CgroupLimits limits = read_cgroup_limits(fake.root());
  ASSERT_TRUE(limits.memory);
  EXPECT_EQ(*limits.memory, 2147483648u);
  ASSERT_TRUE(limits.cpus);
  EXPECT_DOUBLE_EQ(*limits.cpus, 1.5);
}

TEST(CgroupLimits, EveryLevelAboveTheGroupLimitsItToo) {
  FakeRoot fake;
  fake.write("proc/self/cgroup", "0::/system.slice/batch.service\n");
  fake.write("proc/self/mountinfo", kUnifiedMount);
  fake.write("sys/fs/cgroup/system.slice/batch.service/memory.max", "max\n");
  fake.write("sys/fs/cgroup/system.slice/batch.service/cpu.max", "max 100000\n");
  fake.write("sys/fs/cgroup/system.slice/memory.max", "1073741824\n");
  fake.write("sys/fs/cgroup/system.slice/cpu.max", "400000 100000\n");
  fake.write("sys/fs/cgroup/memory.max", "4294967296\n");  // looser: the tightest wins
  const CgroupLimits limits = read_cgroup_limits(fake.root());
  ASSERT_TRUE(limits.memory);
  EXPECT_EQ(*limits.memory, 1073741824u);
  ASSERT_TRUE(limits.cpus);
  EXPECT_DOUBLE_EQ(*limits.cpus, 4.0);
}

TEST(CgroupLimits, VersionOneControllersOfAContainerWithoutANamespace) {
  // Docker on cgroup v1: the host's path, the container's own group mounted at the top.
  FakeRoot fake;
  fake.write("proc/self/cgroup",
             "12:pids:/docker/abc\n4:memory:/docker/abc\n2:cpu,cpuacct:/docker/abc\n"
             "1:name=systemd:/docker/abc\n");
  fake.write("proc/self/mountinfo",
             "40 30 0:35 /docker/abc /sys/fs/cgroup/memory ro,nosuid - cgroup cgroup rw,memory\n"
             "41 30 0:36 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro,nosuid - cgroup cgroup "
             "rw,cpu,cpuacct\n");
  fake.write("sys/fs/cgroup/memory/memory.limit_in_bytes", "536870912\n");
  fake.write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "50000\n");
  fake.write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  const CgroupLimits limits = read_cgroup_limits(fake.root());
  ASSERT_TRUE(limits.memory);
  EXPECT_EQ(*limits.memory, 536870912u);
  ASSERT_TRUE(limits.cpus);
  EXPECT_DOUBLE_EQ(*limits.cpus, 0.5);
}

TEST(CgroupLimits, UnlimitedValuesAndMissingFilesAreNoLimit) {
  FakeRoot fake;
  fake.write("proc/self/cgroup", "4:memory:/user\n2:cpu:/user\n");
  fake.write("proc/self/mountinfo",
             "40 30 0:35 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
             "41 30 0:36 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n");
  fake.write("sys/fs/cgroup/memory/user/memory.limit_in_bytes", "9223372036854771712\n");
  fake.write("sys/fs/cgroup/cpu/user/cpu.cfs_quota_us", "-1\n");
  fake.write("sys/fs/cgroup/cpu/user/cpu.cfs_period_us", "100000\n");
  const CgroupLimits limits = read_cgroup_limits(fake.root());
  EXPECT_FALSE(limits.memory);
  EXPECT_FALSE(limits.cpus);

  FakeRoot empty;
  EXPECT_FALSE(read_cgroup_limits(empty.root()).memory);
  EXPECT_FALSE(read_cgroup_limits(empty.root()).cpus);
}

TEST(CgroupLimits, MountPointsWithEscapedSpacesAndDamagedLinesAreRead) {
  FakeRoot fake;
  fake.write("proc/self/cgroup", "garbage\n0::/job\n");
  fake.write("proc/self/mountinfo",
             "broken line\n"
             "30 24 0:26 / /cg\\040root rw - cgroup2 cgroup2 rw\n");
  fake.write("cg root/job/memory.max", "300000000\n");
  fake.write("cg root/job/cpu.max", "not numbers\n");
  const CgroupLimits limits = read_cgroup_limits(fake.root());
  ASSERT_TRUE(limits.memory);
  EXPECT_EQ(*limits.memory, 300000000u);
  EXPECT_FALSE(limits.cpus);
}

TEST(MachineLimits, ThisProcessHasAtLeastOneCoreAndSomeMemory) {
  EXPECT_GE(usable_cores(), 1u);
  const std::optional<uint64_t> memory = usable_memory();
  ASSERT_TRUE(memory);
  EXPECT_GT(*memory, 0u);
}

}  // namespace
}  // namespace lighten
