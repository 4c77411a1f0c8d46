// Fork-per-run worker pool. Workers (run_worker.h) report in frames over a pipe
// (core/child_process.h).
#include "experiment/runner.h"

#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "core/child_process.h"
#include "core/error.h"
#include "core/log.h"
#include "core/progress.h"
#include "experiment/fork_server.h"
#include "experiment/run_groups.h"
#include "experiment/run_worker.h"

namespace attn {
namespace {

struct Worker {
  const RunPoint* point;  // the first point of its unit
  int fd;
  ChildFrames frames;
  std::vector<std::string> outcomes;  // a single point's outcome frame, stored when it ends
  // A run group of several points (run_groups.h): its outcomes, each stored as it arrives.
  std::unique_ptr<RunGroupReceiver> group;
};

}  // namespace

std::unique_ptr<ForkServer> sweep_server_start() { return std::make_unique<ForkServer>(run_worker_entry); }

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
  // What one worker runs: a point, or a run group (options.groups).
  const std::vector<std::vector<const RunPoint*>> units = run_units_make(points, options.groups);
  size_t next = 0;
  std::unique_ptr<ForkServer> own_server;
  ForkServer* server = options.server;
  if (server == nullptr) {
    own_server = sweep_server_start();
    server = own_server.get();
  }

  // Stores one outcome of `point` and counts it.
  const RunGroupReceiver::Done store_outcome = [&](const RunPoint& point, RunOutcome&& outcome) {
    sweep_record(store, summary, progress, point, outcome);
    log_progress("runs", ++finished, static_cast<int64_t>(points.size()));
  };

  while (next < units.size() || !active.empty()) {
    while (next < units.size() && static_cast<int>(active.size()) < options.jobs) {
      const ChildPipe pipe = child_pipe_make();
      const auto& unit = units[next];
      pid_t pid;
      try {
        pid = server->start(run_request_encode(unit), pipe.write_fd);
      } catch (...) {
        ::close(pipe.read_fd);
        ::close(pipe.write_fd);
        throw;
      }
      ::close(pipe.write_fd);
      auto group = unit.size() > 1 ? std::make_unique<RunGroupReceiver>(unit) : nullptr;
      active.emplace(pid, Worker{unit.front(), pipe.read_fd, {}, {}, std::move(group)});
      if (unit.size() > 1) {
        ++summary.groups;
        summary.grouped += static_cast<int64_t>(unit.size());
      }
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
        // Complete frames: warnings re-emitted, a group's outcomes stored in order (a single
        // point's outcome is stored when its worker ends).
        if (w.group)
          w.group->take(w.frames, store_outcome);
        else
          run_worker_frames_take(w.frames, w.outcomes);
        continue;
      }
      // End of output: reap the worker and store its outcome.
      ::close(w.fd);
      int status = 0;
      rusage usage{};
      server->wait(pids[k], &status, &usage);
      if (w.group)
        // The group's points without an outcome failed with the worker (how it died).
        w.group->finish(status, usage, store_outcome);
      else
        store_outcome(*w.point, run_worker_outcome(*w.point, status, usage, w.outcomes));
      active.erase(pids[k]);
    }
  }
  progress.finish();
  return summary;
}

}  // namespace attn
