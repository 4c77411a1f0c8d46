// Experiment runs (attnlab run), reproductions (attnlab reproduce) and loading a results store.
//
// run and reproduce: the job runs in a fresh process, the attnlab binary (`attnlab _job`,
// apps/cmd_job.cpp) started with posix_spawn (core/child_process.h, child_job_spawn), never in
// a forked copy of this interpreter: a Jupyter kernel has a dozen threads, and a fork taken
// while one of them held a lock (SQLite's, IPython's history thread) left the child blocked
// for ever. The binary is the one attnlab.cli_path() finds (the package's bin/attnlab, the
// build tree's, or ATTNLAB_CLI); it refuses to run for a module of another build. It starts one
// worker per run, as `attnlab run` does, while this process waits with the GIL released and
// checks for Ctrl-C every 50 ms. On KeyboardInterrupt the job is sent SIGTERM (its workers die
// with it, PR_SET_PDEATHSIG) and the exception propagates; every run finished before that is in
// DIR/results.sqlite, and calling run() again resumes. The job reports over a pipe (its fd 3):
// its warnings (and those of its run workers), its progress and its status lines are handed to
// Python callables (warnings.warn, a progress bar, print) as they arrive, and its result or
// error (UserError, IoError) ends the stream.
#include <filesystem>
#include <string>
#include <vector>

#include "bindings.h"
#include "core/child_process.h"
#include "core/cpus.h"
#include "core/error.h"
#include "core/front_option.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "core/version.h"
#include "experiment/experiment_claims.h"
#include "experiment/store.h"

namespace attnpy {
namespace {

// Python callables for the frames of a job (None: ignored), called with the GIL held.
struct ChildHandlers {
  py::object on_warning, on_progress, on_line;
};

// Hands one frame to its handler.
void frame_dispatch(const attn::ChildFrame& frame, const ChildHandlers& h) {
  if (frame.kind == attn::kFrameWarning && !h.on_warning.is_none()) {
    h.on_warning(attn::log_line_plain(frame.payload));
  } else if (frame.kind == attn::kFrameProgress && !h.on_progress.is_none()) {
    const auto n = attn::child_numbers_decode(frame.payload, 2);
    h.on_progress(n[0], n[1]);
  } else if (frame.kind == attn::kFrameJobStatus && !h.on_line.is_none()) {
    h.on_line(frame.payload);
  }
}

// This module's option and command spellings (module.cpp installs them), joined for
// `attnlab _job`, so that the job's messages name Python's keywords.
std::string spellings_joined(bool commands) {
  std::string out;
  const size_t n = commands ? attn::kFrontCommandCount : attn::kFrontOptionCount;
  for (size_t k = 0; k < n; ++k) {
    if (k > 0) out += '\x1f';
    out += commands ? attn::front_command(static_cast<attn::FrontCommand>(k), "{}")
                    : attn::front_option(static_cast<attn::FrontOption>(k));
  }
  return out;
}

// The settings run() and reproduce() share, as `attnlab _job` takes them.
struct JobSettings {
  std::string out;
  int jobs = 1, threads = 0;
  bool quick = false, force_new = false, groups = true;
};

// `CLI _job KIND KEY=VALUE...`: the argv of a job (apps/cmd_job.cpp reads the settings).
std::vector<std::string> job_argv(const std::string& cli, const std::string& kind,
                                  const std::string& target, const JobSettings& s) {
  ATTN_CHECK(s.jobs >= 1, "jobs = " + std::to_string(s.jobs) + " must be at least 1");
  ATTN_CHECK(s.threads >= 0, "threads = " + std::to_string(s.threads) + " must be >= 0");
  return {cli,
          "_job",
          kind,
          "target=" + target,
          "out=" + s.out,
          "caller=" + std::string(attn::kVersion) + " " + attn::kGitCommit,
          "option_spellings=" + spellings_joined(false),
          "command_spellings=" + spellings_joined(true),
          "jobs=" + std::to_string(s.jobs),
          "threads=" + std::to_string(s.threads),
          std::string("quick=") + (s.quick ? "1" : "0"),
          std::string("force_new=") + (s.force_new ? "1" : "0"),
          std::string("groups=") + (s.groups ? "1" : "0")};
}

// Runs the job argv names in a fresh process (attn::child_job_spawn) while this process waits
// with the GIL released, forwarding its frames to the handlers and checking for Ctrl-C every
// 50 ms (then, or when a handler raises, the job is stopped and the Python exception
// propagates). Returns the payload of a successful job; rethrows the job's error.
std::string job_spawn(const std::vector<std::string>& argv, const ChildHandlers& h) {
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
    return attn::child_job_spawn("the run process", argv, watch);
  } catch (const attn::Interrupted&) {
    throw py::error_already_set();  // the KeyboardInterrupt PyErr_CheckSignals raised
  }
}

py::dict run(const std::string& cli, const std::string& spec, const JobSettings& settings,
             const std::vector<std::string>& overrides, bool retry_failed,
             const ChildHandlers& handlers) {
  std::vector<std::string> argv = job_argv(cli, "run", spec, settings);
  for (const auto& o : overrides) argv.push_back("set=" + o);
  argv.push_back(std::string("retry_failed=") + (retry_failed ? "1" : "0"));
  const auto n = attn::child_numbers_decode(job_spawn(argv, handlers), 4);
  py::dict s;
  s["planned"] = n[0];
  s["skipped"] = n[1];
  s["ok"] = n[2];
  s["failed"] = n[3];
  return s;
}

// attnlab reproduce in a fresh process; returns reproduce_result_json's text.
std::string reproduce(const std::string& cli, const std::string& name, const JobSettings& settings,
                      bool report_only, const ChildHandlers& handlers) {
  ATTN_CHECK(!(settings.force_new && report_only),
             "force_new=True and report_only=True exclude each other");
  std::vector<std::string> argv = job_argv(cli, "reproduce", name, settings);
  argv.push_back(std::string("report_only=") + (report_only ? "1" : "0"));
  return job_spawn(argv, handlers);
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
      [](const std::string& cli, const std::string& spec, const std::string& out, bool quick,
         int jobs, const std::vector<std::string>& overrides, bool force_new, bool retry_failed,
         int threads, bool groups, py::object on_warning, py::object on_progress) {
        const JobSettings s{out, jobs, threads, quick, force_new, groups};
        return run(cli, spec, s, overrides, retry_failed, {on_warning, on_progress, py::none()});
      },
      py::arg("cli"), py::arg("spec"), py::arg("out"), py::arg("quick"), py::arg("jobs"),
      py::arg("overrides"), py::arg("force_new"), py::arg("retry_failed"), py::arg("threads"),
      py::arg("groups"), py::arg("on_warning"), py::arg("on_progress"),
      "Runs a spec into `out` in a fresh process of the binary `cli` (attnlab.run); returns "
      "the summary.");
  m.def(
      "reproduce",
      [](const std::string& cli, const std::string& name, const std::string& out, bool quick,
         int jobs, bool force_new, bool report_only, int threads, bool run_groups,
         py::object on_warning, py::object on_progress, py::object on_line) {
        const JobSettings s{out, jobs, threads, quick, force_new, run_groups};
        return reproduce(cli, name, s, report_only, {on_warning, on_progress, on_line});
      },
      py::arg("cli"), py::arg("name"), py::arg("out"), py::arg("quick"), py::arg("jobs"),
      py::arg("force_new"), py::arg("report_only"), py::arg("threads"), py::arg("run_groups"),
      py::arg("on_warning"), py::arg("on_progress"), py::arg("on_line"),
      "Reproduces the group `name` in a fresh process of the binary `cli` "
      "(attnlab.reproduce); returns the result as JSON text.");
  m.def("jobs_default", &attn::cpus_available,
        "The runs at once run() and reproduce() start when jobs=None: the CPUs this process may "
        "use, as the command line without the option (core/cpus.h).");
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
