// Compute threads: one per process by default, never oversubscribed with OpenBLAS.
//
// The machines attnlab targets are small and shared, so a process uses 1 compute thread
// unless told otherwise (--threads, or ATTNLAB_THREADS), and sweeps parallelise across
// processes. When attnlab runs its own threads, OpenBLAS is held at 1 thread; a BLAS-heavy
// section that runs on one attnlab thread may hand the budget to OpenBLAS with
// BlasThreadsScope. Results never depend on the thread count: work is split by sample
// index into pieces that do not depend on it, every sample draws from its own counter-based
// stream, and sums over pieces are taken in piece order (parallel_ordered).
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

// The number of workers parallel work on `items` items uses: min(threads_count(), items), >= 1.
int parallel_workers(int64_t items);

// Runs work(worker, item) for every item in [0, items) on `workers` workers (worker 0 is the
// calling thread; each worker runs its items one after another), and right after an item's
// work, on the same worker, reduce(worker, item) - the reduces in item order 0, 1, 2, ...
// (reduce(w, c) starts after reduce(·, c − 1) has returned), so reduce may add an item's
// partial result into one total without locks and the total's rounding does not depend on
// the worker count. Exceptions as in parallel_for (the remaining items are skipped).
void parallel_ordered(int64_t items, int workers, const std::function<void(int, int64_t)>& work,
                      const std::function<void(int, int64_t)>& reduce);

// While alive, OpenBLAS may use the whole budget (call from one attnlab thread only).
class BlasThreadsScope {
 public:
  BlasThreadsScope();
  ~BlasThreadsScope();
  BlasThreadsScope(const BlasThreadsScope&) = delete;
  BlasThreadsScope& operator=(const BlasThreadsScope&) = delete;
};

}  // namespace attn
