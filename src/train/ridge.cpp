// Ridge over a λ grid from one eigendecomposition (LAPACK dsytrd + dstedc), primal or dual: the
// options, the spectral helpers and the λ path's predictions. The fit is in stages
// (ridge_stages.h, ridge_fit.cpp); prediction, evaluation and save/load are in ridge_predict.cpp.
#include "train/ridge.h"

#include <lapacke.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/error.h"
#include "core/front_option.h"
#include "core/log.h"
#include "core/memory.h"
#include "train/metrics.h"
#include "train/ridge_share.h"
#include "train/ridge_state.h"
#include "train/val_split.h"

namespace attn {

// Shrinkage 1/(Λ + λ) with the numerical floor: λ = 0 or below the floor gives the
// pseudo-inverse on the eigenvalues above the floor.
double ridge_shrink(double eig, double lambda, double floor) {
  if (lambda <= floor) return eig > floor ? 1.0 / eig : 0.0;
  return 1.0 / (std::max(eig, 0.0) + lambda);
}

// Symmetric eigendecomposition of the lower triangle of A: dsytrd (A = U T Uᵀ), then dstedc
// (T = Z Λ Zᵀ), the first two of dsyevd's three stages; the third (forming Q = U Z) is left out.
Eigen::VectorXd ridge_eigen_symmetric(ColMat&& A, RidgeSpectrum& Q, const std::string& what) {
  const lapack_int n = static_cast<lapack_int>(A.rows());
  const std::string failed = "the eigendecomposition of the " + what + " failed";
  const std::string hint = "; the features may contain NaN or inf";
  Eigen::VectorXd d(n), e(std::max<lapack_int>(1, n - 1));
  Q.tau.resize(std::max<lapack_int>(1, n - 1));
  // OpenBLAS stays at 1 thread here: a threaded LAPACK call rounds differently with the
  // thread count, and results must be bit-identical on 1 or 2 threads.
  int info =
      LAPACKE_dsytrd(LAPACK_COL_MAJOR, 'L', n, A.data(), n, d.data(), e.data(), Q.tau.data());
  ATTN_CHECK(info == 0, failed + " (LAPACK dsytrd info " + std::to_string(info) + ")" + hint);
  ATTN_CHECK(d.allFinite() && e.head(std::max<lapack_int>(0, n - 1)).allFinite(), failed + hint);
  Q.reflectors = std::move(A);
  Q.Z.resize(n, n);
  ridge_advise_huge(Q.Z);
  info = LAPACKE_dstedc(LAPACK_COL_MAJOR, 'I', n, d.data(), e.data(), Q.Z.data(), n);
  ATTN_CHECK(info == 0, failed + " (LAPACK dstedc info " + std::to_string(info) + ")" + hint);
  return d;
}

double ridge_refit_lambda(const RidgeSolver::State& st, int64_t n, FitLog& log, bool say) {
  const double lam = std::max(st.lambda, st.floor);
  log.scalar("refit_lambda", lam);
  if (say && lam > st.lambda)
    log_warn(
        "attnlab: train.refit: the chosen λ = %.3g %s; the refit on all %lld samples solves "
        "directly at the numerical floor %.3g of the fit split's %s instead\n",
        st.lambda,
        st.lambda == 0 ? "(the minimum-norm solution) has no direct solve"
                       : "is below the numerical floor",
        static_cast<long long>(n), lam, st.primal ? "Gram" : "kernel");
  return lam;
}

ColMat RidgeSpectrum::q_times(const ColMat& G) const {
  ColMat out = Z * G;  // then U · (Z G)
  const lapack_int n = static_cast<lapack_int>(out.rows()), m = static_cast<lapack_int>(out.cols());
  if (n == 0 || m == 0) return out;
  const int info = LAPACKE_dormtr(LAPACK_COL_MAJOR, 'L', 'L', 'N', n, m, reflectors.data(), n,
                                  tau.data(), out.data(), n);
  ATTN_CHECK(info == 0, "applying the eigenvectors failed (LAPACK dormtr info " +
                            std::to_string(info) + ")");
  return out;
}

ColMat RidgeSpectrum::qt_times(const ColMat& B) const {
  ColMat ub = B;  // Uᵀ B, then Zᵀ (Uᵀ B)
  const lapack_int n = static_cast<lapack_int>(ub.rows()), m = static_cast<lapack_int>(ub.cols());
  if (n > 0 && m > 0) {
    const int info = LAPACKE_dormtr(LAPACK_COL_MAJOR, 'L', 'L', 'T', n, m, reflectors.data(), n,
                                    tau.data(), ub.data(), n);
    ATTN_CHECK(info == 0, "applying the eigenvectors failed (LAPACK dormtr info " +
                              std::to_string(info) + ")");
  }
  return Z.transpose() * ub;
}

void ridge_predictions_nmse(const Batch& data, const ColMat& pred_rows, std::vector<double>& flat,
                      double* nmse) {
  // pred_rows is n × K in column-major; flatten to Y's row-major layout.
  const int64_t n = pred_rows.rows(), K = pred_rows.cols();
  flat.resize(static_cast<size_t>(n * K));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < K; ++k) flat[i * K + k] = pred_rows(i, k);
  for (const auto& [name, value] : metrics_compute(data, flat))
    if (name == "nmse") *nmse = value;
}

ColMat ridge_path_coefficients(const RidgeSolver::State& st, const std::vector<double>& lambdas) {
  if (!st.Q.band.empty()) return ridge_band_path(st.Q.band, st.C, st.floor, lambdas);
  const int64_t D = st.eig.size(), K = st.K, L = static_cast<int64_t>(lambdas.size());
  // Eigen-basis coefficients of every λ, then the read-outs of every λ.
  ColMat G(D, L * K);
  for (int64_t l = 0; l < L; ++l) {
    Eigen::VectorXd g(D);
    for (int64_t k = 0; k < D; ++k) g[k] = ridge_shrink(st.eig[k], lambdas[l], st.floor);
    G.middleCols(l * K, K) = g.asDiagonal() * st.C;
  }
  return st.Q.q_times(G);
}

ColMat ridge_rows_times(const FeatureMap* features, const KernelFunction* kernel,
                        const double* X_fit, int64_t n_fit, const Batch& data, int64_t first,
                        int64_t count, int64_t block, const ColMat& M, const RowMat* cached) {
  ColMat out(count, M.cols());
  const int64_t B = std::max<int64_t>(1, block);
  if (kernel) {
    RowMat kv(cached ? 0 : std::min(B, count), n_fit);
    for (int64_t lo = 0; lo < count; lo += B) {
      const int64_t m = std::min(B, count - lo);
      if (cached) {
        out.middleRows(lo, m).noalias() =
            cached->middleRows(first + lo, m) * M / static_cast<double>(n_fit);
      } else {
        kernel->kernel(data.x(first + lo), m, X_fit, n_fit, kv.data());
        out.middleRows(lo, m).noalias() = kv.topRows(m) * M / static_cast<double>(n_fit);
      }
    }
    return out;
  }
  RowMat F(cached ? 0 : std::min(B, count), features->dim());  // one buffer for every block
  ridge_advise_huge(F);
  for (int64_t lo = 0; lo < count; lo += B) {
    const int64_t m = std::min(B, count - lo);
    if (cached) {
      out.middleRows(lo, m).noalias() = cached->middleRows(first + lo, m) * M;
    } else {
      features->features(data.x(first + lo), m, F.data());
      out.middleRows(lo, m).noalias() = F.topRows(m) * M;
    }
  }
  return out;
}

const RowMat* ridge_shared_test_features(const FeatureMap& features, const Batch& data,
                                         int64_t block) {
  const RidgeShareEntry* e =
      ridge_share_features(features, data, data.n, std::max<int64_t>(1, block), false);
  return e && e->rows == data.n ? &e->Phi : nullptr;
}

ColMat ridge_path_predictions(const RidgeSolver::State& st, const FeatureMap* features,
                              const KernelFunction* kernel, const Batch& data, int64_t first,
                              int64_t count, int64_t block, const std::vector<double>& lambdas) {
  const int64_t K = st.K, L = static_cast<int64_t>(lambdas.size());
  // A dual feature fit without Φ_fit (distributed, or with recomputed features) formed its
  // read-outs already (ridge_choose.cpp).
  const bool formed = !kernel && !st.primal && st.Phi_fit.rows() == 0;
  ATTN_ASSERT(!formed || (lambdas.size() <= st.path_lambdas.size() &&
                          std::equal(lambdas.begin(), lambdas.end(), st.path_lambdas.begin())),
              "the λ path of a distributed dual fit was formed for other λ values");
  // primal: V (P × LK); dual: α (n_fit × LK)
  const ColMat coef = formed ? ColMat() : ridge_path_coefficients(st, lambdas);
  if (kernel) {
    const bool cached = st.cached_x == data.X.data() && st.cached_n == data.n && first == 0 &&
                        count == data.n && st.n_alpha == st.n_fit;
    return ridge_rows_times(nullptr, kernel, st.X_fit.data(), st.n_fit, data, first, count, block,
                            coef, cached ? &st.cached_kernel : nullptr);
  }
  ColMat readout;
  if (formed)
    readout = st.path_readout.leftCols(L * K);
  else if (!st.primal)
    readout = st.Phi_fit.topRows(st.n_fit).transpose() * coef / static_cast<double>(st.n_fit);
  const RowMat* shared =
      first == 0 && count == data.n ? ridge_shared_test_features(*features, data, block) : nullptr;
  return ridge_rows_times(features, nullptr, nullptr, 0, data, first, count, block,
                          st.primal ? coef : readout, shared);
}

namespace {

// An execution setting: equal results to rounding, so not part of the run id.
ParamSpec ridge_distributed_param() {
  ParamSpec p = param_bool("distributed", false,
                           "under `" + front_command(FrontCommand::kRunMpi) +
                               "`: spread the training samples over the MPI ranks, sum the "
                               "Gram/kernel blocks, solve once (docs/cluster.md)");
  p.execution_only = true;
  return p;
}

// Also an execution setting (same results to rounding).
ParamSpec ridge_dual_features_param() {
  ParamSpec p =
      param_choice("dual_features", choice_name(RidgeOptions().dual_features, kDualFeatures),
                   choice_names(kDualFeatures),
                   "dual fits of feature models: keep the n x P features (store), "
                   "recompute them per tile (recompute: memory n^2 + tile x P), or store "
                   "when they fit in memory (auto)");
  p.execution_only = true;
  return p;
}

}  // namespace

std::vector<ParamSpec> ridge_train_schema() {
  return {
      param_real_list("lambdas", RidgeOptions().lambdas,
                      "ridge penalties λ (objective (1/n)|y - f|^2 + λ|V|^2); 0 = minimum norm",
                      0.0),
      param_real("val_fraction", 0.2,
                 "fraction of the training set held out to choose λ (0: needs a single λ)", 0.0,
                 0.9),
      param_choice("solver", choice_name(RidgeOptions().solver, kRidgeForms),
                   choice_names(kRidgeForms),
                   "P x P Gram (primal) or n x n kernel (dual); auto picks the smaller"),
      param_bool("refit", false, "refit on the whole training set at the chosen λ"),
      ridge_dual_features_param(),
      ridge_distributed_param(),
  };
}

RidgeOptions ridge_options(const Params& train) {
  RidgeOptions o;
  o.lambdas = train.get_real_list("lambdas");
  o.val_fraction = train.get_real("val_fraction");
  o.solver = choice_parse(train.get_string("solver"), kRidgeForms, "train.solver");
  o.refit = train.get_bool("refit");
  if (train.has("dual_features")) o.dual_features =
        choice_parse(train.get_string("dual_features"), kDualFeatures, "train.dual_features");
  o.distributed = train.has("distributed") && train.get_bool("distributed");
  ATTN_CHECK(!o.lambdas.empty(), "train.lambdas is empty; give at least one λ, e.g. [1e-3]");
  ATTN_CHECK(o.lambdas.size() == 1 || o.val_fraction > 0,
             "train.lambdas has " + std::to_string(o.lambdas.size()) +
                 " values but train.val_fraction = 0 leaves nothing to choose λ on; set "
                 "train.val_fraction (e.g. 0.2) or give one λ");
  return o;
}

void ridge_train_check(const Params& train) { (void)ridge_options(train); }

RidgeSolver::RidgeSolver(std::unique_ptr<FeatureMap> features, RidgeOptions options)
    : features_(std::move(features)), options_(std::move(options)) {}

RidgeSolver::RidgeSolver(std::unique_ptr<KernelFunction> kernel, RidgeOptions options)
    : kernel_(std::move(kernel)), options_(std::move(options)) {
  ATTN_CHECK(options_.solver != RidgeForm::primal,
             "train.solver = primal is not possible for a kernel model; use dual or auto");
}

RidgeSolver::~RidgeSolver() = default;

std::unique_ptr<RidgeSolver::State> RidgeSolver::state_begin(const TaskShape& shape,
                                                             int64_t n) const {
  auto s = std::make_unique<State>();
  s->x_size = shape.x_size();
  s->T_out = shape.T_out;
  s->d_out = shape.d_out;
  s->K = s->T_out * s->d_out;
  s->lambdas = options_.lambdas;
  s->n_val = val_split_count(options_.val_fraction, n);  // ridge_options: several λ need f > 0
  s->n_fit = n - s->n_val;
  ATTN_CHECK(s->n_fit >= 2,
             "train.n = " + std::to_string(n) + " with train.val_fraction = " +
                 std::to_string(options_.val_fraction) +
                 " leaves too few samples to fit and validate; raise train.n");
  const bool is_kernel = kernel_ != nullptr;
  s->P = is_kernel ? 0 : features_->dim();
  s->primal = !is_kernel && (options_.solver == RidgeForm::primal ||
                             (options_.solver == RidgeForm::automatic && s->P <= s->n_fit));
  return s;
}

}  // namespace attn
