// Run workers: the forked processes that compute run points, for the local runner (runner.cpp,
// forked by its fork server) and for the worker ranks of an MPI sweep (sweep_mpi.cpp, forked
// directly: a rank holds no plan).
//
// A worker computes one point or one run group (run_groups.h): a ridge group one after
// another sharing ridge work (train/ridge_share.h), a lockstep group side by side
// (lockstep_group.h). It sends its warning lines and each outcome, in point order, as soon as
// that outcome is known, as frames over its pipe (core/child_frames.h), so the parent can
// store each one as it arrives. A group's outcomes carry the worker's peak memory so far.
// When a worker dies, its point fails with how it died (run_worker_outcome), and so does
// every point of its group it had not reported (run_worker_lost): a crash costs the runs
// still to come in that worker and nothing else.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/child_frames.h"
#include "experiment/plan.h"
#include "experiment/run_point.h"

namespace attn {

// A worker's request: one point's text (point_codec.h), or the JSON array of the texts of a
// group's points (in execution order).
std::string run_request_encode(const std::vector<const RunPoint*>& unit);
// The points of a request; throws (UserError, or nlohmann::json's error) on a bad request.
std::vector<RunPoint> run_request_decode(const std::string& request);
// Whether a request is a group's (two or more points run in one worker).
bool run_request_is_group(const std::string& request);

// The fork server's entry (fork_server.h): the worker of `request`; `parent` is the server.
[[noreturn]] void run_worker_entry(const std::string& request, int fd, pid_t parent);

// In the parent: re-emits the worker's warning lines that arrived complete and appends its
// complete outcome frames to `outcomes`, in order.
void run_worker_frames_take(ChildFrames& frames, std::vector<std::string>& outcomes);

// What a finished single-point worker reported, or, if it reported nothing or did not exit
// cleanly, a failed outcome saying how it died; peak memory from the worker's rusage.
RunOutcome run_worker_outcome(const RunPoint& point, int status, const rusage& usage,
                              const std::vector<std::string>& outcomes);

// A group's point that its worker ended without reporting: failed, saying how the worker
// ended ("... (in a run group)").
RunOutcome run_worker_lost(const RunPoint& point, int status, const rusage& usage);

// In the parent, a group worker's outcomes as they arrive: each complete outcome frame is the
// outcome of the group's next point (checked by run id); once the worker has been reaped, the
// points it did not report are lost (run_worker_lost).
class RunGroupReceiver {
 public:
  using Done = std::function<void(const RunPoint& point, RunOutcome&& outcome)>;
  explicit RunGroupReceiver(std::vector<const RunPoint*> points) : points_(std::move(points)) {}
  // The worker's complete frames: warnings re-emitted, each outcome passed to done, in order.
  void take(ChildFrames& frames, const Done& done);
  // After the worker ended with `status`: done(point, lost outcome) for each point not reported.
  void finish(int status, const rusage& usage, const Done& done);

 private:
  std::vector<const RunPoint*> points_;
  size_t reported_ = 0;
  std::vector<std::string> outcomes_;
};

// Runs one point in a worker forked directly from this process and waits for it.
RunOutcome run_point_isolated(const RunPoint& point);

// Runs a group (points in execution order, as run_groups_make gives them) in one worker
// forked directly from this process: done(point, outcome) for each point in order, as soon as
// the worker reports it, and once the worker has ended, for each point it did not report
// (RunGroupReceiver). Returns when the worker has been reaped.
void run_group_isolated(const std::vector<RunPoint>& points, const RunGroupReceiver::Done& done);

}  // namespace attn
