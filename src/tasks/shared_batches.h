// Fresh training batches drawn once and served to several runs that train in lockstep.
//
// Runs that draw fresh samples from the same task, seed, batch size and first index (the
// runs of a lockstep group, experiment/lockstep_group.h) ask for the same batch at every
// step. Each asks through its party of a Turnstile: the request hands the turn to the next
// run and returns when this run's turn comes back, with samples first .. first+count−1 of
// the seed (task->sample_range into zeroed rows, exactly what a run draws alone). The batch
// is drawn by the first run that asks for it and reused by the others, so a group of k runs
// draws each batch once instead of k times. The parties' tasks must have one configuration
// (each run builds its own task object; the group's key guarantees it). Shapes: X (count, T, d_in),
// Y (count, T_out, d_out).
#pragma once

#include <cstdint>

#include "core/turnstile.h"
#include "tasks/batch.h"
#include "tasks/task.h"

namespace attn {

class SharedFreshBatches {
 public:
  // Owns a turnstile of `parties` parties (party 0 runs first).
  SharedFreshBatches(int parties);

  Turnstile& turnstile() { return turnstile_; }

  // Party k's batch of samples first .. first+count−1 of `seed` from `task`, after the other
  // parties' turns. The reference stays valid until party k asks again or leaves.
  const Batch& next(int k, const Task& task, uint64_t seed, int64_t first, int64_t count);

  int64_t batches_drawn() const { return drawn_; }
  int64_t batches_served() const { return served_; }

 private:
  Turnstile turnstile_;
  Batch batch_;
  uint64_t seed_ = 0;
  int64_t first_ = -1, count_ = 0;
  int64_t drawn_ = 0, served_ = 0;
};

}  // namespace attn
