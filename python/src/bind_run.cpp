// Experiment runs (attnlab run), reproductions (attnlab reproduce) and loading a results store.
//
// run and reproduce: the sweep runs in a forked child process (which itself forks one worker per
// run, as `attnlab run` does), while this process waits with the GIL released and checks for Ctrl-C
// every 50 ms. On KeyboardInterrupt the child is killed (its workers die with it, PR_SET_PDEATHSIG)
// and the exception propagates; every run finished before that is in DIR/results.sqlite, and
// calling run() again resumes. The child never touches the interpreter: it reports through a pipe
// (core/child_process.h, the runner's frames) and leaves with _exit. Its warnings (and those of its
// run workers), its progress and its status lines come over the same pipe and are handed to Python
// callables (warnings.warn, a progress bar, print) as they arrive.
#include <filesystem>
#include <string>

#include "bindings.h"
#include "core/child_process.h"
#include "core/error.h"
#include "core/front_option.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "core/threads.h"
#include "experiment/experiment_claims.h"
#include "experiment/experiment_dir.h"
#include "experiment/reproduce.h"
#include "experiment/store.h"

namespace attnpy {
namespace {

// Python callables for the frames of a child (None: ignored), called with the GIL held.
struct ChildHandlers {
  py::object on_warning, on_progress, on_line;
};

// A child's status line (reproduce's `say`), as a frame of this kind (core/child_frames.h).
constexpr char kFrameStatus = 'S';

// Hands one frame to its handler.
void frame_dispatch(const attn::ChildFrame& frame, const ChildHandlers& h) {
  if (frame.kind == attn::kFrameWarning && !h.on_warning.is_none()) {
    h.on_warning(attn::log_line_plain(frame.payload));
  } else if (frame.kind == attn::kFrameProgress && !h.on_progress.is_none()) {
    const auto n = attn::child_numbers_decode(frame.payload, 2);
    h.on_progress(n[0], n[1]);
  } else if (frame.kind == kFrameStatus && !h.on_line.is_none()) {
    h.on_line(frame.payload);
  }
}

// Runs job() in a forked child (attn::child_job_run) while this process waits with the GIL
// released, forwarding the child's frames to the handlers and checking for Ctrl-C every
// 50 ms (then, or when a handler raises, the child is killed and the Python exception
// propagates). Returns the payload of a successful job; rethrows the child's error.
std::string child_run(const attn::ChildJob& job, int threads, const ChildHandlers& h) {
  attn::ChildWatch watch;
  watch.on_frame = [&h](const attn::ChildFrame& frame) {
    py::gil_scoped_acquire gil;
    frame_dispatch(frame, h);
  };
  watch.stop = [] {
    py::gil_scoped_acquire gil;
    return PyErr_CheckSignals() != 0;
  };
  try {
    py::gil_scoped_release release;
    return attn::child_job_run(
        "the run process",
        [&job, threads](int fd) {
          interrupt_uninstall();  // no interpreter in here
          attn::threads_configure(threads);
          return job(fd);
        },
        watch);
  } catch (const attn::Interrupted&) {
    throw py::error_already_set();  // the KeyboardInterrupt PyErr_CheckSignals raised
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
      [&rq](int) {
        const attn::RunSummary s = attn::experiment_run(rq);
        return attn::child_numbers_encode({s.planned, s.skipped, s.ok, s.failed});
      },
      threads, handlers);
  const auto n = attn::child_numbers_decode(report, 4);
  py::dict s;
  s["planned"] = n[0];
  s["skipped"] = n[1];
  s["ok"] = n[2];
  s["failed"] = n[3];
  return s;
}

// attnlab reproduce in a child process; returns reproduce_result_json's text.
std::string reproduce(const std::string& name, const std::string& out, bool quick, int jobs,
                      bool force_new, bool report_only, bool progress, int threads, bool run_groups,
                      const ChildHandlers& handlers) {
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
  o.groups = run_groups;
  return child_run(
      [&o](int fd) {
        o.say = [fd](const std::string& line) { attn::child_frame_write(fd, kFrameStatus, line); };
        return attn::reproduce_result_json(attn::reproduce_run(o));
      },
      threads, handlers);
}

// Every stored run, ordered by point, plus the store's meta (swept keys, experiment name).
py::dict load_runs(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "results.sqlite").string();
  if (!std::filesystem::exists(path))
    throw attn::IoError(dir + ": no results.sqlite here; run `" +
                        attn::front_command(attn::FrontCommand::kRunInto, dir) + "` first");
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
         const std::vector<std::string>& overrides, bool force_new, bool retry_failed,
         bool progress, int threads, bool groups, py::object on_warning, py::object on_progress) {
        return run(spec, out, quick, jobs, overrides, force_new, retry_failed, progress, threads,
                   groups, {on_warning, on_progress, py::none()});
      },
      py::arg("spec"), py::arg("out"), py::arg("quick"), py::arg("jobs"), py::arg("overrides"),
      py::arg("force_new"), py::arg("retry_failed"), py::arg("progress"), py::arg("threads"),
      py::arg("groups"), py::arg("on_warning"), py::arg("on_progress"),
      "Runs a spec into `out` in a child process (attnlab.run); returns the summary.");
  m.def(
      "reproduce",
      [](const std::string& name, const std::string& out, bool quick, int jobs, bool force_new,
         bool report_only, bool progress, int threads, bool run_groups, py::object on_warning,
         py::object on_progress, py::object on_line) {
        return reproduce(name, out, quick, jobs, force_new, report_only, progress, threads,
                         run_groups, {on_warning, on_progress, on_line});
      },
      py::arg("name"), py::arg("out"), py::arg("quick"), py::arg("jobs"), py::arg("force_new"),
      py::arg("report_only"), py::arg("progress"), py::arg("threads"), py::arg("run_groups"),
      py::arg("on_warning"), py::arg("on_progress"), py::arg("on_line"),
      "Reproduces the group `name` in a child process (attnlab.reproduce); returns the result "
      "as JSON text.");
  m.def("load_runs", &load_runs, py::arg("dir"), "Every run stored in DIR/results.sqlite.");
  m.def(
      "claims",
      [](const std::string& dir) {
        std::vector<attn::ClaimResult> claims;
        {
          py::gil_scoped_release release;
          claims = attn::experiment_claims(dir);
        }
        py::list out;
        for (const auto& c : claims)
          out.append(py::dict(py::arg("id") = c.id, py::arg("text") = c.text,
                              py::arg("verdict") = attn::verdict_name(c.verdict),
                              py::arg("detail") = c.detail));
        return out;
      },
      py::arg("dir"), "The verdicts of DIR/spec.json's claims on DIR's stored runs.");
}

}  // namespace attnpy
