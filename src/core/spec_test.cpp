#include "tessera/core/spec.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "temp_dir.hpp"
#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

TEST(Spec, FromStrings) {
  Spec spec = Spec::from({{"allowed_mem", "400MB"},
                          {"reserved_mem", "100MB"},
                          {"total_mem", "8GB"},
                          {"executor", "sync"},
                          {"max_workers", "3"},
                          {"work_dir", "/tmp/x"}});
  EXPECT_EQ(spec.allowed_mem, 400'000'000);
  EXPECT_EQ(spec.reserved_mem, 100'000'000);
  EXPECT_EQ(spec.total_mem, 8'000'000'000);
  EXPECT_EQ(spec.executor, "sync");
  EXPECT_EQ(spec.max_workers, 3);
  EXPECT_EQ(spec.work_dir, "/tmp/x");
  EXPECT_EQ(spec.effective_total_mem(), 8'000'000'000);
  EXPECT_EQ(spec.effective_max_workers(), 3);
}

TEST(Spec, SettersTakeSizeStrings) {
  Spec spec;
  spec.set_allowed_mem("2GiB").set_reserved_mem("1KiB");
  EXPECT_EQ(spec.allowed_mem, 2LL << 30);
  EXPECT_EQ(spec.reserved_mem, 1024);
  EXPECT_NO_THROW(spec.validate());
}

TEST(Spec, ValidationErrors) {
  EXPECT_THROW(Spec::from({{"allowed_mem", "100MB"}, {"reserved_mem", "100MB"}}), InvalidArgument);
  EXPECT_THROW(Spec::from({{"allowed_mem", "100MB"}, {"reserved_mem", "200MB"}}), InvalidArgument);
  EXPECT_THROW(Spec::from({{"reserved_mem", "1MB"}}), InvalidArgument);  // allowed_mem unset
  EXPECT_THROW(Spec::from({{"allowed_mem", "1GB"}, {"total_mem", "500MB"}}), InvalidArgument);
  EXPECT_THROW(Spec::from({{"allowed_mem", "1GB"}, {"executor", "gpu"}}), InvalidArgument);
  // dask and ray are known (the Python module registers them); making one elsewhere says so.
  EXPECT_NO_THROW(Spec::from({{"allowed_mem", "1GB"}, {"executor", "dask"}}));
  EXPECT_THROW(Spec::from({{"allowed_mem", "1GB"}, {"max_workers", "-2"}}), InvalidArgument);
  EXPECT_THROW(Spec::from({{"allowed_mem", "1GB"}, {"max_workers", "2x"}}), InvalidArgument);
  EXPECT_THROW(Spec::from({{"allowed_memory", "1GB"}}), InvalidArgument);
  EXPECT_THROW(Spec::from({{"allowed_mem", "-1MB"}}), InvalidArgument);
  try {
    Spec::from({{"allowed_mem", "100MB"}, {"reserved_mem", "200MB"}});
  } catch (const InvalidArgument& error) {
    EXPECT_STREQ(error.what(),
                 "Spec allowed_mem (100.0 MB) must exceed reserved_mem (200.0 MB): reserved_mem "
                 "is part of every task's budget");
  }
}

TEST(Spec, AllowedMemAutoIsValidAndLeftToThePlan) {
  const Spec spec = Spec::from({{"allowed_mem", "auto"}, {"reserved_mem", "100MB"}});
  EXPECT_TRUE(spec.allowed_mem_is_auto());
  EXPECT_EQ(spec.allowed_mem, Spec::kAutoAllowedMem);
  // total_mem below an unknown allowed_mem is for the plan to judge.
  EXPECT_NO_THROW(Spec::from({{"allowed_mem", "auto"}, {"total_mem", "500MB"}}));
  EXPECT_FALSE(Spec::from({{"allowed_mem", "1GB"}}).allowed_mem_is_auto());
  EXPECT_THROW(Spec::from({{"allowed_mem", "Auto"}}), InvalidArgument);
}

TEST(Spec, MemoryTiersAreSortedSizes) {
  Spec spec = Spec::from({{"allowed_mem", "auto"}, {"memory_tiers", "2GB, 512MB,1GB ,10GB"}});
  EXPECT_EQ(spec.memory_tiers,
            (std::vector<std::int64_t>{512'000'000, 1'000'000'000, 2'000'000'000, 10'000'000'000}));
  spec.set_memory_tiers("");
  EXPECT_TRUE(spec.memory_tiers.empty());
  spec.set_memory_tiers("1GiB");
  EXPECT_EQ(spec.memory_tiers, std::vector<std::int64_t>{1LL << 30});
  EXPECT_THROW(spec.set_memory_tiers("1GB,,2GB"), InvalidArgument);
  EXPECT_THROW(spec.set_memory_tiers("1GB,"), InvalidArgument);
  EXPECT_THROW(spec.set_memory_tiers("1GB,1000MB"), InvalidArgument);  // the same size twice
  EXPECT_THROW(spec.set_memory_tiers("1GB,lots"), InvalidArgument);
  try {
    Spec::from({{"allowed_mem", "1GB"}, {"reserved_mem", "600MB"}, {"memory_tiers", "512MB,1GB"}});
    FAIL() << "a tier below reserved_mem was accepted";
  } catch (const InvalidArgument& error) {
    EXPECT_STREQ(error.what(),
                 "Spec memory tier 512.0 MB must exceed reserved_mem (600.0 MB): reserved_mem is "
                 "part of every task's memory");
  }
  Spec unsorted;
  unsorted.allowed_mem = 1'000'000'000;
  unsorted.memory_tiers = {2'000'000'000, 1'000'000'000};
  EXPECT_THROW(unsorted.validate(), InvalidArgument);
}

TEST(Spec, DetectsTotalMemFromCgroupOrPhysicalRam) {
  const std::int64_t physical =
      static_cast<std::int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  const std::int64_t detected = detect_total_mem();
  EXPECT_GT(detected, 0);
  EXPECT_LE(detected, physical);
  Spec spec;
  EXPECT_EQ(spec.effective_total_mem(), detected);
  EXPECT_EQ(detect_total_mem("/"), detected);
}

// A fake root for detect_total_mem(root): <root>/proc/self/cgroup and the cgroup files
// under <root>/sys/fs/cgroup, removed at the end of the test.
class CgroupTree : public ::testing::Test {
 protected:
  void SetUp() override {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGE_SIZE);
    ASSERT_GT(pages, 0);
    ASSERT_GT(page_size, 0);
    physical_ = static_cast<std::int64_t>(pages) * static_cast<std::int64_t>(page_size);
  }
  // Writes `text` to <root>/<relative>, creating the folders above it.
  void Write(const std::string& relative, const std::string& text) {
    const std::filesystem::path path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream file(path, std::ios::trunc);
    file << text;
    ASSERT_TRUE(file.good()) << path;
  }
  void ProcSelfCgroup(const std::string& text) { Write("proc/self/cgroup", text); }
  // <root>/sys/fs/cgroup/<cgroup>/memory.max (cgroup v2).
  void MemoryMax(const std::string& cgroup, const std::string& text) {
    Write("sys/fs/cgroup/" + cgroup + "/memory.max", text);
  }
  // <root>/sys/fs/cgroup/memory/<cgroup>/memory.limit_in_bytes (cgroup v1).
  void LimitInBytes(const std::string& cgroup, const std::string& text) {
    Write("sys/fs/cgroup/memory/" + cgroup + "/memory.limit_in_bytes", text);
  }
  std::int64_t Capped(std::int64_t limit) const { return std::min(limit, physical_); }

  tessera::testing::TempDir temp_{"cgroup"};
  const std::filesystem::path& root_ = temp_.path();
  std::int64_t physical_ = 0;
};

TEST_F(CgroupTree, V2LimitOnTheProcessCgroup) {
  ProcSelfCgroup("0::/user.slice/job-7.scope\n");
  MemoryMax("", "max\n");
  MemoryMax("user.slice", "max\n");
  MemoryMax("user.slice/job-7.scope", "1073741824\n");
  MemoryMax("user.slice/other.scope", "4096\n");  // a sibling: not this process's
  EXPECT_EQ(detect_total_mem(root_), Capped(1073741824));
}

TEST_F(CgroupTree, V2LimitOnlyOnAnAncestor) {
  ProcSelfCgroup("0::/a/b/c\n");
  MemoryMax("a", "805306368\n");
  MemoryMax("a/b", "max\n");
  MemoryMax("a/b/c", "max\n");
  EXPECT_EQ(detect_total_mem(root_), Capped(805306368));
}

TEST_F(CgroupTree, V2SmallestLimitUpTheTreeWins) {
  ProcSelfCgroup("0::/a/b\n");
  MemoryMax("", "3221225472\n");
  MemoryMax("a", "536870912\n");
  MemoryMax("a/b", "2147483648\n");
  EXPECT_EQ(detect_total_mem(root_), Capped(536870912));
}

TEST_F(CgroupTree, V2MaxEverywhereIsPhysicalRam) {
  ProcSelfCgroup("0::/a/b\n");
  MemoryMax("a", "max\n");
  MemoryMax("a/b", "max\n");
  EXPECT_EQ(detect_total_mem(root_), physical_);
}

TEST_F(CgroupTree, V2LimitAbovePhysicalRamIsPhysicalRam) {
  ProcSelfCgroup("0::/a\n");
  MemoryMax("a", std::to_string(physical_ + 4096) + "\n");
  EXPECT_EQ(detect_total_mem(root_), physical_);
}

TEST_F(CgroupTree, V2PathOutsideTheNamespaceReadsTheRoot) {
  ProcSelfCgroup("0::/../../elsewhere\n");
  MemoryMax("", "268435456\n");
  MemoryMax("elsewhere", "4096\n");
  EXPECT_EQ(detect_total_mem(root_), Capped(268435456));
}

TEST_F(CgroupTree, V1MemoryControllerLimit) {
  ProcSelfCgroup(
      "12:cpu,cpuacct:/docker/abc\n11:memory:/docker/abc\n1:name=systemd:/docker/abc\n0::/\n");
  LimitInBytes("", "9223372036854771712\n");
  LimitInBytes("docker", "9223372036854771712\n");
  LimitInBytes("docker/abc", "536870912\n");
  EXPECT_EQ(detect_total_mem(root_), Capped(536870912));
}

TEST_F(CgroupTree, V1MemoryAmongSeveralControllersAndAncestorLimit) {
  ProcSelfCgroup("4:cpuset,memory:/a/b\n");
  LimitInBytes("a", "402653184\n");
  LimitInBytes("a/b", "9223372036854771712\n");
  EXPECT_EQ(detect_total_mem(root_), Capped(402653184));
}

TEST_F(CgroupTree, V1UnlimitedHugeValueIsPhysicalRam) {
  ProcSelfCgroup("4:memory:/process_api/job\n0::/\n");
  LimitInBytes("", "9223372036854771712\n");
  LimitInBytes("process_api", "9223372036854771712\n");
  LimitInBytes("process_api/job", "9223372036854771712\n");
  EXPECT_EQ(detect_total_mem(root_), physical_);
}

TEST_F(CgroupTree, V1ContainerWithoutItsCgroupPathReadsTheMountRoot) {
  // Without a cgroup namespace the container sees its host path in /proc/self/cgroup,
  // but its own cgroup mounted at /sys/fs/cgroup/memory.
  ProcSelfCgroup("9:memory:/docker/0123abcd\n");
  LimitInBytes("", "671088640\n");
  EXPECT_EQ(detect_total_mem(root_), Capped(671088640));
}

TEST_F(CgroupTree, NoCgroupFilesIsPhysicalRam) {
  EXPECT_EQ(detect_total_mem(root_), physical_);
  ProcSelfCgroup("0::/a\n");  // a cgroup, but no limit files anywhere
  EXPECT_EQ(detect_total_mem(root_), physical_);
}

TEST_F(CgroupTree, NoProcSelfCgroupReadsTheHierarchyRoots) {
  MemoryMax("", "1610612736\n");
  EXPECT_EQ(detect_total_mem(root_), Capped(1610612736));
}

TEST_F(CgroupTree, GarbageIsNoLimit) {
  ProcSelfCgroup("not a cgroup line\n::\n7\n0::/a/b\nx:memory:/v1\n");
  MemoryMax("", "lots\n");
  MemoryMax("a", "12abc\n");
  MemoryMax("a/b", "-4096\n");
  Write("sys/fs/cgroup/a/b/c/memory.max", "4096\n");  // not an ancestor
  LimitInBytes("", "0\n");
  LimitInBytes("v1", "1 2\n");
  EXPECT_EQ(detect_total_mem(root_), physical_);

  ProcSelfCgroup(std::string("\0\xff\n", 3));
  EXPECT_EQ(detect_total_mem(root_), physical_);
  MemoryMax("", "99999999999999999999999\n");  // overflows int64
  EXPECT_EQ(detect_total_mem(root_), physical_);
}

TEST_F(CgroupTree, UnreadableLimitIsNoLimit) {
  ProcSelfCgroup("0::/a\n");
  // A folder where the limit file should be: present but unreadable as a file.
  std::filesystem::create_directories(root_ / "sys/fs/cgroup/a/memory.max");
  EXPECT_EQ(detect_total_mem(root_), physical_);
}

}  // namespace
}  // namespace tessera
