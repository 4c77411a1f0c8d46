// attnlab._attnlab: the compiled half of the Python package (the other half,
// python/attnlab/__init__.py, normalises arguments and holds the docstrings users read).
#include <new>

#include "bindings.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/threads.h"
#include "core/version.h"

PYBIND11_MODULE(_attnlab, m) {
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

  attnpy::interrupt_install();
  attn::threads_configure(0);
  attnpy::register_tasks(m);
  attnpy::register_models(m);
  attnpy::register_run(m);
}
