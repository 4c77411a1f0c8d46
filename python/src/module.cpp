// attnlab._attnlab: the compiled half of the Python package (the other half,
// python/attnlab/__init__.py, normalises arguments and holds the docstrings users read).
#include <cstdio>
#include <new>

#include "bindings.h"
#include "core/blas_core.h"
#include "core/blas_threads.h"
#include "core/error.h"
#include "core/float_env.h"
#include "core/front_option.h"
#include "core/home.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "core/memory.h"
#include "core/threads.h"
#include "core/version.h"
#include "experiment/reproduce.h"

namespace {

// How library messages name the options and commands (core/front_option.h): as keyword
// arguments and calls of the attnlab package (python/attnlab/_experiments.py, _analysis.py,
// _tasks.py, _models.py). MPI runs exist only on the command line: those entries say so, or
// name the shell command.
constexpr attn::FrontOptionSpellings kPythonSpellings = {
    "out=",
    "force_new=True",
    "retry_failed=True",
    "jobs=",
    "quick=True",
    "report_only=True",
    "set=",
    "shard=",
    "mpi (attnlab run --mpi; not available from Python)",
    "heads=",
    "head_size=",
    "layout=",
    "query_pattern=",
    "key_pattern=",
    "layers=",
    "heatmap_layers=",
    "heatmap_heads=",
    "heatmap_block=",
    "n=",
    "first=",
};
static_assert(attn::front_option_spellings_complete(kPythonSpellings),
              "a FrontOption has no Python spelling");
constexpr attn::FrontCommandSpellings kPythonCommands = {
    "attnlab.run(SPEC, out='{}')",
    "attnlab run --mpi",                   // the shell command: not available from Python
    "mpirun -np K attnlab run ... --mpi",  // the same
    "Model.save(path)",
    "attnlab.model(NAME).fit(X, Y).save(PATH)",
    "attnlab.reproduce('{}')",
    "attnlab.reproduce('{}', quick=True)",
};
static_assert(attn::front_command_spellings_complete(kPythonCommands),
              "a FrontCommand has no Python spelling, or its {} does not fit");

}  // namespace

PYBIND11_MODULE(_attnlab, m) {
  // Under a small address-space limit OpenBLAS retries its per-thread buffer forever (a hang
  // at the first fit): the import itself refuses, naming the limit (core/memory.h).
  // The floor counts the OpenBLAS threads this library loaded with (core/blas_threads.h).
  const std::string limit_problem = attn::memory_address_limit_problem(
      attn::memory_address_limit(), attn::blas_threads_configured());
  if (!limit_problem.empty()) throw py::import_error(limit_problem);
  attn::front_option_spellings_set(kPythonSpellings);
  attn::front_command_spellings_set(kPythonCommands);
  m.doc() = "attnlab's C++ core (use the attnlab package, not this module)";
  m.attr("__version__") = attn::kVersion;
  m.attr("git_commit") = attn::kGitCommit;

  // The same one-line messages as the command line (which prints "attnlab: error: MSG").
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const attn::IoError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    } catch (const attn::UserError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const attn::Interrupted&) {
      attnpy::interrupt_restore_error();
    }
  });

  m.def("set_threads", &attn::threads_configure, py::arg("k"),
        "Set the compute-thread budget (k >= 1; 0: ATTNLAB_THREADS or 1). Returns it.");
  m.def("threads", &attn::threads_count, "The compute-thread budget in force.");
  m.def("blas_core", [] { return std::string(attn::blas_core_name()); },
        "The kernels OpenBLAS loaded in this process (core/blas_core.h).");
  m.def(
      "subnormals", [] { return std::string(attn::subnormals_text()); },
      "'flushed' (the default: attnlab's calls compute with subnormal floats as 0) or 'kept' "
      "(ATTNLAB_SUBNORMALS=keep); core/float_env.h.");
  m.def("blas_core_wanted", &attn::blas_core_wanted,
        "The OPENBLAS_CORETYPE this process should have loaded OpenBLAS with, or '' "
        "(core/blas_core.h).");
  m.def("home", &attn::attnlab_home, "Where experiments/ and scripts/ are found.");
  m.def("groups", &attn::reproduce_groups, "The folders of experiments/.");

  // Library warnings of this process become warnings.warn (attnlab._feedback.warn_line), so a
  // notebook cell shows them; forked run processes send theirs over their pipe (bind_run.cpp).
  attn::log_sink_set([](const std::string& line) {
    if (!Py_IsInitialized()) {
      std::fputs(line.c_str(), stderr);
      return;
    }
    py::gil_scoped_acquire gil;
    try {
      py::module_::import("attnlab._feedback").attr("warn_line")(attn::log_line_plain(line));
    } catch (py::error_already_set& e) {
      e.discard_as_unraisable("attnlab warning");
    }
  });
  attnpy::interrupt_install();
  attn::threads_configure(0);  // also ends OpenBLAS's worker threads (core/blas_threads.h)
  attnpy::register_tasks(m);
  attnpy::register_models(m);
  attnpy::register_run(m);
  attnpy::register_analysis(m);
}
