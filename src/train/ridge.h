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
// grid (from size 512 a tridiagonal or band form with one Cholesky per λ instead, where that
// gives the same numbers to rounding: train/ridge_band.h). With val_fraction > 0 the last
// max(1, round(val_fraction·n)) training samples are held out (train/val_split.h), the model is
// fitted on the rest, and λ is chosen by validation MSE (refit = true then refits on all n at that
// λ). λ = 0 means the minimum-norm solution (pseudo-inverse); a λ below the numerical floor
// (eigenvalues smaller than floor = max eigenvalue · size · machine epsilon are treated as zero) is
// reported (lambdas_below_floor) and solved as the pseudo-inverse on that floor instead of
// producing noise or NaN.
// The Gram is accumulated block by block, so n × P features are never stored in primal.
// A RidgeSolver is used by one thread at a time (predict() caches a kernel model's last
// test kernel for evaluate()).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/choice.h"
#include "core/params.h"
#include "model_api/feature_map.h"
#include "model_api/model.h"

namespace attn {

class Comm;

// train.solver (and the linear model's model.solver): the P × P Gram (primal), the n × n
// kernel (dual), or the smaller of the two (auto).
enum class RidgeForm { automatic, primal, dual };
inline constexpr Choice<RidgeForm> kRidgeForms[] = {
    {RidgeForm::automatic, "auto"}, {RidgeForm::primal, "primal"}, {RidgeForm::dual, "dual"}};
// train.dual_features (see RidgeOptions::dual_features).
enum class DualFeatures { automatic, store, recompute };
inline constexpr Choice<DualFeatures> kDualFeatures[] = {{DualFeatures::automatic, "auto"},
                                                         {DualFeatures::store, "store"},
                                                         {DualFeatures::recompute, "recompute"}};
// The λ path (see RidgeOptions::path).
enum class RidgePath { automatic, eigen, tridiagonal, band };
inline constexpr Choice<RidgePath> kRidgePaths[] = {{RidgePath::automatic, "auto"},
                                                    {RidgePath::eigen, "eigen"},
                                                    {RidgePath::tridiagonal, "tridiagonal"},
                                                    {RidgePath::band, "band"}};

struct RidgeOptions {
  std::vector<double> lambdas = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0};
  double val_fraction = 0.2;
  RidgeForm solver = RidgeForm::automatic;  // kernels: dual
  bool refit = false;
  // Dual feature models: keep Φ of the fit split (store), recompute it per tile (recompute:
  // memory O(n² + tile·P) instead of O(n·P), features computed ≈ n/(2·tile) more times), or
  // store when it fits in memory (auto).
  DualFeatures dual_features = DualFeatures::automatic;
  int64_t dual_tile = 0;  // samples per tile when recomputing (0: as many as memory allows)
  int64_t block = 512;  // samples per feature block
  // The λ path, the same results to rounding (train/ridge_band.h): "eigen" (the
  // eigendecomposition), "tridiagonal" or "band" (solves per λ on a reduced form, where they
  // equal the eigen path), "auto" (by the system's size D: eigen below 512, tridiagonal below
  // 2048, band from there).
  RidgePath path = RidgePath::automatic;
  bool distributed = false;  // train.distributed: fit over the MPI ranks (fit_distributed)
};

// [train] keys of ridge-trained models: lambdas, val_fraction, solver, refit, and the
// execution settings dual_features and distributed (not part of a run's id).
std::vector<ParamSpec> ridge_train_schema();
RidgeOptions ridge_options(const Params& train);
// ridge_options' rules alone (ModelInfo::check_train of the ridge-fitted models): an empty
// train.lambdas, or several λ with nothing held out to choose among them, fails when the spec
// is planned, naming the point, not when its runs start.
void ridge_train_check(const Params& train);

// What a fitted RidgeSolver needs to predict (the spectral form for the λ path is not
// part of it). Feature models: V and y_mean; kernel models: X_fit, alpha and y_mean.
struct RidgeFitted {
  int64_t x_size = 0;         // T·d_in of the training data
  int64_t T_out = 0, d_out = 0;
  double lambda = 0.0;        // the chosen λ
  std::vector<double> y_mean; // K = T_out·d_out, the label mean the read-out adds back
  std::vector<double> V;      // P × K row-major (feature models; empty for kernels)
  std::vector<double> X_fit;  // n_alpha × x_size, the training inputs (kernel models)
  std::vector<double> alpha;  // n_alpha × K row-major, dual coefficients (kernel models)
};

// A linear read-out on a FeatureMap, or kernel ridge on a KernelFunction: the solver. The
// Model around it (save/load, the registry's rfa, rfmlp and kernel models) is
// models/ridge_model.h.
class RidgeSolver final {
 public:
  RidgeSolver(std::unique_ptr<FeatureMap> features, RidgeOptions options);
  RidgeSolver(std::unique_ptr<KernelFunction> kernel, RidgeOptions options);
  ~RidgeSolver();

  void fit(const Batch& train, FitLog& log);
  // fit() with the n training samples spread over the ranks of `comm` (train.distributed;
  // the same stages, src/train/ridge_stages.h): this rank holds samples [first, first + local.n),
  // the contiguous block comm_block(n, rank, size) of the full set. Every rank calls it
  // with its block; afterwards every rank can predict(), and rank 0 also evaluate(). The
  // result equals fit() on all n samples to rounding (one rank: fit() itself, bit for bit).
  // Only rank 0's log is filled; with several ranks it also has the scalar fit_ranks. Errors are
  // thrown on every rank alike (Comm::agree).
  void fit_distributed(const Batch& local, int64_t first, int64_t n, const Comm& comm,
                       FitLog& log);
  std::vector<double> predict(const Batch& data) const;
  // Test error along the whole λ path (oracle choice, labelled as such) and at λ → 0⁺.
  void evaluate(const Batch& test, FitLog& log) const;

  const FeatureMap* feature_map() const { return features_.get(); }
  // Trained read-out V (P × outputs, row-major), primal or recovered from the dual;
  // empty for kernel models.
  std::vector<double> readout() const;
  double chosen_lambda() const;
  // Label mean added back to predictions (K values); empty before fit.
  std::vector<double> label_mean() const;
  // Kernel models: dual coefficients alpha (n_alpha × K, row-major) and the training
  // inputs they weigh (n_alpha × T × d_in); empty for feature models.
  std::vector<double> dual_coefficients() const;
  const std::vector<double>& fit_inputs() const;
  // Everything predict() uses, for saving; UserError before fit().
  RidgeFitted fitted() const;
  // Makes this model fitted from saved parts (checked against the feature map / kernel
  // and each other; UserError on a mismatch). predict() then gives exactly the saved
  // model's predictions; evaluate() refuses (it needs the training data's spectrum).
  void restore(RidgeFitted parts);

  bool is_kernel() const { return kernel_ != nullptr; }

  struct State;  // the fitted state, opaque outside src/train/ridge*.cpp

 private:
  // A state with the data shapes, the λ grid, the fit/validation split of n samples and the
  // primal/dual choice filled in (fit and fit_distributed); UserError if the split leaves too
  // few samples.
  std::unique_ptr<State> state_begin(const TaskShape& shape, int64_t n) const;
  // The fit as stages over `comm` (src/train/ridge_stages.h); fit() is fit_on(comm_self()).
  void fit_on(const Batch& local, int64_t first, int64_t n, const Comm& comm, FitLog& log);

  std::unique_ptr<FeatureMap> features_;
  std::unique_ptr<KernelFunction> kernel_;
  RidgeOptions options_;
  std::unique_ptr<State> state_;
};

}  // namespace attn
