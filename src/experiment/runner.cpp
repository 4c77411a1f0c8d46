// Fork-per-run worker pool. Workers (run_worker.h) report in frames over a pipe
// (core/child_process.h).
#include "experiment/runner.h"

#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <string>

#include "core/child_process.h"
#include "core/error.h"
#include "core/log.h"
#include "core/memory.h"
#include "core/progress.h"
#include "experiment/fork_server.h"
#include "experiment/run_groups.h"
#include "experiment/run_worker.h"
#include "experiment/sweep_interrupt.h"

namespace attn {
namespace {

struct Worker {
  size_t part;            // sweep_execute_parts: the part its unit belongs to
  const RunPoint* point;  // the first point of its unit
  int fd;
  ChildFrames frames;
  std::vector<std::string> outcomes;  // a single point's outcome frame, stored when it ends
  // A run group of several points (run_groups.h): its outcomes, each stored as it arrives.
  std::unique_ptr<RunGroupReceiver> group;
};

}  // namespace

std::unique_ptr<ForkServer> sweep_server_start(int jobs) {
  memory_workers_set(jobs);  // inherited by the server and its workers
  return std::make_unique<ForkServer>(run_worker_entry);
}

void sweep_record(ResultsStore& store, SweepSummary& summary, Progress& progress,
                  const RunPoint& point, const RunOutcome& outcome) {
  if (outcome.interrupted) {
    ++summary.interrupted;
    log_warn(
        "%srun %s (point %lld, seed %llu) was stopped from outside: %s; not stored, the "
        "same command runs it again\n",
        progress.enabled() ? "\r\033[K" : "", outcome.run_id.c_str(),
        static_cast<long long>(point.index), static_cast<unsigned long long>(point.seed),
        outcome.error.c_str());
    progress.add(1, 0);
    return;
  }
  store.insert(point, outcome);
  sweep_interrupt_stored();
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
  return sweep_execute_parts({SweepPart{points, &store, {}}}, options).front();
}

std::vector<SweepSummary> sweep_execute_parts(const std::vector<SweepPart>& parts,
                                              const SweepOptions& options) {
  ATTN_CHECK(options.jobs >= 1, "jobs = " + std::to_string(options.jobs) + " must be at least 1");
  std::vector<SweepSummary> summaries(parts.size());
  int64_t total = 0;
  for (const auto& part : parts) total += static_cast<int64_t>(part.points.size());
  Progress progress("runs", total, options.progress);
  int64_t finished = 0;
  log_progress("runs", 0, total);
  // What one worker runs (a point, or a run group: options.groups), part by part, and how
  // many outcomes each part still waits for.
  struct Unit {
    size_t part;
    std::vector<const RunPoint*> points;
  };
  std::vector<Unit> units;
  std::vector<int64_t> waiting(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    ATTN_CHECK(parts[i].points.empty() || parts[i].store != nullptr,
               "a sweep part without a store");
    waiting[i] = static_cast<int64_t>(parts[i].points.size());
    for (auto& unit : run_units_make(parts[i].points, options.groups))
      units.push_back({i, std::move(unit)});
  }
  // Calls on_done of each part whose outcomes are all stored, once, as soon as they are (a
  // terminal bar is cleared first: the caller may print; the bar is drawn again at the next
  // outcome). An on_done that throws stops new units from starting: the running ones finish
  // and are stored (parts they finish get their on_done), then the first exception is rethrown.
  std::vector<bool> reported(parts.size(), false);
  std::exception_ptr failure;
  const auto finish_parts = [&] {
    for (size_t i = 0; i < parts.size(); ++i) {
      if (reported[i] || waiting[i] > 0) continue;
      reported[i] = true;
      if (!parts[i].on_done) continue;
      if (progress.enabled()) std::fputs("\r\033[K", stderr);
      try {
        parts[i].on_done(summaries[i]);
      } catch (...) {
        if (!failure) failure = std::current_exception();
      }
    }
  };
  finish_parts();
  if (units.empty() || failure) {
    progress.finish();
    if (failure) std::rethrow_exception(failure);
    return summaries;
  }
  std::map<pid_t, Worker> active;
  size_t next = 0;
  std::unique_ptr<ForkServer> own_server;
  ForkServer* server = options.server;
  if (server == nullptr) {
    own_server = sweep_server_start(options.jobs);
    server = own_server.get();
  }

  // Stores one outcome of `point` (of part `part`) and counts it.
  const auto store_in = [&](size_t part) -> RunGroupReceiver::Done {
    return [&, part](const RunPoint& point, RunOutcome&& outcome) {
      sweep_record(*parts[part].store, summaries[part], progress, point, outcome);
      log_progress("runs", ++finished, total);
      --waiting[part];
    };
  };

  while ((next < units.size() && !failure) || !active.empty()) {
    while (!failure && next < units.size() && static_cast<int>(active.size()) < options.jobs) {
      const ChildPipe pipe = child_pipe_make();
      const Unit& unit = units[next];
      pid_t pid;
      try {
        pid = server->start(run_request_encode(unit.points), pipe.write_fd);
      } catch (...) {
        ::close(pipe.read_fd);
        ::close(pipe.write_fd);
        throw;
      }
      ::close(pipe.write_fd);
      auto group =
          unit.points.size() > 1 ? std::make_unique<RunGroupReceiver>(unit.points) : nullptr;
      active.emplace(
          pid, Worker{unit.part, unit.points.front(), pipe.read_fd, {}, {}, std::move(group)});
      if (unit.points.size() > 1) {
        ++summaries[unit.part].groups;
        summaries[unit.part].grouped += static_cast<int64_t>(unit.points.size());
      }
      ++next;
    }
    // Parts finished by the last outcomes, now that free workers have their next units.
    finish_parts();
    if (active.empty()) continue;  // nothing left to start, or an on_done failed

    std::vector<pollfd> fds;
    std::vector<pid_t> pids;
    for (auto& [pid, w] : active) {
      fds.push_back({w.fd, POLLIN, 0});
      pids.push_back(pid);
    }
    if (poll(fds.data(), fds.size(), -1) < 0) {
      const int err = errno;  // EINTR only: the others (EFAULT, EINVAL, ENOMEM) are bugs here
      ATTN_ASSERT(err == EINTR, std::string("poll of the run workers: ") + std::strerror(err));
      continue;
    }
    for (size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      Worker& w = active.at(pids[k]);
      if (child_read(w.fd, w.frames)) {
        // Complete frames: warnings re-emitted, a group's outcomes stored in order (a single
        // point's outcome is stored when its worker ends).
        if (w.group)
          w.group->take(w.frames, store_in(w.part));
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
        w.group->finish(status, usage, store_in(w.part));
      else
        store_in(w.part)(*w.point, run_worker_outcome(*w.point, status, usage, w.outcomes));
      active.erase(pids[k]);
    }
  }
  finish_parts();
  progress.finish();
  if (failure) std::rethrow_exception(failure);
  return summaries;
}

}  // namespace attn
