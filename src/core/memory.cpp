// Available memory (machine and cgroup) and size arithmetic.
#include "core/memory.h"

#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/blas_threads.h"
#include "core/error.h"
#include "core/huge_page_allocator.h"

namespace attn {

namespace {

constexpr uint64_t kUnlimited = std::numeric_limits<uint64_t>::max();

bool file_text(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream s;
  s << f.rdbuf();
  *out = s.str();
  return true;
}

// The first whole number of a one-value cgroup file; "max" (v2) and v1's page-rounded
// LONG_MAX mean no limit.
bool cgroup_value(const std::string& path, uint64_t* value) {
  std::string text;
  if (!file_text(path, &text)) return false;
  if (text.rfind("max", 0) == 0) {
    *value = kUnlimited;
    return true;
  }
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str()) return false;
  *value = v >= (uint64_t{1} << 62) ? kUnlimited : v;
  return true;
}

// `key VALUE` in a memory.stat file, 0 if absent.
uint64_t cgroup_stat(const std::string& path, const std::string& key) {
  std::ifstream f(path);
  std::string name;
  unsigned long long value = 0;
  while (f >> name >> value)
    if (name == key) return value;
  return 0;
}

struct CgroupFiles {
  std::string limit, usage, inactive_key;
};

// For `dir` (the cgroup's directory under `base`) and each ancestor up to `base`: limit
// minus the memory in use that the kernel cannot simply drop. Where the cgroup's own path
// is not mounted (a container's cgroup namespace shows its cgroup as the mount's root),
// the walk reaches `base`, which is that cgroup.
void cgroup_walk(const std::string& base, std::string path, const CgroupFiles& files,
                 MemoryBudget* budget) {
  for (;;) {
    const std::string dir = base + path;
    uint64_t limit = kUnlimited;
    if (cgroup_value(dir + "/" + files.limit, &limit) && limit != kUnlimited) {
      uint64_t usage = 0;
      cgroup_value(dir + "/" + files.usage, &usage);
      const uint64_t inactive = cgroup_stat(dir + "/memory.stat", files.inactive_key);
      const uint64_t in_use = usage > inactive ? usage - inactive : 0;
      const uint64_t left = limit > in_use ? limit - in_use : 0;
      budget->cgroup_limit = std::min(budget->cgroup_limit, limit);
      if (left < budget->available) {
        budget->available = left;
        budget->cgroup_bound = true;
      }
    }
    if (path.empty() || path == "/") return;
    const size_t slash = path.find_last_of('/');
    path = slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
  }
}

uint64_t meminfo_available(const std::string& root) {
  std::FILE* f = std::fopen((root + "/proc/meminfo").c_str(), "r");
  if (f == nullptr) return kUnlimited;
  char line[256];
  uint64_t kib = 0;
  bool found = false;
  while (std::fgets(line, sizeof line, f)) {
    unsigned long long value = 0;
    if (std::sscanf(line, "MemAvailable: %llu kB", &value) == 1) {
      kib = value;
      found = true;
      break;
    }
  }
  std::fclose(f);
  return found ? kib * 1024 : kUnlimited;
}

}  // namespace

MemoryBudget memory_budget(const std::string& root) {
  MemoryBudget budget;
  budget.available = meminfo_available(root);
  // /proc/self/cgroup: "0::/path" (v2) and "ID:controller,...:/path" (v1).
  std::ifstream f(root + "/proc/self/cgroup");
  std::string line;
  const std::string mount = root + "/sys/fs/cgroup";
  while (std::getline(f, line)) {
    const size_t a = line.find(':');
    const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = "," + line.substr(a + 1, b - a - 1) + ",";
    const std::string path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers == ",,") {
      for (const char* base : {"", "/unified"})
        cgroup_walk(mount + base, path, {"memory.max", "memory.current", "inactive_file"}, &budget);
    } else if (controllers.find(",memory,") != std::string::npos) {
      cgroup_walk(mount + "/memory", path,
                  {"memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"},
                  &budget);
    }
  }
  return budget;
}

namespace {

int g_workers = 1;         // memory_workers_set
bool g_in_worker = false;  // memory_worker_enter

// This process's mapped address space (VmSize of /proc/self/status), 0 if unknown.
uint64_t address_in_use() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmSize:", 0) == 0) return std::strtoull(line.c_str() + 7, nullptr, 10) << 10;
  return 0;
}

// The machine's budget with the bytes malloc holds free for this process added (they are
// already this process's, and charged to its cgroup, so reusing them needs no new memory),
// bounded by this worker's share and the address-space limit.
MemoryBudget budget_of_this_process() {
  MemoryBudget budget = memory_budget();
  const uint64_t held = memory_malloc_free_bytes();
  const uint64_t limit = memory_address_limit();
  budget = memory_budget_bound(budget, g_in_worker ? g_workers : 1, limit,
                               limit == kUnlimited ? 0 : address_in_use());
  budget.available = budget.available > kUnlimited - held ? kUnlimited : budget.available + held;
  return budget;
}

}  // namespace

uint64_t memory_address_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return kUnlimited;
  return static_cast<uint64_t>(r.rlim_cur);
}

uint64_t memory_address_floor(int blas_threads) {
  const uint64_t extra = blas_threads > 2 ? static_cast<uint64_t>(blas_threads - 2) : 0;
  return kAddressSpaceFloor + extra * kAddressSpacePerBlasThread;
}

std::string memory_address_limit_problem(uint64_t limit, int blas_threads) {
  const uint64_t floor = memory_address_floor(blas_threads);
  if (limit >= floor) return "";
  std::string advice = "raise the limit";
  if (blas_threads > 1)
    advice += " or start the program with OPENBLAS_NUM_THREADS=1 (OpenBLAS loaded with " +
              std::to_string(blas_threads) + " threads)";
  return "the address-space limit of this process (ulimit -v, RLIMIT_AS; SGE h_vmem) is " +
         format_bytes(limit) + "; attnlab needs at least " + format_bytes(floor) +
         " (OpenBLAS alone reserves 128 MiB per thread): " + advice;
}

MemoryBudget memory_budget_bound(MemoryBudget machine, int workers, uint64_t limit,
                                 uint64_t in_use) {
  MemoryBudget b = machine;
  if (workers > 1) {
    b.workers = workers;
    b.available /= static_cast<uint64_t>(workers);
  }
  b.address_limit = limit;
  if (limit != kUnlimited) {
    const uint64_t left = limit > in_use ? limit - in_use : 0;
    if (left < b.available) {
      b.available = left;
      b.address_bound = true;
      b.cgroup_bound = false;
    }
  }
  return b;
}

void memory_workers_set(int workers) { g_workers = std::max(1, workers); }
void memory_worker_enter() { g_in_worker = true; }

std::string memory_bound_words(const MemoryBudget& budget) {
  std::string words;
  if (budget.address_bound)
    return " under this process's address-space limit of " + format_bytes(budget.address_limit) +
           " (ulimit -v, RLIMIT_AS; SGE h_vmem)";
  if (budget.cgroup_bound)
    words = " under this process's cgroup memory limit of " + format_bytes(budget.cgroup_limit) +
            " (Slurm --mem, a container)";
  if (budget.workers > 1)
    words +=
        " (this worker's share: 1/" + std::to_string(budget.workers) + ", one per parallel job)";
  return words;
}

uint64_t memory_available_bytes() { return budget_of_this_process().available; }

void memory_retain_freed() {
#ifdef __GLIBC__
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
#endif
}

uint64_t memory_malloc_free_bytes() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  return static_cast<uint64_t>(mallinfo2().fordblks);
#else
  return 0;
#endif
}

std::string format_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int u = 0;
  while (value >= 1024.0 && u < 6) {
    value /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", value, units[u]);
  return buf;
}

void memory_check(uint64_t bytes, const std::string& what, const std::string& hint,
                  const MemoryBudget& budget) {
  const double limit = 0.9 * static_cast<double>(budget.available);
  ATTN_CHECK(static_cast<double>(bytes) <= limit,
             what + " needs " + format_bytes(bytes) + " of memory but only " +
                 format_bytes(budget.available) + " is available" + memory_bound_words(budget) +
                 "; " + hint);
}

void memory_check(uint64_t bytes, const std::string& what, const std::string& hint) {
  memory_check(bytes, what, hint, budget_of_this_process());
}

void memory_advise_huge_pages(void* p, uint64_t bytes) {
  if (p == nullptr || bytes < 16 * kHugePageBytes) return;
#ifdef MADV_HUGEPAGE
  const uintptr_t begin = huge_page_align_up(reinterpret_cast<uintptr_t>(p));
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~uintptr_t{kHugePageBytes - 1};
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

bool checked_mul(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

}  // namespace attn
