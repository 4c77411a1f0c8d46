// Models: the registry (list_models), one model object (fit, predict, attention, features,
// save/load) and constructions (a fit on no data, with the task attached).
#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "bindings.h"
#include "core/error.h"
#include "core/float_env.h"
#include "core/interrupt.h"
#include "core/memory.h"
#include "core/step_meter.h"
#include "models/fit_arrays.h"
#include "models/gpt2_checkpoint.h"
#include "models/model_inputs.h"
#include "models/model_io.h"
#include "models/model_registry.h"
#include "models/rf_models.h"
#include "models/train_schema.h"
#include "tasks/task.h"

namespace attnpy {
namespace {

// One model: its record (name, params, seed, data shape) and, once fitted, the C++ model.
// Everything that reads or changes it holds its lock (lock_model()).
struct Core {
  attn::ModelRecord record;
  std::unique_ptr<attn::Model> model;  // null until fitted
  std::unique_ptr<attn::Task> task;    // constructions: the task they were built for
  attn::FitLog log;
  std::map<std::string, std::string> metadata;  // of a loaded file
  // Dataset constants (e.g. the Match tasks' modulus) given to predict/attention/evaluate
  // when the caller passes none: the task's, for constructions.
  std::vector<attn::RawArray> constants;
  std::mutex busy;                              // one computation at a time per model
};

std::string dims_text(const attn::ModelRecord& r, bool inputs) {
  return inputs
             ? "(n, " + std::to_string(r.shape.T) + ", " + std::to_string(r.shape.d_in) + ")"
             : "(n, " + std::to_string(r.shape.T_out) + ", " + std::to_string(r.shape.d_out) + ")";
}

void require_fitted(const Core& c, const char* what) {
  ATTN_CHECK(c.model != nullptr, "model " + c.record.model + " is not fitted; call fit(X, Y) "
                                     "before " + what);
}

// Dataset constants from a dict name -> array (int64 or float64), else the model's own.
void constants_set(const Core& c, const py::dict& given, attn::Batch& b) {
  if (given.empty()) {
    b.constants = c.constants;
  } else {
    for (const auto& [k, v] : given) {
      attn::RawArray r = raw_array_from("constant " + std::string(py::str(k)), v);
      r.spec.name = py::str(k);
      b.constants.push_back(std::move(r));
    }
  }
  for (const auto& r : b.constants) b.shape.constants.push_back(r.spec);
}

// The model's lock, taken with the GIL released: a thread never waits for it while holding
// the GIL, so the holder can always take the GIL (e.g. for the Ctrl-C check).
std::unique_lock<std::mutex> lock_model(Core& c) {
  std::unique_lock<std::mutex> lock(c.busy, std::defer_lock);
  py::gil_scoped_release release;
  lock.lock();
  return lock;
}

// X checked against a fitted model's input shape, as a Batch (Y left empty).
attn::Batch inputs_for(const Core& c, const py::handle& X_obj, const py::dict& constants) {
  const auto X = as_f64(X_obj, "X", 3, dims_text(c.record, true));
  ATTN_CHECK(X.shape(1) == c.record.shape.T && X.shape(2) == c.record.shape.d_in,
             "X has shape " + shape_text(X) + " but model " + c.record.model +
                 " was fitted on inputs " + dims_text(c.record, true) +
                 "; use data of the same task and parameters");
  attn::Batch b;
  b.n = X.shape(0);
  b.shape.T = c.record.shape.T;
  b.shape.d_in = c.record.shape.d_in;
  b.shape.T_out = c.record.shape.T_out;
  b.shape.d_out = c.record.shape.d_out;
  b.X.assign(X.data(), X.data() + X.size());
  constants_set(c, constants, b);
  return b;
}

std::unique_ptr<Core> core_new(const std::string& name, uint64_t seed, const py::dict& params) {
  auto c = std::make_unique<Core>();
  c->record = attn::model_record_make(name, seed, attn::TaskShape{});
  params_set(c->record.model_params, params);
  return c;
}

// Fresh [train] params of the model with the given values set.
attn::Params train_params_make(const Core& c, const py::dict& train) {
  attn::Params p = attn::model_record_make(c.record.model, c.record.seed, {}).train_params;
  params_set(p, train);
  return p;
}

// A gradient fit's steps handed to progress(done, total) (None: nothing), with the GIL taken,
// at most every 0.2 s and at the last step; an exception it raises stops the fit and propagates
// (py::error_already_set). Called on the fitting thread, whose GIL is released.
attn::StepMeter step_meter_py(const py::object& progress) {
  if (progress.is_none()) return {};
  auto last = std::make_shared<std::chrono::steady_clock::time_point>();
  return [progress, last](int64_t done, int64_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (done < total && now - *last < std::chrono::milliseconds(200)) return;
    *last = now;
    py::gil_scoped_acquire gil;
    progress(done, total);
  };
}

void fit_batch(Core& c, const attn::Batch& data, const py::object& progress,
               int64_t index_limit = std::numeric_limits<int64_t>::max()) {
  const attn::ModelInfo& info = attn::model_find(c.record.model);
  attn::StepMeterScope meter(step_meter_py(progress));
  py::gil_scoped_release release;
  c.model.reset();
  c.log = attn::FitLog{};
  auto model = info.make(attn::ModelContext{c.record.model_params, c.record.train_params,
                                            c.record.shape, c.record.seed, c.task.get(),
                                            index_limit});
  attn::model_fit_checked(*model, data, c.log,
                          "fit(X, Y)");  // may throw; then the model stays unfitted
  c.model = std::move(model);
}

// Fit on arrays (models/fit_arrays.h), as `attnlab fit --in FILE` does.
void core_fit(Core& c, const py::handle& X_obj, const py::handle& Y_obj, const py::dict& train,
              const py::object& progress) {
  auto lock = lock_model(c);
  const auto X = as_f64(X_obj, "X", 3, "(n, T, d_in)");
  const auto Y = as_f64(Y_obj, "Y", 3, "(n, T_out, d_out)");
  ATTN_CHECK(X.shape(0) == Y.shape(0), "X has " + std::to_string(X.shape(0)) + " samples " +
                                           shape_text(X) + " but Y has " +
                                           std::to_string(Y.shape(0)) + " " + shape_text(Y) +
                                           "; give one target per input");
  attn::ModelRecord record = c.record;
  record.train_params = train_params_make(c, train);
  attn::Batch b;
  b.n = X.shape(0);
  b.shape.T = X.shape(1);
  b.shape.d_in = X.shape(2);
  b.shape.T_out = Y.shape(1);
  b.shape.d_out = Y.shape(2);
  b.X.assign(X.data(), X.data() + X.size());
  b.Y.assign(Y.data(), Y.data() + Y.size());
  c.model.reset();
  c.task.reset();
  c.constants.clear();
  c.log = attn::FitLog{};
  {
    attn::StepMeterScope meter(step_meter_py(progress));
    py::gil_scoped_release release;
    // may throw; then the model stays unfitted
    c.model = attn::model_fit_arrays(record, b, train.contains("n"), c.log, {"fit(X, Y)", "X"});
  }
  c.record = std::move(record);
}

// A construction's "fit": no data, the task (if named) attached, the shape from it.
void core_fit_empty(Core& c, const std::string& task_name, const py::dict& task_params,
                    const py::dict& train, const std::vector<int64_t>& shape) {
  auto lock = lock_model(c);
  attn::TaskShape s;
  std::unique_ptr<attn::Task> task;
  if (!task_name.empty()) {
    attn::Params tp = attn::task_default_params(task_name);
    params_set(tp, task_params);
    task = attn::task_make(task_name, tp);
    s = task->shape();
  } else {
    ATTN_CHECK(shape.size() == 4, "give task= or shape=(T, d_in, T_out, d_out)");
    s.T = shape[0];
    s.d_in = shape[1];
    s.T_out = shape[2];
    s.d_out = shape[3];
  }
  attn::Params tp = train_params_make(c, train);
  c.model.reset();
  c.record.train_params = std::move(tp);
  c.record.shape = s;
  attn::Batch empty;
  empty.shape = s;
  if (task) {
    empty = attn::batch_alloc(s, 0);
    task->fill_constants(c.record.seed, empty);
  }
  c.constants = empty.constants;
  c.task = std::move(task);
  fit_batch(c, empty, py::none());
}

// Fits on samples 0 .. n-1 of a task drawn with the model's seed, as one run of a sweep does
// (experiment/run_point.cpp); n = 0: the model draws fresh samples below eval_first.
void core_fit_task(Core& c, const std::string& task_name, const py::dict& task_params,
                   const py::dict& train, int64_t eval_first, const py::object& progress) {
  auto lock = lock_model(c);
  attn::Params tpar = attn::task_default_params(task_name);
  params_set(tpar, task_params);
  auto task = attn::task_make(task_name, tpar);
  attn::Params tp = train_params_make(c, train);
  const int64_t n = tp.get_int("n");
  const attn::ModelInfo& info = attn::model_find(c.record.model);
  ATTN_CHECK(n > 0 || info.fresh_samples,
             "model " + c.record.model +
                 " needs a training set: train.n = 0 (fresh samples) is only "
                 "for gradient-trained models");
  ATTN_CHECK(eval_first >= n, "eval_first = " + std::to_string(eval_first) +
                                  " is below train.n = " + std::to_string(n) +
                                  "; the test samples must not overlap the training set");
  attn::Batch b;
  {
    py::gil_scoped_release release;
    if (n > 0) {
      b = attn::task_generate(*task, c.record.seed, 0, n);
    } else {
      b = attn::batch_alloc(task->shape(), 0);
      task->fill_constants(c.record.seed, b);
    }
  }
  c.model.reset();
  c.record.train_params = std::move(tp);
  c.record.shape = task->shape();
  c.constants = b.constants;
  c.task = std::move(task);
  fit_batch(c, b, progress, eval_first);
}

py::array core_predict(Core& c, const py::handle& X_obj, const py::dict& constants) {
  auto lock = lock_model(c);
  require_fitted(c, "predict(X)");
  const attn::Batch b = inputs_for(c, X_obj, constants);
  const std::vector<int64_t> shape{b.n, c.record.shape.T_out, c.record.shape.d_out};
  if (b.n == 0) return to_array(std::vector<double>{}, shape);
  std::vector<double> pred;
  {
    py::gil_scoped_release release;
    pred = attn::model_predict_checked(*c.model, b, "predict(X)");
  }
  return to_array(std::move(pred), shape);
}

py::dict core_attention(Core& c, const py::handle& X_obj, const py::dict& constants) {
  auto lock = lock_model(c);
  require_fitted(c, "attention(X)");
  const attn::Batch b = inputs_for(c, X_obj, constants);
  ATTN_CHECK(b.n >= 1, "X has no samples; give at least one");
  std::vector<attn::ModelTensor> maps;
  {
    py::gil_scoped_release release;
    const attn::SubnormalsFlushed flush;  // as the command line computes (core/float_env.h)
    maps = c.model->attention(b);
  }
  ATTN_CHECK(!maps.empty(), "model " + c.record.model + " has no attention matrices (only "
                            "attention, third_order and transformer have)");
  py::dict out;
  for (auto& t : maps) out[py::str(t.name)] = to_array(std::move(t.data), t.shape);
  return out;
}

py::dict log_dict(const attn::FitLog& log);

// Model::evaluate on (X, Y): the model's own diagnostics (e.g. a construction's margins and
// the bits it needs; a ridge model's error along its λ path), as {"scalars", "series"}.
py::dict core_evaluate(Core& c, const py::handle& X_obj, const py::handle& Y_obj,
                       const py::dict& constants) {
  auto lock = lock_model(c);
  require_fitted(c, "evaluate(X, Y)");
  attn::Batch b = inputs_for(c, X_obj, constants);
  const auto Y = as_f64(Y_obj, "Y", 3, dims_text(c.record, false));
  ATTN_CHECK(
      Y.shape(0) == b.n && Y.shape(1) == c.record.shape.T_out && Y.shape(2) == c.record.shape.d_out,
      "Y has shape " + shape_text(Y) + " but model " + c.record.model + " predicts " +
          dims_text(c.record, false) + " for " + std::to_string(b.n) + " inputs");
  ATTN_CHECK(b.n >= 1, "X has no samples; give at least one");
  b.Y.assign(Y.data(), Y.data() + Y.size());
  attn::FitLog log;
  {
    py::gil_scoped_release release;
    const attn::SubnormalsFlushed flush;
    attn::model_predict_checked(
        *c.model, b, "evaluate(X, Y)");  // evaluate() may reuse the work of the predict() before it
    c.model->evaluate(b, log);
  }
  return log_dict(log);
}

// Samples per features() call of the loop that polls for Ctrl-C between calls: a multiple of
// the map's block size (the same bits as one call over all samples), at most 4096 samples and
// about 2^26 flops of work (a sample costs about dim × (T·d_in + 2T): rfmlp's GEMM row, rfa's
// M heads × (e + 2N)), so that a poll comes every few tens of milliseconds however wide the
// map. A single block of a very wide map can still take longer (the map does not poll inside).
int64_t features_chunk(const attn::FeatureMap& map, const attn::TaskShape& s) {
  int64_t block = 256;
  if (const auto* r = dynamic_cast<const attn::RfaFeatures*>(&map)) block = r->block_size();
  if (const auto* m = dynamic_cast<const attn::RfmlpFeatures*>(&map)) block = m->block_size();
  const double per_block = static_cast<double>(block) * static_cast<double>(map.dim()) *
                           static_cast<double>(s.x_size() + 2 * s.T);
  const double blocks = std::min(static_cast<double>(4096 / block), 67108864.0 / per_block);
  return block * std::max<int64_t>(1, static_cast<int64_t>(blocks));
}

py::dict core_features(Core& c, const py::handle& X_obj) {
  auto lock = lock_model(c);
  attn::rf_feature_model_check(c.record.model);
  const auto X = as_f64(X_obj, "X", 3, "(n, T, d_in)");
  ATTN_CHECK(X.shape(0) >= 1, "X has no samples (shape " + shape_text(X) + "); give at least one");
  attn::TaskShape s;
  s.T = X.shape(1);
  s.d_in = X.shape(2);
  s.T_out = 1;
  s.d_out = 1;
  const auto map =
      attn::rf_feature_map_make(c.record.model, c.record.model_params, s, c.record.seed);
  const int64_t n = X.shape(0), dim = map->dim();
  uint64_t cells = 0;
  ATTN_CHECK(attn::checked_mul(static_cast<uint64_t>(n), static_cast<uint64_t>(dim), &cells) &&
                 cells < (uint64_t{1} << 60),
             "the features of " + std::to_string(n) + " samples are too large to address");
  attn::memory_check(8 * cells, "Phi (" + std::to_string(n) + " x " + std::to_string(dim) + ")",
                     "lower model.heads / model.width, or use fewer samples");
  attn::ModelTensor W;
  ATTN_ASSERT(attn::rf_feature_weights(*map, &W), "a feature model without weights");
  std::vector<double> Phi;
  {
    const double* x = X.data();
    py::gil_scoped_release release;
    const attn::SubnormalsFlushed flush;
    // Reserved, not filled: zeroing a few GB up front takes seconds in which nothing polls.
    // Each chunk's rows are zeroed (resize within the capacity: no move) just before they are
    // written.
    Phi.reserve(static_cast<size_t>(n * dim));
    const int64_t chunk = features_chunk(*map, s);
    for (int64_t lo = 0; lo < n; lo += chunk) {
      attn::interrupt_poll();
      const int64_t k = std::min(chunk, n - lo);
      Phi.resize(static_cast<size_t>((lo + k) * dim));
      map->features(x + lo * s.x_size(), k, Phi.data() + lo * dim);
    }
  }
  py::dict out;
  out[py::str(W.name)] = to_array(std::move(W.data), W.shape);
  out["Phi"] = to_array(std::move(Phi), {n, dim});
  return out;
}

// save(path) (gpt2 = false) or export_gpt2(path) (models/gpt2_checkpoint.h).
void core_write(Core& c, const std::string& path, bool gpt2) {
  auto lock = lock_model(c);
  require_fitted(c, gpt2 ? "export_gpt2(path)" : "save(path)");
  ATTN_CHECK(path.size() > 12 && path.compare(path.size() - 12, 12, ".safetensors") == 0,
             path + ": the model file must end in .safetensors, e.g. model.safetensors");
  py::gil_scoped_release release;
  if (gpt2) {
    attn::gpt2_export(path, c.record, *c.model);
  } else {
    attn::model_save(path, c.record, *c.model);
  }
}

void core_save(Core& c, const std::string& path) { core_write(c, path, false); }
void core_export_gpt2(Core& c, const std::string& path) { core_write(c, path, true); }

// A saved model (model_load), or with `gpt2` a GPT-2 checkpoint (models/gpt2_checkpoint.h).
std::unique_ptr<Core> core_load_any(const std::string& path, const attn::Gpt2ImportOptions* gpt2) {
  attn::LoadedModel loaded;
  {
    py::gil_scoped_release release;
    loaded = gpt2 ? attn::gpt2_import(path, *gpt2) : attn::model_load(path);
  }
  auto c = std::make_unique<Core>();
  c->record = std::move(loaded.record);
  c->model = std::move(loaded.model);
  c->metadata = std::move(loaded.metadata);
  return c;
}

std::unique_ptr<Core> core_load(const std::string& path) { return core_load_any(path, nullptr); }

std::unique_ptr<Core> core_import_gpt2(const std::string& path, int64_t heads, int64_t T,
                                       int64_t T_out, const std::string& dtype) {
  const attn::Gpt2ImportOptions o{heads, T, T_out, dtype};
  return core_load_any(path, &o);
}

py::dict shape_dict(const attn::TaskShape& s) {
  py::dict d;
  d["T"] = s.T;
  d["d_in"] = s.d_in;
  d["T_out"] = s.T_out;
  d["d_out"] = s.d_out;
  return d;
}

py::dict log_dict(const attn::FitLog& log) {
  py::dict scalars, series;
  for (const auto& [name, value] : log.scalars) scalars[py::str(name)] = value;
  std::map<std::string, std::pair<std::vector<int64_t>, std::vector<double>>> by_name;
  std::vector<std::string> order;
  for (const auto& p : log.points) {
    auto [it, fresh] = by_name.try_emplace(p.series);
    if (fresh) order.push_back(p.series);
    it->second.first.push_back(p.step);
    it->second.second.push_back(p.value);
  }
  for (const auto& name : order) {
    auto& [steps, values] = by_name[name];
    const auto k = static_cast<int64_t>(steps.size());
    series[py::str(name)] =
        py::make_tuple(to_array(std::move(steps), {k}), to_array(std::move(values), {k}));
  }
  py::dict out;
  out["scalars"] = scalars;
  out["series"] = series;
  return out;
}

py::dict list_models() {
  py::dict out;
  for (const auto& info : attn::model_registry()) {
    const std::vector<attn::ParamSpec> train = attn::model_train_schema(info);
    py::dict row;
    row["description"] = info.description;
    row["params"] = schema_list(info.schema());
    row["train_params"] = schema_list(train);
    row["fresh_samples"] = info.fresh_samples;
    out[py::str(info.name)] = row;
  }
  return out;
}

}  // namespace

void register_models(py::module_& m) {
  py::class_<Core>(m, "ModelCore", "The C++ half of attnlab.Model (use attnlab.model()).")
      .def(py::init(&core_new), py::arg("name"), py::arg("seed"), py::arg("params"))
      .def_static("load", &core_load, py::arg("path"))
      .def_static("import_gpt2", &core_import_gpt2, py::arg("path"), py::arg("heads"), py::arg("T"),
                  py::arg("T_out"), py::arg("dtype"))
      .def("fit", &core_fit, py::arg("X"), py::arg("Y"), py::arg("train"),
           py::arg("progress") = py::none())
      .def("fit_empty", &core_fit_empty, py::arg("task"), py::arg("task_params"), py::arg("train"),
           py::arg("shape"))
      .def("fit_task", &core_fit_task, py::arg("task"), py::arg("task_params"), py::arg("train"),
           py::arg("eval_first"), py::arg("progress") = py::none())
      .def("predict", &core_predict, py::arg("X"), py::arg("constants"))
      .def("attention", &core_attention, py::arg("X"), py::arg("constants"))
      .def("evaluate", &core_evaluate, py::arg("X"), py::arg("Y"), py::arg("constants"))
      .def("features", &core_features, py::arg("X"))
      .def("save", &core_save, py::arg("path"))
      .def("export_gpt2", &core_export_gpt2, py::arg("path"))
      .def_property_readonly("name", [](const Core& c) { return c.record.model; })
      .def_property_readonly("seed", [](const Core& c) { return c.record.seed; })
      .def_property_readonly("fitted",
                             [](Core& c) {
                               auto lock = lock_model(c);
                               return c.model != nullptr;
                             })
      .def_property_readonly("params",
                             [](const Core& c) { return params_dict(c.record.model_params); })
      .def_property_readonly("train_params",
                             [](Core& c) -> py::object {
                               auto lock = lock_model(c);
                               if (!c.model) return py::none();
                               return params_dict(c.record.train_params);
                             })
      .def_property_readonly("shape",
                             [](Core& c) -> py::object {
                               auto lock = lock_model(c);
                               if (!c.model) return py::none();
                               return shape_dict(c.record.shape);
                             })
      .def_property_readonly("log",
                             [](Core& c) {
                               auto lock = lock_model(c);
                               return log_dict(c.log);
                             })
      .def_property_readonly("metadata", [](const Core& c) { return c.metadata; });
  m.def("list_models", &list_models, "Every model: description, [model] and [train] schemas.");
}

}  // namespace attnpy
