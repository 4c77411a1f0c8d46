// MPI sweep: rank 0 hands the units of the sweep out to the other ranks one at a time, each
// to the next rank that is free (a slow unit holds up only its own rank), and is the only
// writer of the results store; the other ranks only compute. A unit is what one worker
// process of the local runner runs (run_units_make, run_groups.h): a run group of several
// points sharing their inputs, or a single point; with --no-groups (SweepOptions::groups
// false) every point is a unit of its own.
//
// Protocol (Comm messages between rank 0 and a worker rank):
//   kRun    rank 0 -> worker: an encoded point (point_codec.h). The worker runs it in a
//           forked process (run_point_isolated, as --jobs does) and answers kResult with
//           the encoded outcome; a run whose process crashes or is killed (e.g. by the
//           out-of-memory killer) comes back as a failed outcome and the worker goes on.
//   kGroup  rank 0 -> worker: a run group's points (run_request_encode: the JSON array of
//           encoded points, in execution order). The worker runs the group in one forked
//           process, as the local runner's group worker does (run_group_isolated,
//           run_worker.h), and answers one kResult per point, in that order, each as soon as
//           the process reports it; rank 0 stores each as it arrives. If the process crashes
//           or is killed, the worker answers for each point not reported yet with a failed
//           outcome saying how it died ("... (in a run group)"), as the local runner stores.
//   kResult worker -> rank 0: an encoded outcome of the next point of the worker's unit. An
//           outcome without a run id (the worker could not start the unit, e.g. a different
//           build refused the point) fails every point of the unit not answered yet with its
//           error. The worker is free once every point of its unit is answered.
//   kJoint  rank 0 -> every worker: an encoded train.distributed point, computed by all
//           ranks together in-process (run_distributed.h); rank 0 stores the outcome.
//           Distributed points are never grouped.
//   kStop   rank 0 -> every worker: return from sweep_mpi_serve.
// Joint points run first, while every worker is free; then the units are handed out.
// Results, run ids and the store are the same as a single-process sweep's: each run is
// computed by the same code from the same configuration, in the same groups. A worker rank
// that dies itself (not its unit's process) makes mpirun end the job: the runs stored until
// then are kept, including the finished runs of a group in flight, and the next invocation
// of the same command forms groups of the runs still missing and runs only those.
#pragma once

#include <string>
#include <vector>

#include "experiment/plan.h"
#include "experiment/runner.h"
#include "experiment/store.h"
#include "mpi/comm.h"

namespace attn {

// Rank 0: runs `points` on the other ranks (comm.size() >= 2), in run groups unless
// options.groups is false, and stores every outcome as it arrives.
SweepSummary sweep_mpi_coordinate(const std::vector<const RunPoint*>& points, ResultsStore& store,
                                  const Comm& comm, const SweepOptions& options);

// Rank 0, once the command is over (also when it failed before or during the sweep):
// tells every worker to stop. If a worker is still busy with a unit because rank 0 failed
// mid-sweep, ends the whole job instead (mpi_abort with `error`).
void sweep_mpi_finish(const Comm& comm, const std::string& error);

// Every rank but 0: serves kRun, kGroup and kJoint messages until kStop.
void sweep_mpi_serve(const Comm& comm);

}  // namespace attn
