// The one body of a run, for local, grouped and MPI runs: data, fit, predict, test metrics,
// Model::evaluate, the probes the configuration names (analysis/probes.h), train metrics.
// What differs between the paths is a RunSite:
//
//   comm   the ranks computing the run together: comm_self() for a local run and for a run of
//          a group; every rank of an MPI job for a train.distributed fit
//   joint  the fit is one ridge fit over comm (RidgeSolver::fit_distributed; the model must be
//          a RidgeModel); otherwise Model::fit in this process (comm must then be one rank)
//   share  a lockstep group's batches and party (experiment/lockstep_group.h); none elsewhere
//
// Rank r generates its block of the training samples (comm_block; one rank: all of them);
// rank 0 alone generates the test set (eval.first .. eval.first + eval.n − 1, with
// eval.instances and at eval.N; experiment/eval_length.h) and computes the test metrics,
// Model::evaluate and the probes; the train metrics come from each rank's predictions on its
// block, gathered on rank 0 (one rank: the training batch itself). Every phase's error is
// agreed on by all ranks (comm_phase), so it reaches each of them as a UserError with the same
// message; the outcome is filled on rank 0.
#pragma once

#include "experiment/plan.h"
#include "experiment/run_point.h"
#include "mpi/comm.h"

namespace attn {

struct RunSite {
  const Comm* comm = nullptr;
  bool joint = false;
  RunShare share;
};

// Adds the run's metrics and series to `out` (rank 0); throws on failure.
void run_body(const RunPoint& point, const RunSite& site, RunOutcome& out);

// Seconds on the clock a run is timed by: wall time, or (in a lockstep group, share.batches
// set) this thread's CPU time, since the group's runs take turns.
double run_clock(const RunShare& share);

}  // namespace attn
