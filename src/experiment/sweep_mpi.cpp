// The MPI sweep's coordinator (rank 0) and workers (the other ranks).
#include "experiment/sweep_mpi.h"

#include <cstdio>
#include <deque>
#include <map>

#include "core/error.h"
#include "core/progress.h"
#include "experiment/point_codec.h"
#include "experiment/run_distributed.h"
#include "experiment/run_groups.h"
#include "experiment/run_worker.h"
#include "mpi/mpi_session.h"

namespace attn {
namespace {

enum Tag { kRun = 1, kResult = 2, kJoint = 3, kStop = 4, kGroup = 5 };

// Workers holding a run or group of rank 0's current sweep.
int g_busy_workers = 0;

// What a worker rank holds: its unit's points and how many of them it has answered.
struct Held {
  std::vector<const RunPoint*> unit;
  size_t answered = 0;
};

// A worker rank that cannot start a unit answers once, with a failed outcome without a run id.
std::string worker_error(const Comm& comm, const std::exception& e) {
  RunOutcome outcome;
  outcome.error = std::string("rank ") + std::to_string(comm.rank()) + ": " + e.what();
  return run_outcome_encode(outcome);
}

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

  // A group (run_groups.h) goes to one worker rank whole, which answers each of its points.
  std::deque<int> free_workers;
  for (int w = 1; w < comm.size(); ++w) free_workers.push_back(w);
  const std::vector<std::vector<const RunPoint*>> units = run_units_make(solo, options.groups);
  std::map<int, Held> busy;
  size_t next = 0;
  while (next < units.size() || !busy.empty()) {
    while (next < units.size() && !free_workers.empty()) {
      const int w = free_workers.front();
      free_workers.pop_front();
      const auto& unit = units[next++];
      if (unit.size() == 1) {
        comm.send(w, kRun, run_point_encode(*unit.front()));
      } else {
        comm.send(w, kGroup, run_request_encode(unit));
        ++summary.groups;
        summary.grouped += static_cast<int64_t>(unit.size());
      }
      busy[w] = Held{unit, 0};
      g_busy_workers = static_cast<int>(busy.size());
    }
    const CommMessage m = comm.receive(-1);
    ATTN_ASSERT(m.tag == kResult && busy.count(m.source), "unexpected message from a worker");
    Held& held = busy.at(m.source);
    const RunOutcome outcome = run_outcome_decode(m.bytes);
    if (outcome.run_id.empty()) {
      // The rank could not start the unit: each point it has not answered fails with its error.
      for (; held.answered < held.unit.size(); ++held.answered) {
        RunOutcome failed = outcome;
        failed.run_id = held.unit[held.answered]->run_id;
        record(*held.unit[held.answered], failed);
      }
    } else {
      const RunPoint& p = *held.unit.at(held.answered++);
      ATTN_ASSERT(outcome.run_id == p.run_id, "a worker answered for another run");
      record(p, outcome);
    }
    if (held.answered == held.unit.size()) {
      busy.erase(m.source);
      g_busy_workers = static_cast<int>(busy.size());
      free_workers.push_back(m.source);
    }
  }
  progress.finish();
  return summary;
}

void sweep_mpi_finish(const Comm& comm, const std::string& error) {
  if (g_busy_workers > 0)
    mpi_abort(error.empty() ? "the MPI sweep stopped with runs in flight" : error);
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
        comm.send(0, kResult, worker_error(comm, e));
        continue;
      }
      comm.send(0, kResult, run_outcome_encode(outcome));
      continue;
    }
    if (m.tag == kGroup) {
      // Each outcome goes back as soon as the group's process reports it.
      try {
        run_group_isolated(run_request_decode(m.bytes), [&](const RunPoint&, RunOutcome&& outcome) {
          comm.send(0, kResult, run_outcome_encode(outcome));
        });
      } catch (const std::exception& e) {
        comm.send(0, kResult, worker_error(comm, e));
      }
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
