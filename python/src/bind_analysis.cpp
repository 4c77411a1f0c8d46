// The query-key analysis (attnlab qk-stats) from Python: qk_stats(...) returns the JSON text
// of analysis/qk_report.h (the Python layer parses it), computed with the GIL released. Also
// the tables a Python front end follows: list_probes() (analysis/probes.h, as `attnlab list
// probes`) and plot_kinds() (experiment/plot_kinds.h: the kinds scripts/plot_results.py draws).
#include "analysis/probes.h"
#include "analysis/qk_run.h"
#include "bindings.h"
#include "experiment/plot_kinds.h"

namespace attnpy {

namespace {

py::dict list_probes() {
  py::dict out;
  for (const attn::ProbeRow& row : attn::probe_table())
    out[py::str(row.name)] =
        py::dict(py::arg("description") = row.description, py::arg("models") = row.models,
                 py::arg("tasks") = row.tasks, py::arg("eval_instances") = row.eval_instances,
                 py::arg("scalars") = row.scalars, py::arg("doc") = row.doc);
  return out;
}

}  // namespace

void register_analysis(py::module_& m) {
  m.def("list_probes", &list_probes,
        "Every probe of [eval] probes: description, the models, tasks and eval.instances it "
        "applies to (empty: any), its scalars, its doc anchor.");
  m.def(
      "plot_kinds", [] { return attn::plot_kinds().names(); },
      "The [[plot]] kinds of the plot-kind table, in table order.");
  m.def(
      "qk_stats",
      [](const attn::QkStatsOptions& o) {
        py::gil_scoped_release release;
        return attn::qk_stats_run(o).json;
      },
      py::arg("options"), "attnlab qk-stats; returns qk_stats.json's text.");
  py::class_<attn::QkStatsOptions>(m, "QkStatsOptions")
      .def(py::init<>())
      .def_readwrite("file", &attn::QkStatsOptions::file)
      .def_readwrite("layout", &attn::QkStatsOptions::layout)
      .def_readwrite("query_pattern", &attn::QkStatsOptions::query_pattern)
      .def_readwrite("key_pattern", &attn::QkStatsOptions::key_pattern)
      .def_readwrite("heads", &attn::QkStatsOptions::heads)
      .def_readwrite("head_size", &attn::QkStatsOptions::head_size)
      .def_readwrite("layers", &attn::QkStatsOptions::layers)
      .def_readwrite("heatmap_layers", &attn::QkStatsOptions::heatmap_layers)
      .def_readwrite("heatmap_heads", &attn::QkStatsOptions::heatmap_heads)
      .def_readwrite("heatmap_block", &attn::QkStatsOptions::heatmap_block)
      .def_readwrite("out", &attn::QkStatsOptions::out)
      .def_readwrite("seed", &attn::QkStatsOptions::seed)
      .def_readwrite("threads", &attn::QkStatsOptions::threads);
}

}  // namespace attnpy
