// The query-key analysis (attnlab qk-stats) from Python: qk_stats(...) returns the JSON text
// of analysis/qk_report.h (the Python layer parses it), computed with the GIL released.
#include "analysis/qk_run.h"
#include "bindings.h"

namespace attnpy {

void register_analysis(py::module_& m) {
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
