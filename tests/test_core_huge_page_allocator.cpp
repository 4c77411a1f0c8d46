// core/huge_page_allocator.h: large blocks fresh mappings, 2 MiB aligned and advised to transparent
// huge pages (the advice visible as the "hg" flag of the mapping in /proc/self/smaps where the
// kernel has THP), unmapped when freed; small ones from operator new; vectors on it hold what they
// are given.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/huge_page_allocator.h"
#include "core/memory.h"

namespace attn {
namespace {

// The VmFlags line of the mapping in /proc/self/smaps that holds address p ("" if none).
std::string vm_flags_of(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= a && a < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

bool kernel_has_thp() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  return std::getline(f, modes) && modes.find("[never]") == std::string::npos;
}

TEST(HugePageAllocator, LargeBlocksAreAlignedAdvisedAndHoldTheirValues) {
  // 3 MiB + 4 bytes of floats: rounded up to two huge pages.
  std::vector<float, HugePageAllocator<float>> v((3 << 18) + 1);
  ASSERT_EQ(reinterpret_cast<uintptr_t>(v.data()) % kHugePageBytes, 0u);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 1000) * 0.25f;
  for (size_t i = 0; i < v.size(); i += 997) ASSERT_EQ(v[i], static_cast<float>(i % 1000) * 0.25f);
  const std::string flags = vm_flags_of(v.data());
  if (kernel_has_thp() && !flags.empty()) {  // empty: a kernel whose smaps has no VmFlags
    EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
  }
}

// In a forked child whose malloc keeps what is freed for reuse (memory_retain_freed, as in worker
// processes: every block from its heap): three times, a large block is asked for, checked to read
// as zeros, written and freed. Returns the child's exit code: 0 when every block was fresh memory
// (a block from the heap would come back with the bytes written before), unmapped once freed.
int fresh_blocks_in_a_retaining_process() {
  const pid_t pid = fork();
  if (pid == 0) {
    memory_retain_freed();
    HugePageAllocator<unsigned char> a;
    constexpr size_t n = size_t{5} << 20;
    for (int round = 0; round < 3; ++round) {
      unsigned char* p = a.allocate(n);
      if (reinterpret_cast<uintptr_t>(p) % kHugePageBytes != 0) _exit(2);
      for (size_t i = 0; i < n; i += 4096)
        if (p[i] != 0) _exit(3);
      std::memset(p, 0xab, n);
      a.deallocate(p, n);
      if (vm_flags_of(p + n / 2).find(" hg") != std::string::npos) _exit(4);  // still mapped
    }
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(HugePageAllocator, EveryLargeBlockIsAFreshMappingAndFreeingUnmapsIt) {
  // 2: not aligned; 3: a block held old bytes; 4: a freed block still mapped with the advice.
  EXPECT_EQ(fresh_blocks_in_a_retaining_process(), 0);
}

TEST(HugePageAllocator, SmallBlocksAreOrdinaryAllocations) {
  std::vector<double, HugePageAllocator<double>> v(1000, 1.5);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data()) % alignof(double), 0u);
  EXPECT_EQ(v[999], 1.5);
  if (kernel_has_thp()) {
    EXPECT_EQ(vm_flags_of(v.data()).find(" hg"), std::string::npos);
  }
}

TEST(HugePageAllocator, GrowingAcrossTheThresholdKeepsTheContents) {
  std::vector<float, HugePageAllocator<float>> v;
  for (int i = 0; i < (1 << 20); ++i) v.push_back(static_cast<float>(i));  // 4 MiB at the end
  ASSERT_EQ(reinterpret_cast<uintptr_t>(v.data()) % kHugePageBytes, 0u);
  for (int i = 0; i < (1 << 20); i += 4093) ASSERT_EQ(v[i], static_cast<float>(i)) << i;
  v.assign(10, 2.0f);
  v.shrink_to_fit();
  EXPECT_EQ(v.size(), 10u);
  EXPECT_EQ(v[9], 2.0f);
}

TEST(HugePageAllocator, ImpossibleSizesThrowBadAlloc) {
  HugePageAllocator<double> a;
  // The block is used (a volatile store), so the compiler cannot drop the allocation.
  static double* volatile sink = nullptr;
  auto try_allocate = [&](size_t n) {
    double* p = a.allocate(n);
    sink = p;
    a.deallocate(p, n);
  };
  EXPECT_THROW(try_allocate(static_cast<size_t>(-1) / 8 - 1), std::bad_alloc);  // no rounding up
  EXPECT_THROW(try_allocate(static_cast<size_t>(-1) / 4), std::bad_alloc);      // bytes overflow
  EXPECT_THROW(try_allocate(size_t{1} << 56), std::bad_alloc);                  // 512 PiB
  (void)sink;
}

}  // namespace
}  // namespace attn
