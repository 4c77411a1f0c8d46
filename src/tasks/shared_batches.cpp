// SharedFreshBatches (see shared_batches.h).
#include "tasks/shared_batches.h"

#include <algorithm>

namespace attn {

SharedFreshBatches::SharedFreshBatches(int parties) : turnstile_(parties) {}

const Batch& SharedFreshBatches::next(int k, const Task& task, uint64_t seed, int64_t first,
                                      int64_t count) {
  turnstile_.pass_and_wait(k);
  // Only the party whose turn it is runs, so the cached batch needs no lock. A request for
  // other samples (or seed) than the cached ones draws them anew.
  if (seed_ != seed || first_ != first || count_ != count) {
    if (count_ != count) batch_ = batch_alloc(task.shape(), count);
    std::fill(batch_.X.begin(), batch_.X.end(), 0.0);
    std::fill(batch_.Y.begin(), batch_.Y.end(), 0.0);
    task.sample_range(seed, first, count, batch_, 0);
    seed_ = seed;
    first_ = first;
    count_ = count;
    ++drawn_;
  }
  ++served_;
  return batch_;
}

}  // namespace attn
