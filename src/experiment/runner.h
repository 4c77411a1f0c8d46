// Sweep runner: executes run points in worker processes, K at a time, and stores each
// outcome as soon as it arrives.
//
// Each point, or run group (run_groups.h), runs in its own forked process (run_worker.h; 1
// compute thread unless configured otherwise), so a crash, an abort or running out of
// memory costs that run only (a group: its runs not finished yet); the parent is the
// single writer of the results store. The workers are forked by a fork
// server (experiment/fork_server.h) started before the plan is expanded, so starting a
// worker costs the same in a plan of 10^5 points as in one of 10. The server dies with the
// runner and the workers with the server (PR_SET_PDEATHSIG), so killing the runner leaves
// no orphans and no partial results: the next invocation re-runs whatever was not stored.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "experiment/fork_server.h"
#include "experiment/plan.h"
#include "experiment/run_point.h"
#include "experiment/store.h"

namespace attn {

struct SweepOptions {
  int jobs = 1;           // worker processes at once
  bool progress = true;   // progress on stderr (a bar on a terminal, timed lines in logs)
  // The fork server for the workers, from sweep_server_start() called before the big
  // allocations (null: sweep_execute starts one from the image it has then).
  ForkServer* server = nullptr;
  // Run groups (run_groups.h): the pending points sharing their inputs run in one worker,
  // one after another, reusing ridge work (train/ridge_share.h); false: one worker per point
  // (`attnlab run --no-groups`). Stored results equal to rounding either way.
  bool groups = true;
};

// Starts a fork server whose workers run the points sweep_execute sends. Call it from the
// thread that will run the sweep, early (its image is what every worker fork copies).
std::unique_ptr<ForkServer> sweep_server_start(int jobs);

struct SweepSummary {
  int64_t ok = 0, failed = 0;
  int64_t interrupted = 0;  // runs whose worker a signal stopped: not stored (RunOutcome)
  // Run groups of several points handed to one worker (run_groups.h), and their points.
  int64_t groups = 0, grouped = 0;
};

class Progress;

// Stores one run's outcome, counts it in `summary` and `progress`, and warns (one line,
// clearing the progress line) when it failed: what every sweep does with an outcome. An
// interrupted run (RunOutcome::interrupted) is counted and said, not stored.
void sweep_record(ResultsStore& store, SweepSummary& summary, Progress& progress,
                  const RunPoint& point, const RunOutcome& outcome);

SweepSummary sweep_execute(const std::vector<const RunPoint*>& points, ResultsStore& store,
                           const SweepOptions& options);

// Several sweeps sharing one pool of options.jobs workers (e.g. the experiments of
// `attnlab reproduce`): the units of parts[0] start first, then those of parts[1], ..., so
// no worker waits while a part ends. Each part's outcomes go to its store; its on_done (if
// set) runs once in this process, after free workers got their next units, as soon as the
// part's last outcome is stored (parts with no points: at once, in part order). If an
// on_done throws, no new unit starts; the running ones are stored (parts they finish get their
// on_done), then the first exception is rethrown.
// One progress line counts every part.
struct SweepPart {
  std::vector<const RunPoint*> points;
  ResultsStore* store = nullptr;
  std::function<void(const SweepSummary&)> on_done;
};
std::vector<SweepSummary> sweep_execute_parts(const std::vector<SweepPart>& parts,
                                              const SweepOptions& options);

}  // namespace attn
