// Compute threads: one per process by default, never oversubscribed with OpenBLAS.
//
// The machines attnlab targets are small and shared, so a process uses 1 compute thread
// unless told otherwise (--threads, or ATTNLAB_THREADS), and sweeps parallelise across
// processes. When attnlab runs its own threads, OpenBLAS is held at 1 thread; a BLAS-heavy
// section that runs on one attnlab thread may hand the budget to OpenBLAS with
// BlasThreadsScope. Results never depend on the thread count (work is split by sample
// index and every sample draws from its own counter-based stream).
#pragma once

#include <cstdint>
#include <functional>

namespace attn {

// The configured compute-thread budget (>= 1).
int threads_count();
// Set the budget: k >= 1, or 0 for ATTNLAB_THREADS from the environment (default 1).
// Also pins OpenBLAS to 1 thread. Returns the budget now in force.
int threads_configure(int k);

// Runs body(begin, end) over [begin, end) split into chunks of at most `grain` items, on
// up to threads_count() threads. Exceptions in any chunk are rethrown in the caller
// (the first one thrown). The split never affects results as long as body only writes
// the items of its own range.
void parallel_for(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& body);

// While alive, OpenBLAS may use the whole budget (call from one attnlab thread only).
class BlasThreadsScope {
 public:
  BlasThreadsScope();
  ~BlasThreadsScope();
  BlasThreadsScope(const BlasThreadsScope&) = delete;
  BlasThreadsScope& operator=(const BlasThreadsScope&) = delete;
};

}  // namespace attn
