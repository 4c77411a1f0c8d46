// RidgeSolver after fit(): predictions, the test-set λ path, and the fitted read-out's parts
// (fitted()/restore(), which models/ridge_model.cpp saves and loads).
#include "train/ridge.h"

#include <lapacke.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/error.h"
#include "core/memory.h"
#include "train/metrics.h"
#include "train/ridge_state.h"

namespace attn {

std::vector<double> RidgeSolver::readout() const {
  if (!state_ || state_->V.size() == 0) return {};
  std::vector<double> out(static_cast<size_t>(state_->V.size()));
  Eigen::Map<RowMat>(out.data(), state_->V.rows(), state_->V.cols()) = state_->V;
  return out;
}

double RidgeSolver::chosen_lambda() const { return state_ ? state_->lambda : NAN; }

std::vector<double> RidgeSolver::label_mean() const {
  if (!state_) return {};
  return std::vector<double>(state_->y_mean.data(), state_->y_mean.data() + state_->y_mean.size());
}

std::vector<double> RidgeSolver::dual_coefficients() const {
  if (!state_ || !kernel_) return {};
  std::vector<double> out(static_cast<size_t>(state_->alpha.size()));
  Eigen::Map<RowMat>(out.data(), state_->alpha.rows(), state_->alpha.cols()) = state_->alpha;
  return out;
}

const std::vector<double>& RidgeSolver::fit_inputs() const {
  static const std::vector<double> empty;
  return state_ && kernel_ ? state_->X_fit : empty;
}

RidgeFitted RidgeSolver::fitted() const {
  ATTN_CHECK(state_ != nullptr, "a ridge model cannot be saved before fit()");
  const State& st = *state_;
  RidgeFitted f;
  f.x_size = st.x_size;
  f.T_out = st.T_out;
  f.d_out = st.d_out;
  f.lambda = st.lambda;
  f.y_mean = label_mean();
  if (kernel_) {
    // After a refit X_fit holds all n samples; alpha weighs its first n_alpha.
    f.X_fit.assign(st.X_fit.begin(), st.X_fit.begin() + st.n_alpha * st.x_size);
    f.alpha = dual_coefficients();
  } else {
    f.V = readout();
  }
  return f;
}

void RidgeSolver::restore(RidgeFitted f) {
  const int64_t K = f.T_out * f.d_out;
  ATTN_CHECK(f.x_size >= 1 && K >= 1 && static_cast<int64_t>(f.y_mean.size()) == K,
             "saved ridge model: y_mean has " + std::to_string(f.y_mean.size()) +
                 " values for " + std::to_string(K) + " outputs");
  auto s = std::make_unique<State>();
  s->restored = true;
  s->x_size = f.x_size;
  s->T_out = f.T_out;
  s->d_out = f.d_out;
  s->K = K;
  s->lambda = f.lambda;
  s->lambdas = {f.lambda};
  s->y_mean = Eigen::Map<const Eigen::VectorXd>(f.y_mean.data(), K);
  if (kernel_) {
    const int64_t n_alpha = static_cast<int64_t>(f.alpha.size()) / K;
    ATTN_CHECK(n_alpha >= 1 && n_alpha * K == static_cast<int64_t>(f.alpha.size()) &&
                   static_cast<int64_t>(f.X_fit.size()) == n_alpha * f.x_size,
               "saved kernel ridge model: alpha (" + std::to_string(f.alpha.size()) +
                   " values) and X_fit (" + std::to_string(f.X_fit.size()) +
                   " values) do not describe the same training samples");
    s->primal = false;
    s->n_alpha = s->n_fit = n_alpha;
    s->alpha = Eigen::Map<const RowMat>(f.alpha.data(), n_alpha, K);
    s->X_fit = std::move(f.X_fit);
  } else {
    s->P = features_->dim();
    ATTN_CHECK(static_cast<int64_t>(f.V.size()) == s->P * K,
               "saved ridge model: V has " + std::to_string(f.V.size()) +
                   " values, the feature map " + std::to_string(s->P) + " × " + std::to_string(K) +
                   " outputs");
    s->V = Eigen::Map<const RowMat>(f.V.data(), s->P, K);
  }
  state_ = std::move(s);
}

std::vector<double> RidgeSolver::predict(const Batch& data) const {
  ATTN_CHECK(state_ != nullptr, "predict() before fit()");
  const State& st = *state_;
  ATTN_CHECK(data.shape.x_size() == st.x_size && data.shape.T_out * data.shape.d_out == st.K,
             "predict(): the data's shapes differ from the training data's");
  const int64_t n = data.n, K = st.K, B = std::max<int64_t>(1, options_.block);
  std::vector<double> out(static_cast<size_t>(n * K));
  Eigen::Map<RowMat> O(out.data(), n, K);
  if (kernel_) {
    State& cache = *state_;
    cache.cached_kernel.resize(n, st.n_alpha);
    for (int64_t lo = 0; lo < n; lo += B) {
      const int64_t m = std::min(B, n - lo);
      kernel_->kernel(data.x(lo), m, st.X_fit.data(), st.n_alpha,
                      cache.cached_kernel.data() + lo * st.n_alpha);
    }
    cache.cached_x = data.X.data();
    cache.cached_n = n;
    O = (cache.cached_kernel * st.alpha) / static_cast<double>(st.n_alpha);
    O.rowwise() += st.y_mean.transpose();
    return out;
  }
  // In a run group the test set's features are computed once for all its runs (ridge_share.h).
  const RowMat* shared = ridge_shared_test_features(*features_, data, B);
  RowMat F(shared ? 0 : std::min(B, std::max<int64_t>(n, 1)), st.P);  // one buffer for every block
  ridge_advise_huge(F);
  for (int64_t lo = 0; lo < n; lo += B) {
    const int64_t m = std::min(B, n - lo);
    if (shared) {
      O.middleRows(lo, m).noalias() = shared->middleRows(lo, m) * st.V;
    } else {
      features_->features(data.x(lo), m, F.data());
      O.middleRows(lo, m).noalias() = F.topRows(m) * st.V;
    }
    O.middleRows(lo, m).rowwise() += st.y_mean.transpose();
  }
  return out;
}

void RidgeSolver::evaluate(const Batch& test, FitLog& log) const {
  ATTN_CHECK(state_ != nullptr, "evaluate() before fit()");
  const State& st = *state_;
  ATTN_CHECK(!st.restored, "a ridge model loaded from a file has its read-out but not the "
                           "training data's spectrum, so it cannot evaluate the λ path; refit it");
  // The fit split's models along the λ path (with the fit split's label mean), and λ → 0⁺.
  std::vector<double> lambdas = st.lambdas;
  lambdas.push_back(0.0);
  ColMat path = ridge_path_predictions(st, features_.get(), kernel_.get(), test, 0, test.n,
                                       options_.block, lambdas);
  const int64_t K = st.K;
  std::vector<double> flat;
  std::vector<double> nmse(lambdas.size(), NAN);
  for (size_t l = 0; l < lambdas.size(); ++l) {
    ColMat pred = path.middleCols(static_cast<int64_t>(l) * K, K);
    pred.rowwise() += st.y_mean_fit.transpose();
    ridge_predictions_nmse(test, pred, flat, &nmse[l]);
  }
  double best = std::numeric_limits<double>::infinity();
  size_t best_index = 0;
  for (size_t l = 0; l < st.lambdas.size(); ++l) {
    log.point("test_nmse_path", static_cast<int64_t>(l), nmse[l]);
    if (nmse[l] < best) {
      best = nmse[l];
      best_index = l;
    }
  }
  log.scalar("test_nmse_oracle", best);
  log.scalar("lambda_oracle", st.lambdas[best_index]);
  log.scalar("test_nmse_minnorm", nmse.back());
}

}  // namespace attn
