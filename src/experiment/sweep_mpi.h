// MPI sweep: rank 0 hands run points out to the other ranks one at a time, each to the
// next rank that is free (a slow run holds up only its own rank), and is the only writer
// of the results store; the other ranks only compute.
//
// Protocol (Comm messages between rank 0 and a worker rank):
//   kRun    rank 0 -> worker: an encoded point (point_codec.h). The worker runs it in a
//           forked process (run_point_isolated, as --jobs does) and answers kResult with
//           the encoded outcome; a run whose process crashes or is killed (e.g. by the
//           out-of-memory killer) comes back as a failed outcome and the worker goes on.
//   kJoint  rank 0 -> every worker: an encoded train.distributed point, computed by all
//           ranks together in-process (run_distributed.h); rank 0 stores the outcome.
//   kStop   rank 0 -> every worker: return from sweep_mpi_serve.
// Joint points run first, while every worker is free; then the others are handed out.
// Results, run ids and the store are the same as a single-process sweep's: each run is
// computed by the same code from the same configuration. A worker rank that dies itself
// (not its run's process) makes mpirun end the job: the runs stored until then are kept,
// and the next invocation of the same command redoes the rest.
#pragma once

#include <string>
#include <vector>

#include "experiment/plan.h"
#include "experiment/runner.h"
#include "experiment/store.h"
#include "mpi/comm.h"

namespace attn {

// Rank 0: runs `points` on the other ranks (comm.size() >= 2) and stores every outcome.
SweepSummary sweep_mpi_coordinate(const std::vector<const RunPoint*>& points, ResultsStore& store,
                                  const Comm& comm, const SweepOptions& options);

// Rank 0, once the command is over (also when it failed before or during the sweep):
// tells every worker to stop. If a worker is still busy with a run because rank 0 failed
// mid-sweep, ends the whole job instead (mpi_abort with `error`).
void sweep_mpi_finish(const Comm& comm, const std::string& error);

// Every rank but 0: serves kRun and kJoint messages until kStop.
void sweep_mpi_serve(const Comm& comm);

}  // namespace attn
