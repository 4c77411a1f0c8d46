// One run point computed jointly by every rank of a Comm: a train.distributed ridge fit.
//
// Every rank calls run_point_execute_distributed with the same point; each runs the one run
// body (run_body.h) with a joint fit: rank r generates only its block of the training samples
// (comm_block), the ranks fit together (RidgeSolver::fit_distributed), rank 0 alone generates
// the test set and computes the test metrics, the λ path and the probes (eval.probes), and the
// train metrics come from every rank's predictions on its own block, gathered on rank 0. The
// outcome is meaningful on rank 0 only; its metrics are the same as run_point_execute's, equal to
// rounding. Errors fail the run on every rank alike; `setup_error` (non-empty) fails it from the
// start, e.g. when a rank could not decode the point. peak_rss_bytes is the largest peak resident
// size over the ranks (each rank's process-lifetime peak).
#pragma once

#include <string>

#include "experiment/plan.h"
#include "experiment/run_point.h"
#include "mpi/comm.h"

namespace attn {

RunOutcome run_point_execute_distributed(const RunPoint& point, const Comm& comm,
                                         const std::string& setup_error = "");

// True when the point asks for a distributed fit (train.distributed = true).
bool run_point_is_distributed(const RunPoint& point);

}  // namespace attn
