// Fork-per-run worker pool. Workers report in frames over a pipe (core/child_process.h).
#include "experiment/runner.h"

#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/child_process.h"
#include "core/error.h"
#include "core/log.h"
#include "core/progress.h"
#include "experiment/fork_server.h"
#include "experiment/lockstep_group.h"
#include "experiment/point_codec.h"
#include "experiment/run_groups.h"
#include "experiment/run_point.h"
#include "train/ridge_share.h"

namespace attn {
namespace {

struct Worker {
  const RunPoint* point;  // the first point of its group
  int fd;
  ChildFrames frames;
  // A run group of several points (run_groups.h): its points, and how many outcomes have
  // arrived (each is stored as soon as it does).
  std::vector<const RunPoint*> group;
  size_t received = 0;
  std::vector<std::string> outcomes;  // outcome frames not yet stored (a single point's: its one)
};

// A worker sends its warning lines (kFrameWarning) and each outcome, in point order, as a
// frame of this kind (core/child_frames.h).
constexpr char kFrameOutcome = 'O';

// In the parent: re-emits the worker's warning lines that arrived complete and appends its
// complete outcome frames to `outcomes`, in order.
void worker_frames_take(ChildFrames& frames, std::vector<std::string>& outcomes) {
  ChildFrame frame;
  while (frames.next(&frame)) {
    if (frame.kind == kFrameWarning)
      log_warn("%s", frame.payload.c_str());
    else if (frame.kind == kFrameOutcome)
      outcomes.push_back(std::move(frame.payload));
  }
}

// In the child: run the point and send the outcome to the parent, then _exit.
[[noreturn]] void worker_main(const RunPoint& point, int fd, pid_t parent) {
  child_enter(fd, parent);
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

// A group's request: the JSON array of its encoded points (one point's text is an object).
std::string group_request_encode(const std::vector<const RunPoint*>& group) {
  nlohmann::json j = nlohmann::json::array();
  for (const RunPoint* p : group) j.push_back(run_point_encode(*p));
  return j.dump();
}

// The fork server's entry: the worker of one encoded point or of a group (its parent is the
// server).
[[noreturn]] void worker_entry(const std::string& request, int fd, pid_t parent) {
  std::vector<RunPoint> points;
  const bool group = !request.empty() && request[0] == '[';
  try {
    if (group)
      for (const auto& text : nlohmann::json::parse(request))
        points.push_back(run_point_decode(text.get<std::string>()));
    else
      points.push_back(run_point_decode(request));
  } catch (const std::exception& e) {
    child_frame_write(fd, kFrameWarning,
                      std::string("attnlab: a worker cannot read its run point: ") + e.what() + "\n");
    _exit(2);
  }
  if (group) group_worker_main(points, fd, parent);
  worker_main(points.front(), fd, parent);
}

std::string describe_status(int status) { return child_status_text(status, "the worker process"); }

// What a finished single-point worker reported, or why it died.
RunOutcome worker_outcome(const RunPoint& point, int status, const rusage& usage,
                          const std::vector<std::string>& outcomes) {
  RunOutcome outcome;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !outcomes.empty()) {
    outcome = run_outcome_decode(outcomes.front());
  } else {
    outcome.run_id = point.run_id;
    outcome.error = describe_status(status);
  }
  outcome.peak_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;
  return outcome;
}

}  // namespace

RunOutcome run_point_isolated(const RunPoint& point) {
  const pid_t self = getpid();
  const Child child = child_fork("a worker process", [&](int fd) { worker_main(point, fd, self); });
  ChildFrames frames;
  std::vector<std::string> outcomes;
  while (child_read(child.fd, frames)) worker_frames_take(frames, outcomes);
  ::close(child.fd);
  rusage usage{};
  const int status = child_wait(child.pid, &usage);
  return worker_outcome(point, status, usage, outcomes);
}

std::unique_ptr<ForkServer> sweep_server_start() { return std::make_unique<ForkServer>(worker_entry); }

void sweep_record(ResultsStore& store, SweepSummary& summary, Progress& progress,
                  const RunPoint& point, const RunOutcome& outcome) {
  store.insert(point, outcome);
  if (outcome.ok) {
    ++summary.ok;
  } else {
    ++summary.failed;
    log_warn("%srun %s (point %lld, seed %llu) failed: %s\n", progress.enabled() ? "\r\033[K" : "",
             outcome.run_id.c_str(), static_cast<long long>(point.index),
             static_cast<unsigned long long>(point.seed), outcome.error.c_str());
  }
  progress.add(1, outcome.ok ? 0 : 1);
}

SweepSummary sweep_execute(const std::vector<const RunPoint*>& points, ResultsStore& store,
                           const SweepOptions& options) {
  ATTN_CHECK(options.jobs >= 1, "--jobs " + std::to_string(options.jobs) + " must be at least 1");
  SweepSummary summary;
  Progress progress("runs", static_cast<int64_t>(points.size()), options.progress);
  int64_t finished = 0;
  log_progress("runs", 0, static_cast<int64_t>(points.size()));
  std::map<pid_t, Worker> active;
  // What one worker runs: a point, or a run group (options.groups), at most kGroupMax points
  // (a group's request must fit the fork server's request size).
  constexpr size_t kGroupMax = 256;
  std::vector<std::vector<const RunPoint*>> units;
  if (options.groups) {
    for (auto& g : run_groups_make(points))
      for (size_t at = 0; at < g.size(); at += kGroupMax)
        units.emplace_back(g.begin() + static_cast<std::ptrdiff_t>(at),
                           g.begin() + static_cast<std::ptrdiff_t>(std::min(g.size(), at + kGroupMax)));
  } else {
    for (const RunPoint* p : points) units.push_back({p});
  }
  size_t next = 0;
  std::unique_ptr<ForkServer> own_server;
  ForkServer* server = options.server;
  if (server == nullptr) {
    own_server = sweep_server_start();
    server = own_server.get();
  }

  // Stores one outcome of `point` and counts it.
  auto store_outcome = [&](const RunPoint& point, const RunOutcome& outcome) {
    sweep_record(store, summary, progress, point, outcome);
    log_progress("runs", ++finished, static_cast<int64_t>(points.size()));
  };
  // A worker's frames that arrived complete: its warnings re-emitted, a group's outcomes
  // stored in order (a single point's outcome is stored when its worker ends).
  auto take_frames = [&](Worker& w) {
    worker_frames_take(w.frames, w.outcomes);
    if (w.group.empty()) return;
    for (const std::string& text : w.outcomes) {
      ATTN_ASSERT(w.received < w.group.size(), "a group worker sent more outcomes than points");
      const RunPoint& point = *w.group[w.received++];
      const RunOutcome outcome = run_outcome_decode(text);
      ATTN_ASSERT(outcome.run_id == point.run_id, "a group worker's outcomes are out of order");
      store_outcome(point, outcome);
    }
    w.outcomes.clear();
  };

  while (next < units.size() || !active.empty()) {
    while (next < units.size() && static_cast<int>(active.size()) < options.jobs) {
      const ChildPipe pipe = child_pipe_make();
      const auto& unit = units[next];
      pid_t pid;
      try {
        pid = server->start(unit.size() == 1 ? run_point_encode(*unit.front())
                                             : group_request_encode(unit),
                            pipe.write_fd);
      } catch (...) {
        ::close(pipe.read_fd);
        ::close(pipe.write_fd);
        throw;
      }
      ::close(pipe.write_fd);
      active.emplace(pid, Worker{unit.front(), pipe.read_fd, {},
                                 unit.size() > 1 ? unit : std::vector<const RunPoint*>{}, 0, {}});
      ++next;
    }

    std::vector<pollfd> fds;
    std::vector<pid_t> pids;
    for (auto& [pid, w] : active) {
      fds.push_back({w.fd, POLLIN, 0});
      pids.push_back(pid);
    }
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw UserError(std::string("poll failed: ") + std::strerror(errno));
    }
    for (size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      Worker& w = active.at(pids[k]);
      if (child_read(w.fd, w.frames)) {
        take_frames(w);
        continue;
      }
      // End of output: reap the worker and store its outcome.
      ::close(w.fd);
      int status = 0;
      rusage usage{};
      server->wait(pids[k], &status, &usage);
      if (w.group.empty()) {
        store_outcome(*w.point, worker_outcome(*w.point, status, usage, w.outcomes));
      } else {
        // The group's points without an outcome failed with the worker (how it died).
        for (; w.received < w.group.size(); ++w.received) {
          const RunPoint& point = *w.group[w.received];
          RunOutcome outcome;
          outcome.run_id = point.run_id;
          outcome.error = WIFEXITED(status) && WEXITSTATUS(status) == 0
                              ? "the run group's worker process ended before this run"
                              : describe_status(status) + " (in a run group)";
          outcome.peak_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;
          store_outcome(point, outcome);
        }
      }
      active.erase(pids[k]);
    }
  }
  progress.finish();
  return summary;
}

}  // namespace attn
