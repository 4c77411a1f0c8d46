// Experiment runs (attnlab run), reproductions (attnlab reproduce) and loading a results store.
//
// run and reproduce: the sweep runs in a forked child process (which itself forks one worker per run,
// as `attnlab run` does), while this process waits with the GIL released and checks for
// Ctrl-C every 50 ms. On KeyboardInterrupt the child is killed (its workers die with it,
// PR_SET_PDEATHSIG) and the exception propagates; every run finished before that is in
// DIR/results.sqlite, and calling run() again resumes. The child never touches the
// interpreter: it reports through a pipe and leaves with _exit. Its warnings (and those of
// its run workers), its progress and its status lines come over the same pipe and are handed
// to Python callables (warnings.warn, a progress bar, print) as they arrive.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>

#include "bindings.h"
#include "core/error.h"
#include "core/log.h"
#include "core/threads.h"
#include "experiment/experiment_dir.h"
#include "experiment/reproduce.h"
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

// The child's pipe carries records, each a type letter, text, and a '\0':
//   W warning line (log_warn, from the child or its run workers), P "done total" of the runs,
//   S a status line, then one last record: K payload (success), I/U/X message (IoError,
//   UserError, other error).
void record_write(int fd, char type, const std::string& text) {
  std::string rec(1, type);
  rec += text;
  rec += '\0';
  write_all(fd, rec);
}

// In the child: its end of the pipe (for jobs that send status lines).
int g_child_fd = -1;

// In the child: run job() and report over fd; never returns.
[[noreturn]] void child_main(const std::function<std::string()>& job, int threads, int fd) {
  g_child_fd = fd;
  interrupt_uninstall();  // no interpreter in here
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  attn::log_sink_set([fd](const std::string& line) { record_write(fd, 'W', attn::log_line_plain(line)); });
  attn::log_progress_sink_set([fd](const std::string&, int64_t done, int64_t total) {
    record_write(fd, 'P', std::to_string(done) + " " + std::to_string(total));
  });
  char type = 'K';
  std::string text;
  try {
    attn::threads_configure(threads);
    text = job();
  } catch (const attn::IoError& e) {
    type = 'I', text = e.what();
  } catch (const attn::UserError& e) {
    type = 'U', text = e.what();
  } catch (const std::bad_alloc&) {
    type = 'X', text = "out of memory";
  } catch (const std::exception& e) {
    type = 'X', text = e.what();
  }
  record_write(fd, type, text);
  ::close(fd);
  std::fflush(nullptr);
  _exit(0);
}

// Python callables for the records of a child (None: ignored), called with the GIL held.
struct ChildHandlers {
  py::object on_warning, on_progress, on_line;
};

// Hands one complete record to its handler; returns true for the last record.
bool record_dispatch(const std::string& rec, const ChildHandlers& h, std::string* last) {
  const char type = rec.empty() ? 'X' : rec[0];
  const std::string text = rec.empty() ? "" : rec.substr(1);
  if (type == 'W') {
    if (!h.on_warning.is_none()) h.on_warning(text);
  } else if (type == 'P') {
    long long done = 0, total = 0;
    std::sscanf(text.c_str(), "%lld %lld", &done, &total);
    if (!h.on_progress.is_none()) h.on_progress(done, total);
  } else if (type == 'S') {
    if (!h.on_line.is_none()) h.on_line(text);
  } else {
    *last = rec;
    return true;
  }
  return false;
}

// Runs job() in a forked child while this process waits with the GIL released, forwarding
// the child's records to the handlers and checking for Ctrl-C every 50 ms (then, or when a
// handler raises, the child is killed and the Python exception propagates). Returns the
// payload of a successful job; rethrows the child's error as IoError/UserError/runtime_error.
std::string child_run(const std::function<std::string()>& job, int threads, const ChildHandlers& h) {
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
    child_main(job, threads, fds[1]);
  }
  ::close(fds[1]);
  std::string buffer, last;
  bool stopped = false;  // Ctrl-C, or a handler raised
  std::exception_ptr error;
  {
    py::gil_scoped_release release;
    char buf[4096];
    for (;;) {
      pollfd p{fds[0], POLLIN, 0};
      const int r = poll(&p, 1, 50);
      py::gil_scoped_acquire gil;
      if (r > 0) {
        const ssize_t k = ::read(fds[0], buf, sizeof buf);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;  // end of the records: the child is leaving
        buffer.append(buf, static_cast<size_t>(k));
        size_t end;
        try {
          while ((end = buffer.find('\0')) != std::string::npos) {
            const std::string rec = buffer.substr(0, end);
            buffer.erase(0, end + 1);
            record_dispatch(rec, h, &last);
          }
        } catch (...) {
          error = std::current_exception();
          stopped = true;
          break;
        }
        continue;
      }
      if (r < 0 && errno != EINTR) break;
      if (PyErr_CheckSignals() != 0) {
        stopped = true;
        break;
      }
    }
    ::close(fds[0]);
    if (stopped) kill(pid, SIGTERM);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!stopped && last.empty()) {
      last = WIFSIGNALED(status) ? "Xthe run process was killed by signal " + std::to_string(WTERMSIG(status))
                                 : "Xthe run process ended without a report";
    }
  }
  if (error) std::rethrow_exception(error);
  if (stopped) throw py::error_already_set();
  const std::string msg = last.substr(1);
  switch (last[0]) {
    case 'I': throw attn::IoError(msg);
    case 'U': throw attn::UserError(msg);
    case 'K': return msg;
    default: throw std::runtime_error(msg);
  }
}

py::dict run(const std::string& spec, const std::string& out, bool quick, int jobs,
             const std::vector<std::string>& overrides, bool force_new, bool retry_failed,
             bool progress, int threads, bool groups, const ChildHandlers& handlers) {
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
  rq.groups = groups;
  const std::string report = child_run(
      [&rq] {
        const attn::RunSummary s = attn::experiment_run(rq);
        return std::to_string(s.planned) + " " + std::to_string(s.skipped) + " " + std::to_string(s.ok) + " " +
               std::to_string(s.failed);
      },
      threads, handlers);
  long long planned = 0, skipped = 0, ok = 0, failed = 0;
  std::sscanf(report.c_str(), "%lld %lld %lld %lld", &planned, &skipped, &ok, &failed);
  py::dict s;
  s["planned"] = planned;
  s["skipped"] = skipped;
  s["ok"] = ok;
  s["failed"] = failed;
  return s;
}

// attnlab reproduce in a child process; returns reproduce_result_json's text.
std::string reproduce(const std::string& name, const std::string& out, bool quick, int jobs, bool force_new,
                      bool report_only, bool progress, int threads, const ChildHandlers& handlers) {
  ATTN_CHECK(jobs >= 1, "jobs = " + std::to_string(jobs) + " must be at least 1");
  ATTN_CHECK(!(force_new && report_only), "force_new=True and report_only=True exclude each other");
  attn::ReproduceOptions o;
  o.name = name;
  o.out = out;
  o.quick = quick;
  o.jobs = jobs;
  o.force_new = force_new;
  o.report_only = report_only;
  o.progress = progress;
  return child_run(
      [&o] {
        o.say = [](const std::string& line) { record_write(g_child_fd, 'S', line); };
        return attn::reproduce_result_json(attn::reproduce_run(o));
      },
      threads, handlers);
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
  m.def(
      "run",
      [](const std::string& spec, const std::string& out, bool quick, int jobs,
         const std::vector<std::string>& overrides, bool force_new, bool retry_failed, bool progress, int threads,
         bool groups, py::object on_warning, py::object on_progress) {
        return run(spec, out, quick, jobs, overrides, force_new, retry_failed, progress, threads,
                   groups, {on_warning, on_progress, py::none()});
      },
      py::arg("spec"), py::arg("out"), py::arg("quick"), py::arg("jobs"), py::arg("overrides"),
      py::arg("force_new"), py::arg("retry_failed"), py::arg("progress"), py::arg("threads"),
      py::arg("groups"), py::arg("on_warning"), py::arg("on_progress"),
      "attnlab run SPEC --out DIR in a child process; returns the summary.");
  m.def(
      "reproduce",
      [](const std::string& name, const std::string& out, bool quick, int jobs, bool force_new, bool report_only,
         bool progress, int threads, py::object on_warning, py::object on_progress, py::object on_line) {
        return reproduce(name, out, quick, jobs, force_new, report_only, progress, threads,
                         {on_warning, on_progress, on_line});
      },
      py::arg("name"), py::arg("out"), py::arg("quick"), py::arg("jobs"), py::arg("force_new"),
      py::arg("report_only"), py::arg("progress"), py::arg("threads"), py::arg("on_warning"),
      py::arg("on_progress"), py::arg("on_line"),
      "attnlab reproduce NAME in a child process; returns the result as JSON text.");
  m.def("load_runs", &load_runs, py::arg("dir"), "Every run stored in DIR/results.sqlite.");
}

}  // namespace attnpy
