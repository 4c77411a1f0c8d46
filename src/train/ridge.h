// Ridge regression on frozen features or a kernel, over a whole λ grid at once.
//
// Objective (labels centred by their training mean, the intercept):
//   V(λ) = argmin (1/n)‖Yc − Φ V‖² + λ‖V‖²
//   primal  V = (ΦᵀΦ/n + λI)⁻¹ ΦᵀYc/n                     (P × P system, P features)
//   dual    f(x) = k(x)ᵀ (K + λI)⁻¹ Yc,  K = ΦΦᵀ/n, k(x) = Φφ(x)/n  (n × n system)
// A kernel model uses the dual with K = H(X, X)/n, k(x) = H(X, x)/n; since M heads give
// ΦΦᵀ ≈ M·H, an M-head model at λ matches the kernel model at λ/M.
//
// One symmetric eigendecomposition of the P×P Gram or the n×n kernel gives every λ of the
// grid. With val_fraction > 0 the last round(val_fraction·n) training samples are held
// out, the model is fitted on the rest, and λ is chosen by validation MSE (refit = true
// then refits on all n at that λ). λ = 0 means the minimum-norm solution (pseudo-inverse);
// a λ below the numerical floor (eigenvalues smaller than floor = max eigenvalue · size ·
// machine epsilon are treated as zero) is reported (lambdas_below_floor) and solved as
// the pseudo-inverse on that floor instead of producing noise or NaN.
// The Gram is accumulated block by block, so n × P features are never stored in primal.
// A RidgeModel is used by one thread at a time (predict() caches a kernel model's last
// test kernel for evaluate()).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/params.h"
#include "models/feature_map.h"
#include "models/model.h"

namespace attn {

struct RidgeOptions {
  std::vector<double> lambdas = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0};
  double val_fraction = 0.2;
  std::string solver = "auto";  // auto | primal | dual (kernels: dual)
  bool refit = false;
  int64_t block = 512;  // samples per feature block
};

// [train] keys of ridge-trained models: lambdas, val_fraction, solver, refit.
std::vector<ParamSpec> ridge_train_schema();
RidgeOptions ridge_options(const Params& train);

// A linear read-out on a FeatureMap, or kernel ridge on a KernelFunction.
class RidgeModel final : public Model {
 public:
  RidgeModel(std::unique_ptr<FeatureMap> features, RidgeOptions options);
  RidgeModel(std::unique_ptr<KernelFunction> kernel, RidgeOptions options);
  ~RidgeModel() override;

  void fit(const Batch& train, FitLog& log) override;
  std::vector<double> predict(const Batch& data) const override;
  // Test error along the whole λ path (oracle choice, labelled as such) and at λ → 0⁺.
  void evaluate(const Batch& test, FitLog& log) const override;

  const FeatureMap* feature_map() const { return features_.get(); }
  // Trained read-out V (P × outputs, row-major), primal or recovered from the dual;
  // empty for kernel models.
  std::vector<double> readout() const;
  double chosen_lambda() const;

 private:
  struct State;
  std::unique_ptr<FeatureMap> features_;
  std::unique_ptr<KernelFunction> kernel_;
  RidgeOptions options_;
  std::unique_ptr<State> state_;
};

}  // namespace attn
