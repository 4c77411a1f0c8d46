// Ridge over a λ grid from one eigendecomposition (LAPACK dsytrd + dstedc), primal or dual: the
// options, the spectral helpers and fit(). Prediction, evaluation and save/load are in
// ridge_predict.cpp.
#include "train/ridge.h"

#include <lapacke.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/error.h"
#include "core/log.h"
#include "core/memory.h"
#include "train/metrics.h"
#include "train/ridge_state.h"

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
  int info = LAPACKE_dsytrd(LAPACK_COL_MAJOR, 'L', n, A.data(), n, d.data(), e.data(), Q.tau.data());
  ATTN_CHECK(info == 0, failed + " (LAPACK dsytrd info " + std::to_string(info) + ")" + hint);
  ATTN_CHECK(d.allFinite() && e.head(std::max<lapack_int>(0, n - 1)).allFinite(), failed + hint);
  Q.reflectors = std::move(A);
  Q.Z.resize(n, n);
  ridge_advise_huge(Q.Z);
  info = LAPACKE_dstedc(LAPACK_COL_MAJOR, 'I', n, d.data(), e.data(), Q.Z.data(), n);
  ATTN_CHECK(info == 0, failed + " (LAPACK dstedc info " + std::to_string(info) + ")" + hint);
  return d;
}

double ridge_refit_lambda(const RidgeModel::State& st, int64_t n, FitLog& log, bool say) {
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

ColMat ridge_path_coefficients(const RidgeModel::State& st, const std::vector<double>& lambdas) {
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

ColMat ridge_path_predictions(const RidgeModel::State& st, const FeatureMap* features,
                              const KernelFunction* kernel, const Batch& data, int64_t first,
                              int64_t count, int64_t block, const std::vector<double>& lambdas) {
  const int64_t K = st.K, L = static_cast<int64_t>(lambdas.size());
  // A dual feature fit without Φ_fit (distributed, ridge_distributed.cpp, or with recomputed
  // features) formed its read-outs already.
  const bool formed = !kernel && !st.primal && st.Phi_fit.rows() == 0;
  ATTN_ASSERT(!formed || (lambdas.size() <= st.path_lambdas.size() &&
                          std::equal(lambdas.begin(), lambdas.end(), st.path_lambdas.begin())),
              "the λ path of a distributed dual fit was formed for other λ values");
  // primal: V (P × LK); dual: α (n_fit × LK)
  const ColMat coef = formed ? ColMat() : ridge_path_coefficients(st, lambdas);
  ColMat readout;
  if (formed)
    readout = st.path_readout.leftCols(L * K);
  else if (!kernel && !st.primal)
    readout = st.Phi_fit.topRows(st.n_fit).transpose() * coef / static_cast<double>(st.n_fit);
  ColMat out(count, L * K);
  const int64_t B = std::max<int64_t>(1, block);
  if (kernel) {
    const bool cached = st.cached_x == data.X.data() && st.cached_n == data.n && first == 0 &&
                        count == data.n && st.n_alpha == st.n_fit;
    RowMat kv(std::min(B, count), st.n_fit);
    for (int64_t lo = 0; lo < count; lo += B) {
      const int64_t m = std::min(B, count - lo);
      if (cached) {
        out.middleRows(lo, m).noalias() =
            st.cached_kernel.middleRows(lo, m) * coef / static_cast<double>(st.n_fit);
      } else {
        kernel->kernel(data.x(first + lo), m, st.X_fit.data(), st.n_fit, kv.data());
        out.middleRows(lo, m).noalias() = kv.topRows(m) * coef / static_cast<double>(st.n_fit);
      }
    }
    return out;
  }
  const ColMat& V = st.primal ? coef : readout;
  RowMat F(std::min(B, count), st.P);  // one buffer for every block
  ridge_advise_huge(F);
  for (int64_t lo = 0; lo < count; lo += B) {
    const int64_t m = std::min(B, count - lo);
    features->features(data.x(first + lo), m, F.data());
    out.middleRows(lo, m).noalias() = F.topRows(m) * V;
  }
  return out;
}

namespace {

// An execution setting: equal results to rounding, so not part of the run id.
ParamSpec ridge_distributed_param() {
  ParamSpec p = param_bool("distributed", false,
                           "under `attnlab run --mpi`: spread the training samples over the MPI "
                           "ranks, sum the Gram/kernel blocks, solve once (docs/cluster.md)");
  p.execution_only = true;
  return p;
}

// Also an execution setting (same results to rounding).
ParamSpec ridge_dual_features_param() {
  ParamSpec p = param_choice("dual_features", "auto", {"auto", "store", "recompute"},
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
                      "ridge penalties λ (objective (1/n)|y - f|^2 + λ|V|^2); 0 = minimum norm", 0.0),
      param_real("val_fraction", 0.2,
                 "fraction of the training set held out to choose λ (0: needs a single λ)", 0.0, 0.9),
      param_choice("solver", "auto", {"auto", "primal", "dual"},
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
  o.solver = train.get_string("solver");
  o.refit = train.get_bool("refit");
  if (train.has("dual_features")) o.dual_features = train.get_string("dual_features");
  o.distributed = train.has("distributed") && train.get_bool("distributed");
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

std::unique_ptr<RidgeModel::State> RidgeModel::state_begin(const TaskShape& shape, int64_t n) const {
  auto s = std::make_unique<State>();
  s->x_size = shape.x_size();
  s->T_out = shape.T_out;
  s->d_out = shape.d_out;
  s->K = s->T_out * s->d_out;
  s->lambdas = options_.lambdas;
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
  return s;
}

void RidgeModel::fit(const Batch& train, FitLog& log) {
  const int64_t n = train.n;
  auto s = state_begin(train.shape, n);
  const bool is_kernel = kernel_ != nullptr;
  const int64_t D = s->primal ? s->P : s->n_fit;  // size of the eigenproblem
  const int64_t B = std::max<int64_t>(1, options_.block);
  const int64_t K = s->K;

  // Memory (doubles): the D×D system and its eigenvectors, plus stored dual features / inputs.
  // Dual feature fits recompute Φ per tile instead of storing it when asked to, or (auto) when
  // storing it would not fit. A refit (train.refit) on all n samples needs, on top: storing,
  // the n × P features and three n × n matrices; recomputing (the spectrum is freed first), one
  // n × n matrix and the tiles.
  const uint64_t n64 = static_cast<uint64_t>(n), P64 = static_cast<uint64_t>(s->P);
  const uint64_t system = 2 * static_cast<uint64_t>(D) * D + static_cast<uint64_t>(B) * (P64 + D);
  const bool dual_features = !s->primal && !is_kernel;
  const bool refit = options_.refit && s->n_val > 0;
  const uint64_t need_store =
      system + static_cast<uint64_t>(s->n_fit) * P64 + (refit ? n64 * P64 + 3 * n64 * n64 : 0);
  const uint64_t need_recompute = std::max(system, refit ? n64 * n64 : 0);
  const uint64_t budget = static_cast<uint64_t>(0.9 * static_cast<double>(memory_available_bytes()));
  const bool recompute =
      dual_features && (options_.dual_features == "recompute" ||
                        (options_.dual_features == "auto" && 8 * need_store > budget));
  memory_check(8 * (!dual_features ? system : recompute ? need_recompute : need_store),
               "ridge with a " + std::to_string(D) + " x " + std::to_string(D) +
                   (s->primal ? " Gram" : " kernel"),
               s->primal ? "lower model.heads / model.width, or use train.solver = dual"
               : dual_features && !recompute
                   ? "lower train.n, use train.solver = primal, or train.dual_features = recompute"
                   : "lower train.n");
  const int64_t tile =
      !recompute ? 0
      : options_.dual_tile > 0
          ? options_.dual_tile
          : ridge_dual_tile_rows(n, s->P, B,
                                 budget > 8 * need_recompute ? budget - 8 * need_recompute : 0);

  // Centred labels of the fit split.
  Eigen::Map<const RowMat> Y(train.Y.data(), n, K);
  s->y_mean = Y.topRows(s->n_fit).colwise().mean().transpose();
  s->y_mean_fit = s->y_mean;
  ColMat Yc = (Y.rowwise() - s->y_mean.transpose());

  ColMat A;  // the D×D Gram or kernel, lower triangle
  if (!recompute) {
    A.resize(D, D);
    ridge_advise_huge(A);
    A.setZero();
  }
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
    s->eig = ridge_eigen_symmetric(std::move(A), s->Q, "feature Gram");
    s->C = s->Q.qt_times(Bv);
  } else {
    if (is_kernel) {
      s->X_fit.assign(train.X.begin(), train.X.begin() + s->n_fit * s->x_size);
      RowMat Kr(s->n_fit, s->n_fit);
      ridge_advise_huge(Kr);
      kernel_->kernel(train.x(0), s->n_fit, train.x(0), s->n_fit, Kr.data());
      A = Kr / static_cast<double>(s->n_fit);
    } else if (recompute) {
      A = ridge_dual_kernel_tiled(*features_, train, s->n_fit, tile, B);
      A /= static_cast<double>(s->n_fit);
    } else {
      s->Phi_fit.resize(s->n_fit, s->P);
      ridge_advise_huge(s->Phi_fit);
      ridge_features_rows(*features_, train, 0, s->n_fit, B, s->Phi_fit);
      A.selfadjointView<Eigen::Lower>().rankUpdate(s->Phi_fit);
      A /= static_cast<double>(s->n_fit);
    }
    s->eig = ridge_eigen_symmetric(std::move(A), s->Q, "kernel matrix");
    s->C = s->Q.qt_times(Yc.topRows(s->n_fit));
  }
  const double eig_max = s->eig.size() ? std::max(0.0, s->eig.maxCoeff()) : 0.0;
  s->floor = eig_max * static_cast<double>(D) * std::numeric_limits<double>::epsilon();
  int below_floor = 0;
  for (double l : s->lambdas) below_floor += (l > 0 && l <= s->floor);

  state_ = std::move(s);
  State& st = *state_;
  if (recompute) {
    // Φ_fit is not kept: form the read-outs of the whole path (and λ → 0⁺, for evaluate())
    // now, in one more pass of feature tiles, as the distributed fit does.
    st.path_lambdas = st.lambdas;
    st.path_lambdas.push_back(0.0);
    st.path_readout = ridge_features_t_times_tiled(*features_, train, st.n_fit, tile, B,
                                                   ridge_path_coefficients(st, st.path_lambdas));
    st.path_readout /= static_cast<double>(st.n_fit);
  }

  // Choose λ on the validation split.
  st.chosen = 0;
  if (st.lambdas.size() > 1) {
    const ColMat path = ridge_path_predictions(st, features_.get(), kernel_.get(), train,
                                               st.n_fit, st.n_val, B, st.lambdas);
    const ColMat Yval = Yc.bottomRows(st.n_val);
    double best = std::numeric_limits<double>::infinity();
    for (size_t l = 0; l < st.lambdas.size(); ++l) {
      const auto pred = path.middleCols(static_cast<int64_t>(l) * K, K);
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

  // The read-out at the chosen λ (recomputed features: one of the path's, formed above).
  if (recompute) {
    st.V = st.path_readout.middleCols(static_cast<int64_t>(st.chosen) * K, K);
  } else {
    Eigen::VectorXd g(D);
    for (int64_t k = 0; k < D; ++k) g[k] = ridge_shrink(st.eig[k], st.lambda, st.floor);
    const ColMat coef = st.Q.q_times(g.asDiagonal() * st.C);  // primal: V; dual: α
    if (st.primal) {
      st.V = coef;
    } else if (is_kernel) {
      st.alpha = coef;
      st.n_alpha = st.n_fit;
    } else {
      st.V = st.Phi_fit.transpose() * coef / static_cast<double>(st.n_fit);
    }
  }
  if (options_.refit && st.n_val > 0) {
    // Solve on all n samples at the chosen λ (centred by the mean of all n).
    st.y_mean = Y.colwise().mean().transpose();
    const ColMat Yall = Y.rowwise() - st.y_mean.transpose();
    const double lam = ridge_refit_lambda(st, n, log, true);
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
    } else if (recompute) {
      // The path's read-outs are formed, so the spectrum is not needed any more: free it for
      // the n × n kernel, which is factored in place (LDLT reads the lower triangle only).
      st.Q = RidgeSpectrum();
      st.C = ColMat();
      ColMat Kc = ridge_dual_kernel_tiled(*features_, train, n, tile, B);
      Kc /= static_cast<double>(n);
      Kc.diagonal().array() += lam;
      Eigen::LDLT<Eigen::Ref<ColMat>> ldlt(Kc);
      const ColMat a = ldlt.solve(Yall);
      st.V = ridge_features_t_times_tiled(*features_, train, n, tile, B, a) / static_cast<double>(n);
    } else {
      RowMat Kr(n, n);
      if (is_kernel) {
        kernel_->kernel(train.x(0), n, train.x(0), n, Kr.data());
      } else {
        RowMat F(n, st.P);
        ridge_advise_huge(F);
        ridge_features_rows(*features_, train, 0, n, B, F);
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
  if (dual_features) log.scalar("dual_features_recomputed", recompute ? 1 : 0);
  log.scalar("n_fit", static_cast<double>(st.n_fit));
  if (!is_kernel) log.scalar("param_count", static_cast<double>(st.P * K));
  if (below_floor > 0)
    log_warn(
                 "attnlab: %d of the λ values are below the numerical floor %.3g of the %s; "
                 "they are solved as the minimum-norm (pseudo-inverse) solution\n",
                 below_floor, st.floor, st.primal ? "Gram" : "kernel");
}

}  // namespace attn
