// The MPI sweep's coordinator (rank 0) and workers (the other ranks).
#include "experiment/sweep_mpi.h"

#include <cstdio>
#include <deque>
#include <map>

#include "core/error.h"
#include "core/progress.h"
#include "experiment/point_codec.h"
#include "experiment/run_distributed.h"
#include "experiment/run_worker.h"
#include "mpi/mpi_session.h"

namespace attn {
namespace {

enum Tag { kRun = 1, kResult = 2, kJoint = 3, kStop = 4 };

// Workers holding a run of rank 0's current sweep.
int g_busy_workers = 0;

}  // namespace

SweepSummary sweep_mpi_coordinate(const std::vector<const RunPoint*>& points, ResultsStore& store,
                                  const Comm& comm, const SweepOptions& options) {
  ATTN_ASSERT(comm.is_root() && comm.size() >= 2, "the MPI sweep needs rank 0 and a worker");
  SweepSummary summary;
  Progress progress("runs", static_cast<int64_t>(points.size()), options.progress);
  auto record = [&](const RunPoint& p, const RunOutcome& outcome) {
    sweep_record(store, summary, progress, p, outcome);
  };

  std::vector<const RunPoint*> solo;
  for (const RunPoint* p : points) {
    if (!run_point_is_distributed(*p)) {
      solo.push_back(p);
      continue;
    }
    const std::string message = run_point_encode(*p);
    for (int w = 1; w < comm.size(); ++w) comm.send(w, kJoint, message);
    record(*p, run_point_execute_distributed(*p, comm));
  }

  std::deque<int> free_workers;
  for (int w = 1; w < comm.size(); ++w) free_workers.push_back(w);
  std::map<int, const RunPoint*> busy;
  size_t next = 0;
  while (next < solo.size() || !busy.empty()) {
    while (next < solo.size() && !free_workers.empty()) {
      const int w = free_workers.front();
      free_workers.pop_front();
      comm.send(w, kRun, run_point_encode(*solo[next]));
      busy[w] = solo[next++];
      g_busy_workers = static_cast<int>(busy.size());
    }
    const CommMessage m = comm.receive(-1);
    ATTN_ASSERT(m.tag == kResult && busy.count(m.source), "unexpected message from a worker");
    const RunPoint& p = *busy.at(m.source);
    busy.erase(m.source);
    g_busy_workers = static_cast<int>(busy.size());
    free_workers.push_back(m.source);
    RunOutcome outcome = run_outcome_decode(m.bytes);
    if (outcome.run_id.empty()) outcome.run_id = p.run_id;
    ATTN_ASSERT(outcome.run_id == p.run_id, "a worker answered for another run");
    record(p, outcome);
  }
  progress.finish();
  return summary;
}

void sweep_mpi_finish(const Comm& comm, const std::string& error) {
  if (g_busy_workers > 0) mpi_abort(error.empty() ? "the MPI sweep stopped with runs in flight" : error);
  for (int w = 1; w < comm.size(); ++w) comm.send(w, kStop, "");
}

void sweep_mpi_serve(const Comm& comm) {
  for (;;) {
    const CommMessage m = comm.receive(0);
    if (m.tag == kStop) return;
    if (m.tag == kRun) {
      RunOutcome outcome;
      try {
        outcome = run_point_isolated(run_point_decode(m.bytes));
      } catch (const std::exception& e) {
        outcome.error = std::string("rank ") + std::to_string(comm.rank()) + ": " + e.what();
      }
      comm.send(0, kResult, run_outcome_encode(outcome));
      continue;
    }
    ATTN_ASSERT(m.tag == kJoint, "unexpected message from rank 0");
    RunPoint point;
    std::string error;
    try {
      point = run_point_decode(m.bytes);
    } catch (const std::exception& e) {
      error = std::string("rank ") + std::to_string(comm.rank()) + ": " + e.what();
    }
    run_point_execute_distributed(point, comm, error);
  }
}

}  // namespace attn
