// Fork-per-run worker pool.
#include "experiment/runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

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
  std::string output;
  // A run group of several points (run_groups.h): its points, and how many outcomes have
  // arrived (each is stored as soon as it does).
  std::vector<const RunPoint*> group;
  size_t received = 0;
};

void write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// A worker's warning lines travel to the parent ahead of its outcome, each framed as
// kWarnBegin line kWarnEnd (the outcome itself is JSON, so it never starts with kWarnBegin).
constexpr char kWarnBegin = '\x1e', kWarnEnd = '\x1f';

// A group worker sends each outcome framed as kOutcomeBegin outcome kOutcomeEnd, between
// its warning lines.
constexpr char kOutcomeBegin = '\x1c', kOutcomeEnd = '\x1d';

// In the parent: re-emits the framed warning lines that lead `output` and removes them; with
// `outcomes`, also takes the complete outcome frames among them (a group worker's), in order.
void worker_warnings_forward(std::string& output, std::vector<std::string>* outcomes = nullptr) {
  size_t at = 0;
  while (at < output.size() &&
         (output[at] == kWarnBegin || (outcomes && output[at] == kOutcomeBegin))) {
    const bool warning = output[at] == kWarnBegin;
    const size_t end = output.find(warning ? kWarnEnd : kOutcomeEnd, at);
    if (end == std::string::npos) break;
    if (warning)
      log_warn("%s", output.substr(at + 1, end - at - 1).c_str());
    else
      outcomes->push_back(output.substr(at + 1, end - at - 1));
    at = end + 1;
  }
  output.erase(0, at);
}

// In the child: run the point and send the outcome to the parent, then _exit.
[[noreturn]] void worker_main(const RunPoint& point, int fd, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);  // the parent died before prctl took effect
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  log_sink_set([fd](const std::string& line) { write_all(fd, kWarnBegin + line + kWarnEnd); });
  const RunOutcome outcome = run_point_execute(point);
  write_all(fd, run_outcome_encode(outcome));
  ::close(fd);
  _exit(0);
}

// In the child: run a group's points, a ridge group one after another sharing ridge work
// (train/ridge_share.h), a lockstep group side by side (lockstep_group.h), and send each
// outcome, in point order, as soon as it is known; then _exit. Each outcome's peak memory is
// the worker's so far.
[[noreturn]] void group_worker_main(const std::vector<RunPoint>& points, int fd, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  log_sink_set([fd](const std::string& line) { write_all(fd, kWarnBegin + line + kWarnEnd); });
  auto send = [fd](RunOutcome& outcome) {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    outcome.peak_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;
    write_all(fd, kOutcomeBegin + run_outcome_encode(outcome) + kOutcomeEnd);
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
    write_all(fd, kWarnBegin + std::string("attnlab: a worker cannot read its run point: ") + e.what() + "\n" +
                      kWarnEnd);
    _exit(2);
  }
  if (group) group_worker_main(points, fd, parent);
  worker_main(points.front(), fd, parent);
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return std::string("the worker process was killed by signal ") + std::to_string(sig) + " (" +
           strsignal(sig) + (sig == SIGKILL ? "; out of memory?" : "") + ")";
  }
  if (WIFEXITED(status)) return "the worker process exited with code " + std::to_string(WEXITSTATUS(status));
  return "the worker process ended abnormally";
}

// What a finished worker reported, or why it died.
RunOutcome worker_outcome(const RunPoint& point, int status, const rusage& usage,
                          std::string output) {
  worker_warnings_forward(output);
  RunOutcome outcome;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !output.empty()) {
    outcome = run_outcome_decode(output);
  } else {
    outcome.run_id = point.run_id;
    outcome.error = describe_status(status);
  }
  outcome.peak_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;
  return outcome;
}

}  // namespace

RunOutcome run_point_isolated(const RunPoint& point) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw UserError(std::string("cannot create a pipe for a worker: ") + std::strerror(errno));
  const pid_t self = getpid();
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw UserError(std::string("cannot start a worker process: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    worker_main(point, fds[1], self);
  }
  ::close(fds[1]);
  std::string output;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) {
      output.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  ::close(fds[0]);
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  return worker_outcome(point, status, usage, output);
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
  // A group worker's outcomes that arrived complete, stored in order.
  auto take_group_outcomes = [&](Worker& w) {
    std::vector<std::string> texts;
    worker_warnings_forward(w.output, &texts);
    for (const std::string& text : texts) {
      ATTN_ASSERT(w.received < w.group.size(), "a group worker sent more outcomes than points");
      const RunPoint& point = *w.group[w.received++];
      const RunOutcome outcome = run_outcome_decode(text);
      ATTN_ASSERT(outcome.run_id == point.run_id, "a group worker's outcomes are out of order");
      store_outcome(point, outcome);
    }
  };

  while (next < units.size() || !active.empty()) {
    while (next < units.size() && static_cast<int>(active.size()) < options.jobs) {
      int fds[2];
      if (pipe2(fds, O_CLOEXEC) != 0)
        throw UserError(std::string("cannot create a pipe for a worker: ") + std::strerror(errno));
      pid_t pid;
      try {
        const auto& unit = units[next];
        pid = server->start(unit.size() == 1 ? run_point_encode(*unit.front())
                                             : group_request_encode(unit),
                            fds[1]);
      } catch (...) {
        ::close(fds[0]);
        ::close(fds[1]);
        throw;
      }
      ::close(fds[1]);
      const auto& unit = units[next];
      active.emplace(pid, Worker{unit.front(), fds[0], {},
                                 unit.size() > 1 ? unit : std::vector<const RunPoint*>{}, 0});
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
      char buf[65536];
      const ssize_t n = ::read(w.fd, buf, sizeof buf);
      if (n > 0) {
        w.output.append(buf, static_cast<size_t>(n));
        if (!w.group.empty()) take_group_outcomes(w);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      // End of output: reap the worker and store its outcome.
      ::close(w.fd);
      int status = 0;
      rusage usage{};
      server->wait(pids[k], &status, &usage);
      if (w.group.empty()) {
        store_outcome(*w.point, worker_outcome(*w.point, status, usage, w.output));
      } else {
        // The group's points without an outcome failed with the worker (how it died).
        take_group_outcomes(w);
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
