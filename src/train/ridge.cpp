// Ridge over a λ grid from one eigendecomposition (LAPACK dsyevd), primal or dual.
#include "train/ridge.h"

#include <lapacke.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/memory.h"
#include "core/threads.h"
#include "train/metrics.h"

namespace attn {

using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ColMat = Eigen::MatrixXd;

struct RidgeModel::State {
  bool primal = true;
  int64_t x_size = 0, P = 0, K = 0, T_out = 0, d_out = 0;
  int64_t n_fit = 0, n_val = 0;
  Eigen::VectorXd y_mean;  // K
  // Spectral form of the fit split: eigenvalues (clipped at 0), eigenvectors, C = Qᵀ B.
  Eigen::VectorXd eig;
  ColMat Q, C;
  double floor = 0.0;
  std::vector<double> lambdas;
  int chosen = 0;
  double lambda = 0.0;
  // Final read-out: V (P × K) for feature models; alpha (n × K) and the training inputs for
  // kernel models. Dual feature models also keep the fit features for the λ path.
  ColMat V, alpha;
  RowMat Phi_fit;
  std::vector<double> X_fit;
  int64_t n_alpha = 0;
  // predict() keeps the last data set's kernel against X_fit, so that evaluate() on the
  // same test set does not recompute it (kernel evaluations dominate kernel models).
  const double* cached_x = nullptr;
  int64_t cached_n = -1;
  RowMat cached_kernel;
  // Restored from saved parts: only the read-out, no spectral form (evaluate() refuses).
  bool restored = false;
};

namespace {

// Shrinkage 1/(Λ + λ) with the numerical floor: λ = 0 or below the floor gives the
// pseudo-inverse on the eigenvalues above the floor.
double shrink(double eig, double lambda, double floor) {
  if (lambda <= floor) return eig > floor ? 1.0 / eig : 0.0;
  return 1.0 / (std::max(eig, 0.0) + lambda);
}

// Symmetric eigendecomposition of the lower triangle of A (overwritten by eigenvectors).
Eigen::VectorXd eigen_symmetric(ColMat& A, const std::string& what) {
  const lapack_int n = static_cast<lapack_int>(A.rows());
  Eigen::VectorXd w(n);
  // OpenBLAS stays at 1 thread here: a threaded LAPACK call rounds differently with the
  // thread count, and results must be bit-identical on 1 or 2 threads.
  const int info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'L', n, A.data(), n, w.data());
  ATTN_CHECK(info == 0, "the eigendecomposition of the " + what + " failed (LAPACK info " +
                            std::to_string(info) + "); the features may contain NaN or inf");
  return w;
}

void predictions_nmse(const Batch& data, const ColMat& pred_rows, std::vector<double>& flat,
                      double* nmse) {
  // pred_rows is n × K in column-major; flatten to Y's row-major layout.
  const int64_t n = pred_rows.rows(), K = pred_rows.cols();
  flat.resize(static_cast<size_t>(n * K));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < K; ++k) flat[i * K + k] = pred_rows(i, k);
  for (const auto& [name, value] : metrics_compute(data, flat))
    if (name == "nmse") *nmse = value;
}

}  // namespace

std::vector<ParamSpec> ridge_train_schema() {
  return {
      param_real_list("lambdas", RidgeOptions().lambdas,
                      "ridge penalties λ (objective (1/n)|y - f|^2 + λ|V|^2); 0 = minimum norm", 0.0),
      param_real("val_fraction", 0.2,
                 "fraction of the training set held out to choose λ (0: needs a single λ)", 0.0, 0.9),
      param_choice("solver", "auto", {"auto", "primal", "dual"},
                   "P x P Gram (primal) or n x n kernel (dual); auto picks the smaller"),
      param_bool("refit", false, "refit on the whole training set at the chosen λ"),
  };
}

RidgeOptions ridge_options(const Params& train) {
  RidgeOptions o;
  o.lambdas = train.get_real_list("lambdas");
  o.val_fraction = train.get_real("val_fraction");
  o.solver = train.get_string("solver");
  o.refit = train.get_bool("refit");
  ATTN_CHECK(!o.lambdas.empty(), "train.lambdas is empty; give at least one λ, e.g. [1e-3]");
  ATTN_CHECK(o.lambdas.size() == 1 || o.val_fraction > 0,
             "train.lambdas has " + std::to_string(o.lambdas.size()) +
                 " values but train.val_fraction = 0 leaves nothing to choose λ on; set "
                 "train.val_fraction (e.g. 0.2) or give one λ");
  return o;
}

RidgeModel::RidgeModel(std::unique_ptr<FeatureMap> features, RidgeOptions options)
    : features_(std::move(features)), options_(std::move(options)) {}

RidgeModel::RidgeModel(std::unique_ptr<KernelFunction> kernel, RidgeOptions options)
    : kernel_(std::move(kernel)), options_(std::move(options)) {
  ATTN_CHECK(options_.solver != "primal",
             "train.solver = primal is not possible for a kernel model; use dual or auto");
}

RidgeModel::~RidgeModel() = default;

std::vector<double> RidgeModel::readout() const {
  if (!state_ || state_->V.size() == 0) return {};
  std::vector<double> out(static_cast<size_t>(state_->V.size()));
  Eigen::Map<RowMat>(out.data(), state_->V.rows(), state_->V.cols()) = state_->V;
  return out;
}

double RidgeModel::chosen_lambda() const { return state_ ? state_->lambda : NAN; }

std::vector<double> RidgeModel::label_mean() const {
  if (!state_) return {};
  return std::vector<double>(state_->y_mean.data(), state_->y_mean.data() + state_->y_mean.size());
}

std::vector<double> RidgeModel::dual_coefficients() const {
  if (!state_ || !kernel_) return {};
  std::vector<double> out(static_cast<size_t>(state_->alpha.size()));
  Eigen::Map<RowMat>(out.data(), state_->alpha.rows(), state_->alpha.cols()) = state_->alpha;
  return out;
}

const std::vector<double>& RidgeModel::fit_inputs() const {
  static const std::vector<double> empty;
  return state_ && kernel_ ? state_->X_fit : empty;
}

RidgeFitted RidgeModel::fitted() const {
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

void RidgeModel::restore(RidgeFitted f) {
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
               "saved ridge model: V has " + std::to_string(f.V.size()) + " values, the feature map " +
                   std::to_string(s->P) + " × " + std::to_string(K) + " outputs");
    s->V = Eigen::Map<const RowMat>(f.V.data(), s->P, K);
  }
  state_ = std::move(s);
}

void RidgeModel::save(ModelTensors& out) const {
  RidgeFitted f = fitted();
  const int64_t K = f.T_out * f.d_out;
  ATTN_CHECK(out.shape.x_size() == f.x_size && out.shape.y_size() == K,
             "model " + out.model + ": the shapes to save differ from the training data's");
  out.add("y_mean", {K}, std::move(f.y_mean));
  out.add("lambda", {}, {f.lambda});
  if (kernel_) {
    const int64_t n_alpha = static_cast<int64_t>(f.alpha.size()) / K;
    out.add("X_fit", {n_alpha, out.shape.T, out.shape.d_in}, std::move(f.X_fit));
    out.add("alpha", {n_alpha, K}, std::move(f.alpha));
  } else {
    out.add("V", {features_->dim(), K}, std::move(f.V));
  }
}

void RidgeModel::load(const ModelTensors& in) {
  RidgeFitted f;
  f.x_size = in.shape.x_size();
  f.T_out = in.shape.T_out;
  f.d_out = in.shape.d_out;
  const int64_t K = in.shape.y_size();
  f.y_mean = in.get("y_mean", {K});
  f.lambda = in.get("lambda", {})[0];
  if (kernel_) {
    const ModelTensor* a = in.find("alpha");
    const int64_t n_alpha = a && a->shape.size() == 2 ? a->shape[0] : 0;
    ATTN_CHECK(n_alpha >= 1, "model " + in.model + ": the saved model has no tensor 'alpha' of "
                             "shape (n, " + std::to_string(K) + "); save it again with `attnlab fit`");
    f.alpha = in.get("alpha", {n_alpha, K});
    f.X_fit = in.get("X_fit", {n_alpha, in.shape.T, in.shape.d_in});
  } else {
    f.V = in.get("V", {features_->dim(), K});
  }
  restore(std::move(f));
}

void RidgeModel::fit(const Batch& train, FitLog& log) {
  auto s = std::make_unique<State>();
  s->x_size = train.shape.x_size();
  s->T_out = train.shape.T_out;
  s->d_out = train.shape.d_out;
  s->K = s->T_out * s->d_out;
  s->lambdas = options_.lambdas;
  const int64_t n = train.n;
  s->n_val = options_.lambdas.size() > 1 || options_.val_fraction > 0
                 ? std::llround(options_.val_fraction * static_cast<double>(n))
                 : 0;
  s->n_fit = n - s->n_val;
  ATTN_CHECK(s->n_fit >= 2 && (options_.val_fraction == 0 || s->n_val >= 1),
             "train.n = " + std::to_string(n) + " with train.val_fraction = " +
                 std::to_string(options_.val_fraction) +
                 " leaves too few samples to fit and validate; raise train.n");
  const bool is_kernel = kernel_ != nullptr;
  s->P = is_kernel ? 0 : features_->dim();
  s->primal = !is_kernel && (options_.solver == "primal" ||
                             (options_.solver == "auto" && s->P <= s->n_fit));
  const int64_t D = s->primal ? s->P : s->n_fit;  // size of the eigenproblem
  const int64_t B = std::max<int64_t>(1, options_.block);
  const int64_t K = s->K;

  // Memory: the D×D system and its eigenvectors, plus stored dual features / inputs.
  uint64_t doubles = 2 * static_cast<uint64_t>(D) * D + static_cast<uint64_t>(B) * (s->P + D);
  if (!s->primal && !is_kernel) doubles += static_cast<uint64_t>(s->n_fit) * s->P;
  memory_check(8 * doubles, "ridge with a " + std::to_string(D) + " x " + std::to_string(D) +
                                (s->primal ? " Gram" : " kernel"),
               s->primal ? "lower model.heads / model.width, or use train.solver = dual"
                         : "lower train.n, or use train.solver = primal");

  // Centred labels of the fit split.
  Eigen::Map<const RowMat> Y(train.Y.data(), n, K);
  s->y_mean = Y.topRows(s->n_fit).colwise().mean().transpose();
  ColMat Yc = (Y.rowwise() - s->y_mean.transpose());

  ColMat A(D, D);
  A.setZero();
  RowMat Phi;
  if (s->primal) {
    // G = ΦᵀΦ/n, Bv = ΦᵀYc/n, accumulated block by block.
    ColMat Bv = ColMat::Zero(s->P, K);
    Phi.resize(B, s->P);
    for (int64_t lo = 0; lo < s->n_fit; lo += B) {
      const int64_t m = std::min(B, s->n_fit - lo);
      features_->features(train.x(lo), m, Phi.data());
      A.selfadjointView<Eigen::Lower>().rankUpdate(Phi.topRows(m).transpose());
      Bv.noalias() += Phi.topRows(m).transpose() * Yc.middleRows(lo, m);
    }
    A /= static_cast<double>(s->n_fit);
    Bv /= static_cast<double>(s->n_fit);
    s->eig = eigen_symmetric(A, "feature Gram");
    s->Q = std::move(A);
    s->C = s->Q.transpose() * Bv;
  } else {
    if (is_kernel) {
      s->X_fit.assign(train.X.begin(), train.X.begin() + s->n_fit * s->x_size);
      RowMat Kr(s->n_fit, s->n_fit);
      kernel_->kernel(train.x(0), s->n_fit, train.x(0), s->n_fit, Kr.data());
      A = Kr / static_cast<double>(s->n_fit);
    } else {
      s->Phi_fit.resize(s->n_fit, s->P);
      for (int64_t lo = 0; lo < s->n_fit; lo += B) {
        const int64_t m = std::min(B, s->n_fit - lo);
        features_->features(train.x(lo), m, s->Phi_fit.data() + lo * s->P);
      }
      A.selfadjointView<Eigen::Lower>().rankUpdate(s->Phi_fit);
      A /= static_cast<double>(s->n_fit);
    }
    s->eig = eigen_symmetric(A, "kernel matrix");
    s->Q = std::move(A);
    s->C = s->Q.transpose() * Yc.topRows(s->n_fit);
  }
  const double eig_max = s->eig.size() ? std::max(0.0, s->eig.maxCoeff()) : 0.0;
  s->floor = eig_max * static_cast<double>(D) * std::numeric_limits<double>::epsilon();
  int below_floor = 0;
  for (double l : s->lambdas) below_floor += (l > 0 && l <= s->floor);

  state_ = std::move(s);
  State& st = *state_;

  // Choose λ on the validation split.
  st.chosen = 0;
  if (st.lambdas.size() > 1) {
    ColMat Z(st.n_val, D);
    for (int64_t lo = 0; lo < st.n_val; lo += B) {
      const int64_t m = std::min(B, st.n_val - lo);
      Z.middleRows(lo, m) = [&] {
        RowMat proj = RowMat::Zero(m, D);
        const double* x = train.x(st.n_fit + lo);
        if (st.primal) {
          RowMat F(m, st.P);
          features_->features(x, m, F.data());
          proj.noalias() = F * st.Q;
        } else if (is_kernel) {
          RowMat kv(m, st.n_fit);
          kernel_->kernel(x, m, st.X_fit.data(), st.n_fit, kv.data());
          proj.noalias() = (kv / static_cast<double>(st.n_fit)) * st.Q;
        } else {
          RowMat F(m, st.P);
          features_->features(x, m, F.data());
          proj.noalias() = ((F * st.Phi_fit.transpose()) / static_cast<double>(st.n_fit)) * st.Q;
        }
        return ColMat(proj);
      }();
    }
    const ColMat Yval = Yc.bottomRows(st.n_val);
    double best = std::numeric_limits<double>::infinity();
    for (size_t l = 0; l < st.lambdas.size(); ++l) {
      Eigen::VectorXd g(D);
      for (int64_t k = 0; k < D; ++k) g[k] = shrink(st.eig[k], st.lambdas[l], st.floor);
      const ColMat pred = Z * (g.asDiagonal() * st.C);
      const double mse = (pred - Yval).squaredNorm() / static_cast<double>(Yval.size());
      log.point("val_mse", static_cast<int64_t>(l), mse);
      log.point("lambda", static_cast<int64_t>(l), st.lambdas[l]);
      if (std::isfinite(mse) && mse < best) {
        best = mse;
        st.chosen = static_cast<int>(l);
      }
    }
    log.scalar("val_mse", best);
  }
  st.lambda = st.lambdas[st.chosen];

  // The read-out at the chosen λ.
  Eigen::VectorXd g(D);
  for (int64_t k = 0; k < D; ++k) g[k] = shrink(st.eig[k], st.lambda, st.floor);
  const ColMat coef = st.Q * (g.asDiagonal() * st.C);  // primal: V; dual: α
  if (st.primal) {
    st.V = coef;
  } else if (is_kernel) {
    st.alpha = coef;
    st.n_alpha = st.n_fit;
  } else {
    st.V = st.Phi_fit.transpose() * coef / static_cast<double>(st.n_fit);
  }
  if (options_.refit && st.n_val > 0) {
    // Solve on all n samples at the chosen λ (centred by the mean of all n).
    st.y_mean = Y.colwise().mean().transpose();
    const ColMat Yall = Y.rowwise() - st.y_mean.transpose();
    const double lam = std::max(st.lambda, st.floor);
    if (st.primal) {
      ColMat G = ColMat::Zero(st.P, st.P), Bv = ColMat::Zero(st.P, K);
      RowMat F(B, st.P);
      for (int64_t lo = 0; lo < n; lo += B) {
        const int64_t m = std::min(B, n - lo);
        features_->features(train.x(lo), m, F.data());
        G.selfadjointView<Eigen::Lower>().rankUpdate(F.topRows(m).transpose());
        Bv.noalias() += F.topRows(m).transpose() * Yall.middleRows(lo, m);
      }
      G = G.selfadjointView<Eigen::Lower>();
      G /= static_cast<double>(n);
      G.diagonal().array() += lam;
      st.V = G.ldlt().solve(Bv / static_cast<double>(n));
    } else {
      RowMat Kr(n, n);
      if (is_kernel) {
        kernel_->kernel(train.x(0), n, train.x(0), n, Kr.data());
      } else {
        RowMat F(n, st.P);
        for (int64_t lo = 0; lo < n; lo += B) {
          const int64_t m = std::min(B, n - lo);
          features_->features(train.x(lo), m, F.data() + lo * st.P);
        }
        Kr.noalias() = F * F.transpose();
        st.Phi_fit = std::move(F);
      }
      ColMat Kc = Kr / static_cast<double>(n);
      Kc.diagonal().array() += lam;
      const ColMat a = Kc.ldlt().solve(Yall);
      if (is_kernel) {
        st.alpha = a;
        st.n_alpha = n;
        st.X_fit.assign(train.X.begin(), train.X.end());
      } else {
        st.V = st.Phi_fit.transpose() * a / static_cast<double>(n);
      }
    }
  }
  log.scalar("lambda", st.lambda);
  log.scalar("lambda_index", st.chosen);
  log.scalar("lambdas_below_floor", below_floor);
  log.scalar("ridge_primal", st.primal ? 1 : 0);
  log.scalar("n_fit", static_cast<double>(st.n_fit));
  if (!is_kernel) log.scalar("param_count", static_cast<double>(st.P * K));
  if (below_floor > 0)
    std::fprintf(stderr,
                 "attnlab: %d of the λ values are below the numerical floor %.3g of the %s; "
                 "they are solved as the minimum-norm (pseudo-inverse) solution\n",
                 below_floor, st.floor, st.primal ? "Gram" : "kernel");
}

std::vector<double> RidgeModel::predict(const Batch& data) const {
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
  for (int64_t lo = 0; lo < n; lo += B) {
    const int64_t m = std::min(B, n - lo);
    {
      RowMat F(m, st.P);
      features_->features(data.x(lo), m, F.data());
      O.middleRows(lo, m) = F * st.V;
    }
    O.middleRows(lo, m).rowwise() += st.y_mean.transpose();
  }
  return out;
}

void RidgeModel::evaluate(const Batch& test, FitLog& log) const {
  ATTN_CHECK(state_ != nullptr, "evaluate() before fit()");
  const State& st = *state_;
  ATTN_CHECK(!st.restored, "a ridge model loaded from a file has its read-out but not the "
                           "training data's spectrum, so it cannot evaluate the λ path; refit it");
  const int64_t n = test.n, D = st.eig.size(), B = std::max<int64_t>(1, options_.block);
  ColMat Z(n, D);
  for (int64_t lo = 0; lo < n; lo += B) {
    const int64_t m = std::min(B, n - lo);
    RowMat proj(m, D);
    if (st.primal) {
      RowMat F(m, st.P);
      features_->features(test.x(lo), m, F.data());
      proj.noalias() = F * st.Q;
    } else if (kernel_) {
      // Reuse predict()'s kernel when it was computed for this test set on the fit split.
      const bool cached = st.cached_x == test.X.data() && st.cached_n == n &&
                          st.n_alpha == st.n_fit;
      RowMat kv(m, st.n_fit);
      if (cached)
        kv = st.cached_kernel.middleRows(lo, m);
      else
        kernel_->kernel(test.x(lo), m, st.X_fit.data(), st.n_fit, kv.data());
      proj.noalias() = (kv / static_cast<double>(st.n_fit)) * st.Q;
    } else {
      RowMat F(m, st.P);
      features_->features(test.x(lo), m, F.data());
      proj.noalias() = ((F * st.Phi_fit.topRows(st.n_fit).transpose()) /
                        static_cast<double>(st.n_fit)) * st.Q;
    }
    Z.middleRows(lo, m) = proj;
  }
  // The fit split's models along the λ path (with the fit split's label mean).
  std::vector<double> flat;
  double best = std::numeric_limits<double>::infinity();
  size_t best_index = 0;
  auto path_nmse = [&](double lambda) {
    Eigen::VectorXd g(D);
    for (int64_t k = 0; k < D; ++k) g[k] = shrink(st.eig[k], lambda, st.floor);
    ColMat pred = Z * (g.asDiagonal() * st.C);
    Eigen::VectorXd mean = st.y_mean;
    pred.rowwise() += mean.transpose();
    double nmse = NAN;
    predictions_nmse(test, pred, flat, &nmse);
    return nmse;
  };
  for (size_t l = 0; l < st.lambdas.size(); ++l) {
    const double nmse = path_nmse(st.lambdas[l]);
    log.point("test_nmse_path", static_cast<int64_t>(l), nmse);
    if (nmse < best) {
      best = nmse;
      best_index = l;
    }
  }
  log.scalar("test_nmse_oracle", best);
  log.scalar("lambda_oracle", st.lambdas[best_index]);
  log.scalar("test_nmse_minnorm", path_nmse(0.0));
}

}  // namespace attn
