// Memory checks: refuse sizes that would not fit before allocating them.
//
// What a process may allocate is the smaller of the machine's MemAvailable and what its
// cgroup (the limit Slurm, Docker or systemd set) still allows: for the process's cgroup
// and each ancestor with a limit (cgroup v2 memory.max, v1 memory.limit_in_bytes), the
// limit minus the memory in use there, not counting inactive page cache (which the kernel
// reclaims before it kills anything). A run worker shares the machine's and the cgroup's
// memory with the other workers its runner started (memory_workers_set): it may use its share.
// The process's address-space limit (RLIMIT_AS: ulimit -v, SGE's h_vmem) bounds it too: the
// limit minus the address space in use.
#pragma once

#include <cstdint>
#include <string>

namespace attn {

struct MemoryBudget {
  uint64_t available = UINT64_MAX;     // bytes this process may still allocate
  uint64_t cgroup_limit = UINT64_MAX;  // the tightest cgroup limit, UINT64_MAX if none
  bool cgroup_bound = false;           // the cgroup, not the machine, sets `available`
  int workers = 1;                     // workers sharing the machine's and cgroup's memory
  uint64_t address_limit = UINT64_MAX;  // RLIMIT_AS, UINT64_MAX if none
  bool address_bound = false;           // the address-space limit sets `available`
};

// The least address space (RLIMIT_AS) attnlab runs under with at most 2 OpenBLAS threads:
// OpenBLAS reserves a 128 MiB buffer per thread when it starts and, when that fails, retries
// forever (a hang, not an error); measured, `attnlab fit` hangs at 320 MiB and runs at
// 350 MiB. Each further OpenBLAS thread adds kAddressSpacePerBlasThread (core/blas_threads.h).
inline constexpr uint64_t kAddressSpaceFloor = uint64_t{512} << 20;

// This process's address-space limit (RLIMIT_AS's soft limit), UINT64_MAX if none.
uint64_t memory_address_limit();
// The least address space for a process whose OpenBLAS loaded with `blas_threads` threads.
uint64_t memory_address_floor(int blas_threads);
// "" or the one-line refusal when `limit` is below memory_address_floor(blas_threads), naming
// both (and, with more than one OpenBLAS thread, the advice OPENBLAS_NUM_THREADS=1). Front
// ends check it first (apps/main.cpp, the Python module), and leave at once without exit
// handlers: OpenBLAS's threads may already be stuck.
std::string memory_address_limit_problem(uint64_t limit, int blas_threads = 1);

// `machine` (memory_budget) for a process that is one of `workers` run workers (its share of
// the machine's and cgroup's memory) under address-space `limit` with `in_use` bytes of
// address space mapped: the smallest of them sets `available`.
MemoryBudget memory_budget_bound(MemoryBudget machine, int workers, uint64_t limit,
                                 uint64_t in_use);

// The number of run workers a runner starts at once (--jobs): each worker's memory checks use
// its share. Call before the workers are forked; they inherit it.
void memory_workers_set(int workers);
// Marks this process as one run worker (experiment/run_worker.cpp does): its checks use its
// share.
void memory_worker_enter();

// Reads ROOT/proc/meminfo, ROOT/proc/self/cgroup and the cgroup files below
// ROOT/sys/fs/cgroup (v2 there or in unified/, v1 in memory/). ROOT is "" for this
// machine; tests point it at a fake tree. Files that are missing or unreadable count as
// no limit.
MemoryBudget memory_budget(const std::string& root = "");

// memory_budget().available plus what malloc holds free for this process
// (memory_malloc_free_bytes), in bytes (or a very large number where unknown).
uint64_t memory_available_bytes();

// Keeps the memory this process frees for its own reuse instead of handing it back to the
// kernel: every allocation comes from malloc's heap (no mmap of its own for large blocks, which
// free() would unmap), and free() trims the heap's top only past 2 GiB free there (mallopt's
// largest threshold). A large buffer freed and allocated again
// (a ridge group's Grams, kernels and feature blocks, fit after fit) then reuses pages already
// faulted in; otherwise each new one costs a page fault and a zeroing by the kernel per page, on
// this VM about a quarter of a BRFA group's CPU (docs/performance.md, "E3 stage by stage").
// Contents never depend on it (a new block's contents are unspecified either way). For worker
// processes that live for one job (child_enter calls it); the memory checks count the retained
// bytes as available (memory_available_bytes and the machine's memory_check).
void memory_retain_freed();

// Bytes malloc holds free in this process's heaps (glibc's mallinfo2 fordblks; 0 elsewhere).
uint64_t memory_malloc_free_bytes();

// Throws UserError naming `what` if `bytes` exceeds 90% of the available memory (of
// `budget`; the first form reads this machine's). `hint` says how to shrink the request
// (e.g. lower the sample count, front_option(FrontOption::kN), or write in shards).
void memory_check(uint64_t bytes, const std::string& what, const std::string& hint);
// What memory_check says after "needs X of memory but only Y is available": why Y is the
// bound ("" when the machine's MemAvailable is).
std::string memory_bound_words(const MemoryBudget& budget);
void memory_check(uint64_t bytes, const std::string& what, const std::string& hint,
                  const MemoryBudget& budget);

// "1.5 GiB", "300 MiB", "12 KiB", "17 B".
std::string format_bytes(uint64_t bytes);

// Asks Linux to back the untouched buffer [p, p + bytes) with transparent huge pages (2 MiB;
// madvise MADV_HUGEPAGE, which THP's default "madvise" mode needs). Call it before the first
// write: that write then takes one page fault per 2 MiB instead of per 4 KiB (first touch of
// 891 MB on this VM, three alternated measurements: 2.9–3.1 s -> 1.2–1.9 s). Buffers below 32 MiB
// are left alone; a refusal by the kernel is ignored (the buffer works as before). Results do not
// change.
void memory_advise_huge_pages(void* p, uint64_t bytes);

// a * b * ... with overflow detection: returns false on overflow.
bool checked_mul(uint64_t a, uint64_t b, uint64_t* out);

}  // namespace attn
