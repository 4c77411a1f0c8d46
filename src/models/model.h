// Model: something that is fitted on a Batch and predicts targets for a Batch.
//
// Shapes: fit() reads train.X (n × T × d_in) and train.Y (n × T_out × d_out);
// predict() returns n × T_out × d_out values in Y's layout (row-major).
// A model is built from its resolved parameters ([model] section), the training
// parameters ([train] section: `n` plus the model's own training keys), the task's shapes,
// and the run seed; every random draw it makes comes from a stream "<model>.<what>" of
// that seed, so a fit is reproducible.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/params.h"
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
};

struct ModelContext {
  const Params& model;  // section "model"
  const Params& train;  // section "train"
  const TaskShape& shape;
  uint64_t seed;
};

struct ModelInfo {
  std::string name;
  std::string description;  // one line
  std::vector<ParamSpec> (*schema)();        // [model] keys (besides `name`)
  std::vector<ParamSpec> (*train_schema)();  // [train] keys besides `n` (may be empty)
  std::unique_ptr<Model> (*make)(const ModelContext& context);
};

// Every model, in the order `attnlab list` shows them.
const std::vector<ModelInfo>& model_registry();
// The model called `name`; UserError with a did-you-mean if there is none.
const ModelInfo& model_find(const std::string& name);

}  // namespace attn
