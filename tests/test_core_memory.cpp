// core/memory.h: size arithmetic, byte formatting, the memory check with the cgroup limits
// (on fake /proc and /sys/fs/cgroup trees), and the huge-page hint (which must never change
// what a buffer holds).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "cli_helpers.h"

#include "core/blas_threads.h"
#include "core/error.h"
#include "core/memory.h"

namespace attn {
namespace {

TEST(CoreMemory, FormatBytes) {
  EXPECT_EQ(format_bytes(17), "17 B");
  EXPECT_EQ(format_bytes(12 * 1024), "12.0 KiB");
  EXPECT_EQ(format_bytes(3ull << 29), "1.5 GiB");
}

TEST(CoreMemory, CheckedMulDetectsOverflow) {
  uint64_t out = 0;
  EXPECT_TRUE(checked_mul(1ull << 31, 1ull << 31, &out));
  EXPECT_EQ(out, 1ull << 62);
  EXPECT_FALSE(checked_mul(1ull << 32, 1ull << 32, &out));
}

TEST(CoreMemory, CheckRefusesMoreThanIsAvailableNamingWhatAndHow) {
  EXPECT_NO_THROW(memory_check(1024, "a small buffer", "n/a"));
  try {
    memory_check(~uint64_t{0} / 2, "a huge buffer", "lower the size");
    ADD_FAILURE() << "accepted";
  } catch (const UserError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("a huge buffer"), std::string::npos) << m;
    EXPECT_NE(m.find("lower the size"), std::string::npos) << m;
  }
}

// A fake root: ROOT/proc/meminfo (20 GiB available), ROOT/proc/self/cgroup, and the cgroup
// files written by the test.
class CgroupTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("attnlab_cgroup_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    put("proc/meminfo", "MemTotal:       33554432 kB\nMemAvailable:   20971520 kB\n");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void put(const std::string& rel, const std::string& text) {
    const auto p = root_ / rel;
    std::filesystem::create_directories(p.parent_path());
    test::file_write(p.string(), text);
  }
  MemoryBudget budget() const { return memory_budget(root_.string()); }
  std::filesystem::path root_;
};

constexpr uint64_t kMiB = uint64_t{1} << 20, kGiB = uint64_t{1} << 30;

TEST_F(CgroupTree, NoCgroupFilesMeansTheMachine) {
  const MemoryBudget b = budget();
  EXPECT_EQ(b.available, 20 * kGiB);
  EXPECT_FALSE(b.cgroup_bound);
  EXPECT_EQ(b.cgroup_limit, UINT64_MAX);
}

// cgroup v2 (Slurm's job/step layout): the job's memory.max binds, the step has none; memory
// in use minus inactive page cache is subtracted.
TEST_F(CgroupTree, V2LimitOfTheCgroupOrAnAncestor) {
  put("proc/self/cgroup", "0::/system.slice/slurmstepd.scope/job_7/step_0\n");
  const std::string job = "sys/fs/cgroup/system.slice/slurmstepd.scope/job_7";
  put(job + "/memory.max", std::to_string(kGiB) + "\n");
  put(job + "/memory.current", std::to_string(512 * kMiB) + "\n");
  put(job + "/memory.stat",
      "anon 100\nfile 300\ninactive_file " + std::to_string(128 * kMiB) + "\nactive_file 5\n");
  put(job + "/step_0/memory.max", "max\n");
  put(job + "/step_0/memory.current", "4096\n");
  const MemoryBudget b = budget();
  EXPECT_EQ(b.available, kGiB - 384 * kMiB);
  EXPECT_EQ(b.cgroup_limit, kGiB);
  EXPECT_TRUE(b.cgroup_bound);
}

// A container's cgroup namespace: /proc/self/cgroup says "/", the limit is at the mount's root.
TEST_F(CgroupTree, V2ContainerRoot) {
  put("proc/self/cgroup", "0::/\n");
  put("sys/fs/cgroup/memory.max", std::to_string(256 * kMiB) + "\n");
  put("sys/fs/cgroup/memory.current", "0\n");
  EXPECT_EQ(budget().available, 256 * kMiB);
}

// cgroup v1 (hybrid hierarchy, as on this machine): memory.limit_in_bytes of the memory
// controller's cgroup; its "unlimited" (page-rounded LONG_MAX) is no limit.
TEST_F(CgroupTree, V1LimitAndV1Unlimited) {
  put("proc/self/cgroup", "9:name=systemd:/\n4:cpuacct,memory:/slurm/uid_0/job_5\n1:cpu:/\n0::/\n");
  const std::string job = "sys/fs/cgroup/memory/slurm/uid_0/job_5";
  put(job + "/memory.limit_in_bytes", std::to_string(2 * kGiB) + "\n");
  put(job + "/memory.usage_in_bytes", std::to_string(kGiB) + "\n");
  put(job + "/memory.stat",
      "cache 10\ninactive_file 999999\ntotal_inactive_file " + std::to_string(256 * kMiB) + "\n");
  put("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  const MemoryBudget b = budget();
  EXPECT_EQ(b.available, kGiB + 256 * kMiB);
  EXPECT_TRUE(b.cgroup_bound);
  put(job + "/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(budget().available, 20 * kGiB);
  EXPECT_FALSE(budget().cgroup_bound);
}

// A limit above what the machine has free does not raise the budget.
TEST_F(CgroupTree, TheSmallerOfMachineAndCgroup) {
  put("proc/self/cgroup", "0::/big\n");
  put("sys/fs/cgroup/big/memory.max", std::to_string(64 * kGiB) + "\n");
  EXPECT_EQ(budget().available, 20 * kGiB);
  EXPECT_FALSE(budget().cgroup_bound);
  EXPECT_EQ(budget().cgroup_limit, 64 * kGiB);
}

TEST_F(CgroupTree, CheckNamesTheCgroupLimit) {
  put("proc/self/cgroup", "0::/job\n");
  put("sys/fs/cgroup/job/memory.max", std::to_string(kGiB) + "\n");
  const MemoryBudget b = budget();
  EXPECT_NO_THROW(memory_check(512 * kMiB, "a buffer", "lower --n", b));
  try {
    memory_check(2 * kGiB, "a buffer", "lower --n", b);
    ADD_FAILURE() << "accepted";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(),
                 "a buffer needs 2.0 GiB of memory but only 1.0 GiB is available under this "
                 "process's cgroup memory limit of 1.0 GiB (Slurm --mem, a container); lower --n");
  }
}

// A run worker checks against its share of the machine's and cgroup's memory, and the
// address-space limit (RLIMIT_AS) bounds a process like a cgroup (issue #34, item 2).
TEST_F(CgroupTree, WorkersShareTheBudgetAndTheAddressLimitBoundsIt) {
  put("proc/self/cgroup", "0::/job\n");
  put("sys/fs/cgroup/job/memory.max", std::to_string(kGiB) + "\n");
  const MemoryBudget machine = budget();
  const MemoryBudget none = memory_budget_bound(machine, 1, UINT64_MAX, 0);
  EXPECT_EQ(none.available, machine.available);
  EXPECT_FALSE(none.address_bound);
  const MemoryBudget half = memory_budget_bound(machine, 2, UINT64_MAX, 0);
  EXPECT_EQ(half.available, kGiB / 2);
  EXPECT_TRUE(half.cgroup_bound);
  try {
    memory_check(600 * kMiB, "a buffer", "lower --n", half);
    ADD_FAILURE() << "a worker was given the whole cgroup";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(),
                 "a buffer needs 600.0 MiB of memory but only 512.0 MiB is available under this "
                 "process's cgroup memory limit of 1.0 GiB (Slurm --mem, a container) (this "
                 "worker's share: 1/2, one per parallel job); lower --n");
  }
  // 700 MiB of address space, 300 MiB of it mapped: 400 MiB left, tighter than the cgroup.
  const MemoryBudget as = memory_budget_bound(machine, 1, 700 * kMiB, 300 * kMiB);
  EXPECT_EQ(as.available, 400 * kMiB);
  EXPECT_TRUE(as.address_bound);
  EXPECT_FALSE(as.cgroup_bound);
  try {
    memory_check(500 * kMiB, "a kernel", "lower train.n", as);
    ADD_FAILURE() << "the address-space limit was not applied";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(),
                 "a kernel needs 500.0 MiB of memory but only 400.0 MiB is available under this "
                 "process's address-space limit of 700.0 MiB (ulimit -v, RLIMIT_AS; SGE h_vmem); "
                 "lower train.n");
  }
  // Mapped beyond the limit: nothing left, never a wrapped-around huge number.
  EXPECT_EQ(memory_budget_bound(machine, 1, 100 * kMiB, 300 * kMiB).available, 0u);
}

TEST(CoreMemory, AnAddressLimitBelowTheFloorIsRefusedNamingIt) {
  EXPECT_EQ(memory_address_limit_problem(UINT64_MAX), "");
  EXPECT_EQ(memory_address_limit_problem(kAddressSpaceFloor), "");
  EXPECT_EQ(memory_address_limit_problem(300 * kMiB),
            "the address-space limit of this process (ulimit -v, RLIMIT_AS; SGE h_vmem) is "
            "300.0 MiB; attnlab needs at least 512.0 MiB (OpenBLAS alone reserves 128 MiB per "
            "thread): raise the limit");
}

// Every OpenBLAS thread beyond two raises the floor by kAddressSpacePerBlasThread, and the
// refusal then advises OPENBLAS_NUM_THREADS=1 (a library loaded on a many-core machine).
TEST(CoreMemory, TheFloorCountsTheOpenBlasThreadsBeyondTwo) {
  EXPECT_EQ(memory_address_floor(1), kAddressSpaceFloor);
  EXPECT_EQ(memory_address_floor(2), kAddressSpaceFloor);
  EXPECT_EQ(memory_address_floor(4), kAddressSpaceFloor + 2 * kAddressSpacePerBlasThread);
  EXPECT_EQ(memory_address_limit_problem(600 * kMiB, 2), "");
  EXPECT_EQ(memory_address_limit_problem(600 * kMiB, 4),
            "the address-space limit of this process (ulimit -v, RLIMIT_AS; SGE h_vmem) is "
            "600.0 MiB; attnlab needs at least 832.0 MiB (OpenBLAS alone reserves 128 MiB per "
            "thread): raise the limit or start the program with OPENBLAS_NUM_THREADS=1 "
            "(OpenBLAS loaded with 4 threads)");
}

// The command line under `ulimit -v` of 100 and 300 MiB: one line naming the limit, exit 2,
// at once (the previous release spun forever in OpenBLAS at these sizes, even after a usage
// error); at 1 GiB it runs.
TEST(CoreMemory, TheCommandLineUnderASmallAddressLimitSaysSoAndDoesNotHang) {
  // (Left out of the ASan preset by its label no_asan: tests/sanitizer/asan_tests.cmake.)
  for (const int mib : {100, 300}) {
    const auto r = test::shell("ulimit -v " + std::to_string(mib * 1024) + " && timeout 20 " +
                               std::string(test_cli_path()) + " list tasks 2>&1");
    EXPECT_EQ(r.exit_code, 2) << mib << " MiB: " << r.out;
    EXPECT_EQ(r.out,
              "attnlab: error: the address-space limit of this process (ulimit -v, "
              "RLIMIT_AS; SGE h_vmem) is " +
                  std::to_string(mib) +
                  ".0 MiB; attnlab needs at least 512.0 MiB (OpenBLAS alone reserves "
                  "128 MiB per thread): raise the limit\n");
  }
  const auto ok = test::shell("ulimit -v " + std::to_string(1024 * 1024) + " && timeout 20 " +
                              std::string(test_cli_path()) + " list tasks > /dev/null 2>&1");
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
}

TEST(CoreMemory, HugePageHintKeepsContentsAndAcceptsAnyRange) {
  // 40 MiB of doubles from std::vector (not 2 MiB aligned): hint before and after writing,
  // on an unaligned interior range, a small range and a null pointer.
  std::vector<double> v(5 << 20);
  memory_advise_huge_pages(v.data(), v.size() * sizeof(double));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i) * 0.5;
  memory_advise_huge_pages(v.data() + 3, (v.size() - 7) * sizeof(double));
  memory_advise_huge_pages(v.data(), 4096);
  memory_advise_huge_pages(nullptr, 1 << 30);
  for (size_t i = 0; i < v.size(); i += 4099) ASSERT_EQ(v[i], static_cast<double>(i) * 0.5) << i;
  EXPECT_EQ(v.back(), static_cast<double>(v.size() - 1) * 0.5);
}

}  // namespace
}  // namespace attn

// In a forked child (the settings last for a process): allocates, touches and frees a 256 MiB
// block, then reports whether malloc still holds it free for reuse and whether
// memory_available_bytes counts it (on top of the machine's budget, read just before; 128 MiB of
// slack for other processes' allocations in between).
namespace {
bool freed_block_is_held_and_counted(bool retain) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (retain) attn::memory_retain_freed();
    constexpr size_t kBytes = size_t{256} << 20;
    const uint64_t before = attn::memory_malloc_free_bytes();
    char* p = static_cast<char*>(std::malloc(kBytes));
    if (p == nullptr) _exit(2);
    std::memset(p, 1, kBytes);
    std::free(p);
    const bool held = attn::memory_malloc_free_bytes() >= before + kBytes;
    const uint64_t machine = attn::memory_budget().available;
    const bool counted = attn::memory_available_bytes() >= machine + kBytes / 2;
    _exit(held && counted ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
}  // namespace

TEST(CoreMemory, RetainedFreedMemoryStaysWithTheProcessAndCountsAsAvailable) {
#if defined(__SANITIZE_ADDRESS__) || !defined(__GLIBC__)
  GTEST_SKIP() << "glibc's malloc is not the allocator here (sanitizer build or another libc)";
#else
  // glibc's default maps a block this large on its own and unmaps it on free: nothing held.
  EXPECT_FALSE(freed_block_is_held_and_counted(false));
  EXPECT_TRUE(freed_block_is_held_and_counted(true));
#endif
}
