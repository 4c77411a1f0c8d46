// Model: something that is fitted on a Batch and predicts targets for a Batch.
//
// Shapes: fit() reads train.X (n × T × d_in) and train.Y (n × T_out × d_out);
// predict() returns n × T_out × d_out values in Y's layout (row-major).
// A model is built from its resolved parameters ([model] section), the training
// parameters ([train] section: `n` plus the model's own training keys), the task's shapes,
// and the run seed; every random draw it makes comes from a stream "<model>.<what>" of
// that seed, so a fit is reproducible. A fitted model can be saved and loaded
// (save()/load() as ModelTensors; files: models/model_io.h).
// This is the interface the solvers (train/) and constructions build on; the registry of
// concrete models (models/model_registry.h) sits above them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/params.h"
#include "core/shape_text.h"
#include "tasks/batch.h"

namespace attn {

// What a fit reports besides its predictions: scalars (stored as metrics, e.g. the chosen
// λ or the parameter count) and series (e.g. a learning curve: (step, value) points).
struct FitLog {
  std::vector<std::pair<std::string, double>> scalars;
  struct Point {
    std::string series;
    int64_t step;
    double value;
  };
  std::vector<Point> points;

  void scalar(const std::string& name, double value) { scalars.emplace_back(name, value); }
  void point(const std::string& series, int64_t step, double value) {
    points.push_back({series, step, value});
  }
};

// A fitted model's state as named float64 tensors (C order), what save() writes and
// load() reads back (models/model_io.h stores them as safetensors).
struct ModelTensor {
  std::string name;
  std::vector<int64_t> shape;  // {} is a scalar (one value)
  std::vector<double> data;    // product of shape values
};

struct ModelTensors {
  std::string model;  // registry name (set by the caller; used in messages)
  TaskShape shape;    // the training data's T, d_in, T_out, d_out (set by the caller)
  std::vector<ModelTensor> tensors;

  void add(std::string name, std::vector<int64_t> tensor_shape, std::vector<double> data) {
    tensors.push_back({std::move(name), std::move(tensor_shape), std::move(data)});
  }
  const ModelTensor* find(const std::string& name) const {
    for (const auto& t : tensors)
      if (t.name == name) return &t;
    return nullptr;
  }
  // The values of tensor `name`, which must have shape `expected`; UserError otherwise.
  const std::vector<double>& get(const std::string& name,
                                 const std::vector<int64_t>& expected) const {
    const ModelTensor* t = find(name);
    ATTN_CHECK(t != nullptr, "model " + model + ": the saved model has no tensor '" + name +
                                 "'; save it again with `attnlab fit`");
    ATTN_CHECK(t->shape == expected,
               "model " + model + ": saved tensor '" + name + "' has shape " +
                   shape_text(t->shape) + ", expected " + shape_text(expected) +
                   " for these parameters and data shapes");
    return t->data;
  }
};

class Model {
 public:
  virtual ~Model() = default;
  // Trains on `train`. Throws UserError for settings that cannot work with this data.
  virtual void fit(const Batch& train, FitLog& log) = 0;
  // Predictions for every sample of `data`, n × T_out × d_out.
  virtual std::vector<double> predict(const Batch& data) const = 0;
  // Model-specific diagnostics on the test set, beyond the standard metrics (e.g. a ridge
  // model's error along its whole λ path, labelled as an oracle). Default: none.
  virtual void evaluate(const Batch& /*test*/, FitLog& /*log*/) const {}
  // Attention probabilities for every sample of `data`, one tensor per layer (e.g.
  // "layer0" (n, H, T, T)), for models that have them; default: none.
  virtual std::vector<ModelTensor> attention(const Batch& /*data*/) const { return {}; }
  // Appends the fitted state to `out` (out.model and out.shape are already set), for
  // models/model_io.h. Default: UserError, this model cannot be saved.
  virtual void save(ModelTensors& out) const {
    throw UserError("model " + out.model + " cannot be saved yet");
  }
  // Restores what save() wrote, into a model freshly made by the registry from the same
  // [model]/[train] params, seed and shapes; afterwards predict() works as after fit().
  // Default: UserError, this model cannot be loaded.
  virtual void load(const ModelTensors& in) {
    throw UserError("model " + in.model + " cannot be loaded yet");
  }
};

class Task;
class SharedFreshBatches;

struct ModelContext {
  const Params& model;  // section "model"
  const Params& train;  // section "train"
  const TaskShape& shape;
  uint64_t seed;
  // For models that draw fresh training samples (train.n = 0): the task, and the first
  // sample index they must not reach (the test set's eval.first). Null/0 elsewhere.
  const Task* task = nullptr;
  int64_t index_limit = 0;
  // Fresh-sample training in a lockstep group (experiment/lockstep_group.h): the batches the
  // group's runs share (tasks/shared_batches.h) and this run's party. Null elsewhere.
  SharedFreshBatches* shared_batches = nullptr;
  int shared_party = 0;
};

// A model as the registry lists it (models/model_registry.h).
struct ModelInfo {
  std::string name;
  std::string description;  // one line
  std::vector<ParamSpec> (*schema)();        // [model] keys (besides `name`)
  std::vector<ParamSpec> (*train_schema)();  // [train] keys besides `n` (may be empty)
  std::unique_ptr<Model> (*make)(const ModelContext& context);
  bool fresh_samples = false;  // accepts train.n = 0 (fresh batches every step, or no training)
  bool no_training = false;    // fit() learns nothing (explicit constructions)
  // A RidgeModel fitted on a training set: its runs may be executed as run groups
  // (experiment/run_groups.h), sharing features, kernel and spectrum (train/ridge_share.h).
  bool ridge_fitted = false;
  // Rules between [train] keys (UserError naming them), checked when a spec is planned and
  // when the model is built; null: none.
  void (*check_train)(const Params& train) = nullptr;
};

}  // namespace attn
