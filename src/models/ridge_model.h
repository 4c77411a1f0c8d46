// RidgeModel: the Model (model_api/model.h) of the random-feature and kernel models (rfa,
// brfa, rfmlp and their kernels, models/rf_models.h): a ridge solver (train/ridge.h) on a
// FeatureMap or a KernelFunction, plus save/load of its fitted read-out.
//
// Shapes as Model's: fit() reads train.X (n × T × d_in) and train.Y (n × T_out × d_out).
// Saved tensors (ModelTensors): "y_mean" (K), "lambda" (scalar), and "V" (P, K) for feature
// models or "X_fit" (n_alpha, T, d_in) and "alpha" (n_alpha, K) for kernel models,
// K = T_out·d_out.
#pragma once

#include <memory>
#include <vector>

#include "model_api/feature_map.h"
#include "model_api/model.h"
#include "train/ridge.h"

namespace attn {

class RidgeModel final : public Model {
 public:
  RidgeModel(std::unique_ptr<FeatureMap> features, RidgeOptions options)
      : solver_(std::move(features), std::move(options)) {}
  RidgeModel(std::unique_ptr<KernelFunction> kernel, RidgeOptions options)
      : solver_(std::move(kernel), std::move(options)) {}

  void fit(const Batch& train, FitLog& log) override { solver_.fit(train, log); }
  std::vector<double> predict(const Batch& data) const override { return solver_.predict(data); }
  // Also logs n_params, the fitted coefficients: the read-out V (P·K) or the dual
  // coefficients alpha (n_alpha·K), plus the K label means added back. Logged here, after the
  // fit, because a distributed fit (train.distributed) calls the solver without fit().
  void evaluate(const Batch& test, FitLog& log) const override;
  void save(ModelTensors& out) const override;
  void load(const ModelTensors& in) override;

  RidgeSolver& solver() { return solver_; }
  const RidgeSolver& solver() const { return solver_; }

 private:
  RidgeSolver solver_;
};

}  // namespace attn
