// Experiment runs (attnlab run) and loading a results store.
//
// run: the sweep runs in a forked child process (which itself forks one worker per run,
// as `attnlab run` does), while this process waits with the GIL released and checks for
// Ctrl-C every 50 ms. On KeyboardInterrupt the child is killed (its workers die with it,
// PR_SET_PDEATHSIG) and the exception propagates; every run finished before that is in
// DIR/results.sqlite, and calling run() again resumes. The child never touches the
// interpreter: it reports through a pipe and leaves with _exit.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "bindings.h"
#include "core/error.h"
#include "core/threads.h"
#include "experiment/experiment_dir.h"
#include "experiment/store.h"

namespace attnpy {
namespace {

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t k = ::write(fd, s.data() + done, s.size() - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return;
    done += static_cast<size_t>(k);
  }
}

[[noreturn]] void child_main(const attn::RunRequest& rq, int threads, int fd) {
  interrupt_uninstall();  // no interpreter in here
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  std::string report;
  try {
    attn::threads_configure(threads);
    const attn::RunSummary s = attn::experiment_run(rq);
    report = "K" + std::to_string(s.planned) + " " + std::to_string(s.skipped) + " " +
             std::to_string(s.ok) + " " + std::to_string(s.failed);
  } catch (const attn::IoError& e) {
    report = std::string("I") + e.what();
  } catch (const attn::UserError& e) {
    report = std::string("U") + e.what();
  } catch (const std::bad_alloc&) {
    report = "Xout of memory";
  } catch (const std::exception& e) {
    report = std::string("X") + e.what();
  }
  write_all(fd, report);
  ::close(fd);
  std::fflush(nullptr);
  _exit(0);
}

py::dict run(const std::string& spec, const std::string& out, bool quick, int jobs,
             const std::vector<std::string>& overrides, bool force_new, bool retry_failed,
             bool progress, int threads) {
  ATTN_CHECK(jobs >= 1, "jobs = " + std::to_string(jobs) + " must be at least 1");
  ATTN_CHECK(threads >= 0, "threads = " + std::to_string(threads) + " must be >= 0");
  attn::RunRequest rq;
  rq.spec_path = spec;
  rq.out_dir = out;
  rq.overrides = overrides;
  rq.quick = quick;
  rq.jobs = jobs;
  rq.force_new = force_new;
  rq.retry_failed = retry_failed;
  rq.progress = progress;

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("cannot start the run process: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(rq, threads, fds[1]);
  }
  ::close(fds[1]);
  std::string report;
  bool interrupted = false;
  {
    py::gil_scoped_release release;
    char buf[4096];
    for (;;) {
      pollfd p{fds[0], POLLIN, 0};
      const int r = poll(&p, 1, 50);
      if (r > 0) {
        const ssize_t k = ::read(fds[0], buf, sizeof buf);
        if (k > 0) {
          report.append(buf, static_cast<size_t>(k));
          continue;
        }
        if (k < 0 && errno == EINTR) continue;
        break;  // end of the report: the child is leaving
      }
      if (r < 0 && errno != EINTR) break;
      py::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() != 0) {
        interrupted = true;
        break;
      }
    }
    ::close(fds[0]);
    if (interrupted) kill(pid, SIGTERM);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!interrupted && report.empty()) {
      report = WIFSIGNALED(status)
                   ? "Xthe run process was killed by signal " + std::to_string(WTERMSIG(status))
                   : "Xthe run process ended without a report";
    }
  }
  if (interrupted) throw py::error_already_set();
  const std::string msg = report.substr(1);
  switch (report[0]) {
    case 'I': throw attn::IoError(msg);
    case 'U': throw attn::UserError(msg);
    case 'K': break;
    default: throw std::runtime_error(msg);
  }
  long long planned = 0, skipped = 0, ok = 0, failed = 0;
  std::sscanf(msg.c_str(), "%lld %lld %lld %lld", &planned, &skipped, &ok, &failed);
  py::dict s;
  s["planned"] = planned;
  s["skipped"] = skipped;
  s["ok"] = ok;
  s["failed"] = failed;
  return s;
}

// Every stored run, ordered by point, plus the store's meta (swept keys, experiment name).
py::dict load_runs(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "results.sqlite").string();
  if (!std::filesystem::exists(path))
    throw attn::IoError(dir + ": no results.sqlite here; run `attnlab run SPEC --out " + dir + "` first");
  std::vector<attn::StoredRun> runs;
  std::string swept, experiment, spec_path;
  {
    py::gil_scoped_release release;
    attn::ResultsStore store(path, attn::StoreAccess::kRead);
    runs = store.load_runs();
    swept = store.meta("swept");
    experiment = store.meta("experiment");
    spec_path = store.meta("spec_path");
  }
  py::list rows;
  for (auto& r : runs) {
    py::dict row;
    row["run_id"] = r.run_id;
    row["point"] = r.point;
    row["seed"] = r.seed;
    row["status"] = r.status;
    row["error"] = r.error;
    py::dict params;
    for (const auto& [k, v] : r.params) params[py::str(k)] = v;
    row["params"] = params;
    row["swept"] = r.swept;
    py::dict metrics;
    for (const auto& [k, v] : r.metrics) metrics[py::str(k)] = v;
    row["metrics"] = metrics;
    py::list series;
    for (const auto& p : r.series) series.append(py::make_tuple(p.series, p.step, p.value));
    row["series"] = series;
    row["wall_seconds"] = r.wall_seconds;
    row["peak_rss_bytes"] = r.peak_rss_bytes;
    row["attnlab_version"] = r.version;
    row["git_commit"] = r.commit;
    row["finished_at"] = r.finished_at;
    rows.append(row);
  }
  py::dict out;
  out["runs"] = rows;
  out["swept"] = swept;
  out["experiment"] = experiment;
  out["spec_path"] = spec_path;
  return out;
}

}  // namespace

void register_run(py::module_& m) {
  m.def("run", &run, py::arg("spec"), py::arg("out"), py::arg("quick"), py::arg("jobs"),
        py::arg("overrides"), py::arg("force_new"), py::arg("retry_failed"), py::arg("progress"),
        py::arg("threads"), "attnlab run SPEC --out DIR in a child process; returns the summary.");
  m.def("load_runs", &load_runs, py::arg("dir"), "Every run stored in DIR/results.sqlite.");
}

}  // namespace attnpy
