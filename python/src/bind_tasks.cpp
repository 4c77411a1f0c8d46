// Tasks (sample, list_tasks) and metrics.
#include <string>

#include "bindings.h"
#include "core/choice.h"
#include "core/error.h"
#include "core/memory.h"
#include "io/dataset_file.h"
#include "tasks/task.h"
#include "train/metrics.h"

namespace attnpy {
namespace {

std::vector<int64_t> with_n(int64_t n, const std::vector<int64_t>& tail) {
  std::vector<int64_t> s{n};
  s.insert(s.end(), tail.begin(), tail.end());
  return s;
}

py::tuple sample(const std::string& name, int64_t n, uint64_t seed, int64_t first,
                 const py::dict& task_params) {
  ATTN_CHECK(n >= 0, "n = " + std::to_string(n) + " must be >= 0");
  ATTN_CHECK(first >= 0, "first = " + std::to_string(first) + " must be >= 0");
  attn::Params params = attn::task_default_params(name);
  params_set(params, task_params);
  const auto task = attn::task_make(name, params);
  uint64_t bytes = 0;
  ATTN_CHECK(attn::batch_bytes(task->shape(), n, &bytes),
             "n = " + std::to_string(n) + " is too large to address; lower n");
  attn::memory_check(bytes, "n = " + std::to_string(n) + " samples of " + name,
                     "lower n, or sample several parts with first=");
  attn::Batch b;
  {
    py::gil_scoped_release release;
    if (n > 0) {
      b = attn::task_generate(*task, seed, first, n);
    } else {
      b = attn::batch_alloc(task->shape(), 0);
      task->fill_constants(seed, b);
    }
  }
  const std::string meta =
      attn::dataset_meta_json(b, attn::DatasetMeta{name, seed, first, params.to_json()});
  py::dict out;
  const attn::TaskShape& s = b.shape;
  out["X"] = to_array(std::move(b.X), {n, s.T, s.d_in});
  out["Y"] = to_array(std::move(b.Y), {n, s.T_out, s.d_out});
  for (auto& r : b.raw) {
    const auto shape = with_n(n, r.spec.sample_shape);
    out[py::str(r.spec.name)] = r.spec.integer ? to_array(std::move(r.i64), shape)
                                               : to_array(std::move(r.f64), shape);
  }
  for (auto& c : b.constants)
    out[py::str(c.spec.name)] = c.spec.integer ? to_array(std::move(c.i64), c.spec.sample_shape)
                                               : to_array(std::move(c.f64), c.spec.sample_shape);
  return py::make_tuple(out, meta);
}

py::dict list_tasks() {
  py::dict out;
  for (const auto& info : attn::task_registry()) {
    py::dict row;
    row["description"] = info.description;
    row["params"] = schema_list(info.schema());
    out[py::str(info.name)] = row;
  }
  return out;
}

// Dataset arrays some metrics read (e.g. disj_accuracy: the raw 'disjoint' (n,) and the
// constants query_position, disj_threshold; hop's metric_mask (n, T) and slice label k (n,)):
// 0-d arrays become constants, integer arrays whose first dimension is n raw per-sample arrays.
void add_metric_arrays(attn::Batch& b, const py::dict& extra) {
  for (const auto& [key, value] : extra) {
    const std::string name = py::str(key);
    attn::RawArray r = raw_array_from("metrics: extra array '" + name + "'", value);
    r.spec.name = name;
    if (r.spec.sample_shape.empty()) {
      b.shape.constants.push_back(r.spec);
      b.constants.push_back(std::move(r));
    } else {
      ATTN_CHECK(r.spec.sample_shape[0] == b.n && r.spec.integer,
                 "metrics: extra array '" + name + "' must be 0-d or integers of shape (n, ...)");
      r.spec.sample_shape.erase(r.spec.sample_shape.begin());  // one sample's slice
      b.shape.raw.push_back(r.spec);
      b.raw.push_back(std::move(r));
    }
  }
}

// target: the task's target kind ("real", "binary", "categorical"; None: inferred from Y).
// Besides the metrics, each per-slice series (metrics_compute_slices, e.g. token_error_by_k) as
// a dict {slice value: metric}.
py::dict metrics(const py::handle& pred_obj, const py::handle& y_obj, py::object threshold,
                 py::dict extra, py::object target) {
  const auto Y = as_f64(y_obj, "Y", 3, "(n, T_out, d_out)");
  const auto P = as_f64(pred_obj, "pred", 3, "(n, T_out, d_out)");
  ATTN_CHECK(P.shape(0) == Y.shape(0) && P.shape(1) == Y.shape(1) && P.shape(2) == Y.shape(2),
             "pred has shape " + shape_text(P) + " but Y has shape " + shape_text(Y) +
                 "; they must be equal");
  attn::Batch b;
  b.n = Y.shape(0);
  b.shape.T_out = Y.shape(1);
  b.shape.d_out = Y.shape(2);
  b.Y.assign(Y.data(), Y.data() + Y.size());
  if (!target.is_none())
    b.shape.target =
        attn::choice_parse(target.cast<std::string>(), attn::kTargetKinds, "metrics: target");
  if (!threshold.is_none()) {
    attn::RawArray c;
    c.spec = {"success_threshold", {}, false};
    c.f64 = {threshold.cast<double>()};
    b.shape.constants.push_back(c.spec);
    b.constants.push_back(std::move(c));
  }
  add_metric_arrays(b, extra);
  const std::vector<double> p(P.data(), P.data() + P.size());
  py::dict out;
  for (const auto& [name, value] : attn::metrics_compute(b, p)) out[py::str(name)] = value;
  for (const attn::MetricSeriesPoint& s : attn::metrics_compute_slices(b, p)) {
    if (!out.contains(s.series)) out[py::str(s.series)] = py::dict();
    out[py::str(s.series)].cast<py::dict>()[py::int_(s.step)] = s.value;
  }
  return out;
}

}  // namespace

void register_tasks(py::module_& m) {
  m.def("sample", &sample, py::arg("task"), py::arg("n"), py::arg("seed"), py::arg("first"),
        py::arg("params"), "Samples first..first+n-1 of a task: (dict of arrays, meta JSON).");
  m.def("list_tasks", &list_tasks, "Every task: description and parameter schema.");
  m.def("metrics", &metrics, py::arg("pred"), py::arg("Y"), py::arg("success_threshold"),
        py::arg("extra"), py::arg("target"),
        "train/metrics.h on (n, T_out, d_out) arrays, and the per-slice series.");
}

}  // namespace attnpy
