// Lockstep groups: the runs of a group (run_groups.h) trained side by side in one process.
//
// Each run keeps its own thread, network, optimiser state, validation set, stopping and
// learning curve; the threads take turns (core/turnstile.h) at every training step, in the
// group's order, so the fresh batch of a step is drawn once and served to every run
// (tasks/shared_batches.h). One thread computes at any time: the group uses one core, as one
// run does, and each run's arithmetic is exactly what it does alone, so its stored results
// equal the run-by-run path's bit for bit (only fit_seconds and wall_seconds differ: in a
// group they are the run's own thread CPU time). A run that stops early, diverges or fails
// leaves the turn order; the others go on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "experiment/plan.h"
#include "experiment/run_point.h"

namespace attn {

struct LockstepStats {
  int64_t batches_drawn = 0, batches_served = 0;
};

// Runs `points` in lockstep. done(k, outcome) is called once per point, in point order 0, 1,
// … (an outcome that is ready early waits for the earlier ones), one call at a time.
LockstepStats lockstep_group_run(const std::vector<RunPoint>& points,
                                 const std::function<void(size_t, RunOutcome&&)>& done);

}  // namespace attn
