// Run workers: the child side (one point, or a group) and the parent's reading of their frames.
#include "experiment/run_worker.h"

#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/child_process.h"
#include "core/error.h"
#include "core/log.h"
#include "core/memory.h"
#include "experiment/lockstep_group.h"
#include "experiment/point_codec.h"
#include "experiment/run_groups.h"
#include "train/ridge_share.h"

namespace attn {
namespace {

// A worker sends its warning lines (kFrameWarning) and each outcome, in point order, as a
// frame of this kind (core/child_frames.h).
constexpr char kFrameOutcome = 'O';

// In the child: run the point and send the outcome to the parent, then _exit.
[[noreturn]] void worker_main(const RunPoint& point, int fd, pid_t parent) {
  child_enter(fd, parent);
  memory_worker_enter();  // its memory checks use its share (memory_workers_set)
  const RunOutcome outcome = run_point_execute(point);
  child_frame_write(fd, kFrameOutcome, run_outcome_encode(outcome));
  ::close(fd);
  _exit(0);
}

// In the child: run a group's points, a ridge group one after another sharing ridge work
// (train/ridge_share.h), a lockstep group side by side (lockstep_group.h), and send each
// outcome, in point order, as soon as it is known; then _exit. Each outcome's peak memory is
// the worker's so far.
[[noreturn]] void group_worker_main(const std::vector<RunPoint>& points, int fd, pid_t parent) {
  child_enter(fd, parent);
  memory_worker_enter();
  auto send = [fd](RunOutcome& outcome) {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    outcome.peak_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;
    child_frame_write(fd, kFrameOutcome, run_outcome_encode(outcome));
  };
  if (run_group_lockstep(points.front())) {
    lockstep_group_run(points, [&](size_t, RunOutcome&& outcome) { send(outcome); });
  } else {
    ridge_share_enable(true);
    for (const RunPoint& point : points) {
      RunOutcome outcome = run_point_execute(point);
      send(outcome);
    }
  }
  ::close(fd);
  _exit(0);
}

std::string describe_status(int status) { return child_status_text(status, "the worker process"); }

bool interrupted_by_signal(int status) {
  return WIFSIGNALED(status) && child_signal_is_interrupt(WTERMSIG(status));
}

}  // namespace

std::string run_request_encode(const std::vector<const RunPoint*>& unit) {
  if (unit.size() == 1) return run_point_encode(*unit.front());
  nlohmann::json j = nlohmann::json::array();
  for (const RunPoint* p : unit) j.push_back(run_point_encode(*p));
  return j.dump();
}

bool run_request_is_group(const std::string& request) {
  return !request.empty() && request[0] == '[';
}

std::vector<RunPoint> run_request_decode(const std::string& request) {
  std::vector<RunPoint> points;
  if (run_request_is_group(request))
    for (const auto& text : nlohmann::json::parse(request))
      points.push_back(run_point_decode(text.get<std::string>()));
  else
    points.push_back(run_point_decode(request));
  return points;
}

void run_worker_entry(const std::string& request, int fd, pid_t parent) {
  std::vector<RunPoint> points;
  try {
    points = run_request_decode(request);
  } catch (const std::exception& e) {
    child_frame_write(
        fd, kFrameWarning,
        std::string("attnlab: a worker cannot read its run point: ") + e.what() + "\n");
    _exit(2);
  }
  if (run_request_is_group(request)) group_worker_main(points, fd, parent);
  worker_main(points.front(), fd, parent);
}

void run_worker_frames_take(ChildFrames& frames, std::vector<std::string>& outcomes) {
  ChildFrame frame;
  while (frames.next(&frame)) {
    if (frame.kind == kFrameWarning)
      log_warn("%s", frame.payload.c_str());
    else if (frame.kind == kFrameOutcome)
      outcomes.push_back(std::move(frame.payload));
  }
}

RunOutcome run_worker_outcome(const RunPoint& point, int status, const rusage& usage,
                              const std::vector<std::string>& outcomes) {
  RunOutcome outcome;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !outcomes.empty()) {
    outcome = run_outcome_decode(outcomes.front());
  } else {
    outcome.run_id = point.run_id;
    outcome.error = describe_status(status);
    outcome.interrupted = interrupted_by_signal(status);
  }
  outcome.peak_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;
  return outcome;
}

RunOutcome run_worker_lost(const RunPoint& point, int status, const rusage& usage) {
  RunOutcome outcome;
  outcome.run_id = point.run_id;
  outcome.error = WIFEXITED(status) && WEXITSTATUS(status) == 0
                      ? "the run group's worker process ended before this run"
                      : describe_status(status) + " (in a run group)";
  outcome.interrupted = interrupted_by_signal(status);
  outcome.peak_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;
  return outcome;
}

RunOutcome run_point_isolated(const RunPoint& point) {
  const pid_t self = getpid();
  const Child child = child_fork("a worker process", [&](int fd) { worker_main(point, fd, self); });
  ChildFrames frames;
  std::vector<std::string> outcomes;
  while (child_read(child.fd, frames)) run_worker_frames_take(frames, outcomes);
  ::close(child.fd);
  rusage usage{};
  const int status = child_wait(child.pid, &usage);
  return run_worker_outcome(point, status, usage, outcomes);
}

void RunGroupReceiver::take(ChildFrames& frames, const Done& done) {
  run_worker_frames_take(frames, outcomes_);
  for (const std::string& text : outcomes_) {
    ATTN_ASSERT(reported_ < points_.size(), "a group worker sent more outcomes than points");
    const RunPoint& point = *points_[reported_++];
    RunOutcome outcome = run_outcome_decode(text);
    ATTN_ASSERT(outcome.run_id == point.run_id, "a group worker's outcomes are out of order");
    done(point, std::move(outcome));
  }
  outcomes_.clear();
}

void RunGroupReceiver::finish(int status, const rusage& usage, const Done& done) {
  for (; reported_ < points_.size(); ++reported_) {
    const RunPoint& point = *points_[reported_];
    done(point, run_worker_lost(point, status, usage));
  }
}

void run_group_isolated(const std::vector<RunPoint>& points, const RunGroupReceiver::Done& done) {
  const pid_t self = getpid();
  const Child child = child_fork("a run group's worker process",
                                 [&](int fd) { group_worker_main(points, fd, self); });
  std::vector<const RunPoint*> order;
  for (const RunPoint& p : points) order.push_back(&p);
  RunGroupReceiver receiver(std::move(order));
  ChildFrames frames;
  while (child_read(child.fd, frames)) receiver.take(frames, done);
  ::close(child.fd);
  rusage usage{};
  const int status = child_wait(child.pid, &usage);
  receiver.finish(status, usage, done);
}

}  // namespace attn
