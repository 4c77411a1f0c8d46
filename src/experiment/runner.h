// Sweep runner: executes run points in worker processes, K at a time, and stores each
// outcome as soon as it arrives.
//
// Each point runs in its own forked process (1 compute thread unless configured
// otherwise), so a crash, an abort or running out of memory costs that run only; the
// parent is the single writer of the results store. Workers die with the parent
// (PR_SET_PDEATHSIG), so killing the runner leaves no orphans and no partial results:
// the next invocation re-runs whatever was not stored.
#pragma once

#include <cstdint>
#include <vector>

#include "experiment/plan.h"
#include "experiment/run_point.h"
#include "experiment/store.h"

namespace attn {

struct SweepOptions {
  int jobs = 1;           // worker processes at once
  bool progress = true;   // progress on stderr (a bar on a terminal, timed lines in logs)
};

struct SweepSummary {
  int64_t ok = 0, failed = 0;
};

SweepSummary sweep_execute(const std::vector<const RunPoint*>& points, ResultsStore& store,
                           const SweepOptions& options);

// Runs one point in its own forked worker process, as sweep_execute does, and waits for
// it: the worker's outcome, or a failed outcome saying how the worker died. Used by the
// ranks of an MPI sweep (src/experiment/sweep_mpi.h).
RunOutcome run_point_isolated(const RunPoint& point);

}  // namespace attn
