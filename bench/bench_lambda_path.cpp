// The ridge λ path on the shipped fu2023 shapes: ways to get the solutions of every λ of a
// grid (and λ → 0⁺) for k targets that share one D × D system, timed on the same matrix
// (issue #21, "A faster λ path where it is faster"). Plain main; docs/performance.md
// ("λ path: eigendecomposition vs per-λ solves") has the runs.
//
// The system is the one a fit builds: rf_target data (d, N), the model's features Φ of the
// fit split (n_fit = n − round(0.2 n) samples), primal A = ΦᵀΦ/n_fit (D = P, right-hand sides
// ΦᵀYc/n_fit) when P ≤ n_fit, else dual A = ΦΦᵀ/n_fit (D = n_fit, right-hand sides Yc); a
// kernel model gives A = H(X, X)/n_fit. The k targets are E1's target/p pairs (pair_power 1,
// 2, 3, pair_value 2, keys_power 2, query_power 2, then again), one column each. Per target
// a fit needs the L grid solutions (the λ choice), the one at the chosen λ (the read-out)
// and the L + 1 of evaluate() (the grid and λ → 0⁺): 2L + 2 columns. Methods:
//   eig    today's ridge: dsytrd (A = U T Uᵀ) + dstedc (T = Z Λ Zᵀ), shared by the targets;
//          per target C = Zᵀ Uᵀ b and U Z diag(1/(Λ+λ)) C (dormtr on the columns)
//   mrrr   the same with dstemr (MRRR) in place of dstedc
//   evd    dsyevd with Q formed (numpy / scipy's eigh), per target Qᵀ b and Q·(…)
//   tri    dsytrd, the largest eigenvalue of T (bisection) and the number of eigenvalues at or
//          below 2·floor (a Sturm count), shared; per target c = Uᵀ b, one SPD tridiagonal
//          solve (dpttrf + dpttrs, O(D)) per λ, U·(solutions) by dormtr. Valid (equal to the
//          eig path to rounding) when that count is 0: then λ ≤ floor and λ → 0⁺ are the
//          solve at 0, as the eig path's pseudo-inverse is
//   chol   per target and λ: A + λI, dpotrf + dpotrs (no λ → 0⁺ point, no floor)
//   cg     multi-shift conjugate gradients per target (one Krylov space serves every λ),
//          until every λ's residual is below 1e-10·‖b‖ or D iterations
//   band   dsytrd_sy2sb (the BLAS-3 first stage of the two-stage reduction: A = Q B Qᵀ, B with
//          kd subdiagonals), the largest eigenvalue of B by bisection on band Cholesky tests,
//          the test that B − 2·floor·I is positive definite (the same condition as tri's), the
//          band Cholesky factor (dpbtrf) of each λ, shared; per target c = Qᵀ b (dormqr), one
//          dpbtrs per λ, Q·(solutions)
//   2stage dsyevd_2stage without vectors (eigenvalues only: LAPACK has no back-transformation
//          for the two-stage reduction), for the reduction's speed only
// Each round runs every method on every shape (methods in a rotated order per round), one
// OpenBLAS thread. Printed: per method the shared time (once per system) and the time per
// target (wall and CPU seconds), the difference of its solutions from eig's (largest relative
// column difference over the grid; tri also at λ → 0⁺), and at the end the medians over the
// rounds with the totals for 1, 2, 4 and 6 targets (shared + k·per target) and their ratio
// to eig.
//
// Usage: bench_lambda_path [--rounds 3] [--targets 6] [--methods eig,tri,chol,...]
//          [--shapes NAME=model:d:N:heads:n,...] [--cg-max 0 (0: D)] [--kd 0 (0: as ridge)]
//          [--rotate 0 (the method order's offset)]
//        bench_lambda_path --fit 1 [--targets k] [--rounds R] [--n-test 2000] [--shapes ...]
//          whole fits instead: for each shape, the k targets fitted as one run group (shared
//          spectrum), each fit + predict(test) + evaluate(test), with ridge's path "eigen" and
//          "auto" alternated; prints the times and the largest differences of every logged
//          value (chosen λ, validation errors, test path, λ → 0⁺) and of the predictions.
#include <lapacke.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/params.h"
#include "core/blas_core.h"
#include "core/blas_threads.h"
#include "core/threads.h"
#include "models/rf_kernels.h"
#include "models/rf_models.h"
#include "tasks/task.h"
#include "train/ridge.h"
#include "train/ridge_share.h"

extern "C" {
// LAPACK's first stage of the two-stage reduction (no LAPACKE wrapper): A = Q B Qᵀ, B banded.
void dsytrd_sy2sb_(const char* uplo, const int* n, const int* kd, double* a, const int* lda,
                   double* ab, const int* ldab, double* tau, double* work, const int* lwork,
                   int* info, size_t uplo_len);
void openblas_set_num_threads(int num_threads);
}

namespace {

using attn::Batch;
using Mat = Eigen::MatrixXd;
using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vec = Eigen::VectorXd;

double wall_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
double cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
struct Time {
  double wall = 0, cpu = 0;
};
struct Timer {
  double w0 = wall_s(), c0 = cpu_s();
  Time stop() const { return {wall_s() - w0, cpu_s() - c0}; }
};

void check(int info, const char* what) {
  if (info != 0) {
    std::fprintf(stderr, "bench_lambda_path: %s failed (info %d)\n", what, info);
    std::exit(1);
  }
}

struct Shape {
  std::string name, model;
  int64_t d = 8, N = 8, heads = 512, n = 8192;
};

// The system of one fit: A (D × D, full symmetric), the right-hand sides B (D × k), and the
// grid.
struct System {
  bool primal = true;
  int64_t D = 0, P = 0, n_fit = 0;
  Mat A, B;
};

const char* kTargets[][2] = {{"pair_power", "1"}, {"pair_power", "2"}, {"pair_power", "3"},
                             {"pair_value", "2"}, {"keys_power", "2"}, {"query_power", "2"}};

System build_system(const Shape& s, int k) {
  const int64_t n_val = std::llround(0.2 * static_cast<double>(s.n));
  System sys;
  sys.n_fit = s.n - n_val;
  auto params_for = [&](int t) {
    attn::Params p = attn::task_default_params("rf_target");
    p.set_text("d", std::to_string(s.d));
    p.set_text("N", std::to_string(s.N));
    p.set_text("target", kTargets[t % 6][0]);
    p.set_text("p", kTargets[t % 6][1]);
    return p;
  };
  const auto task0 = attn::task_make("rf_target", params_for(0));
  const Batch data = attn::task_generate(*task0, 0, 0, sys.n_fit);
  Mat Y(sys.n_fit, k);
  for (int t = 0; t < k; ++t) {
    const auto task = attn::task_make("rf_target", params_for(t));
    const Batch b = attn::task_generate(*task, 0, 0, sys.n_fit);
    for (int64_t i = 0; i < sys.n_fit; ++i) Y(i, t) = b.Y[static_cast<size_t>(i)];
  }
  Y.rowwise() -= Y.colwise().mean();
  const double nf = static_cast<double>(sys.n_fit);
  if (s.model == "rfa_kernel") {
    attn::RfaKernel kern(attn::RfaKernelConfig{}, data.shape.T, data.shape.d_in);
    RowMat H(sys.n_fit, sys.n_fit);
    kern.kernel(data.X.data(), sys.n_fit, data.X.data(), sys.n_fit, H.data());
    sys.primal = false;
    sys.A = H / nf;
    sys.B = Y;
  } else {
    attn::Params mp("model", s.model == "rfmlp" ? attn::rfmlp_schema()
                             : s.model == "brfa" ? attn::brfa_schema()
                                                 : attn::rfa_schema());
    mp.set_text("heads", std::to_string(s.heads));
    const auto fm = attn::rf_feature_map_make(s.model, mp, data.shape, 0);
    sys.P = fm->dim();
    RowMat Phi(sys.n_fit, sys.P);
    for (int64_t lo = 0; lo < sys.n_fit; lo += 512) {
      const int64_t b = std::min<int64_t>(512, sys.n_fit - lo);
      fm->features(data.x(lo), b, Phi.data() + lo * sys.P);
    }
    sys.primal = sys.P <= sys.n_fit;
    if (sys.primal) {
      sys.A = Mat::Zero(sys.P, sys.P);
      sys.A.selfadjointView<Eigen::Lower>().rankUpdate(Phi.transpose());
      sys.A /= nf;
      sys.B = Phi.transpose() * Y / nf;
    } else {
      sys.A = Mat::Zero(sys.n_fit, sys.n_fit);
      sys.A.selfadjointView<Eigen::Lower>().rankUpdate(Phi);
      sys.A /= nf;
      sys.B = Y;
    }
    sys.A = Mat(sys.A.selfadjointView<Eigen::Lower>());
  }
  sys.D = sys.A.rows();
  return sys;
}

// ---- the methods -------------------------------------------------------------------------

// One method's timings and its solutions for target 0 (D × (L + 1): the grid, then λ → 0⁺).
struct Outcome {
  Time shared, per_target;  // per_target: the mean over the targets run
  int targets_run = 0;
  Mat X0;
  bool has_zero = false;
  std::string note;
};

double shrink(double eig, double lambda, double floor) {  // ridge_shrink (src/train/ridge.cpp)
  if (lambda <= floor) return eig > floor ? 1.0 / eig : 0.0;
  return 1.0 / (std::max(eig, 0.0) + lambda);
}

// U·X or Uᵀ·X (dormtr) for the reflectors of dsytrd in R.
void apply_u(const Mat& R, const Vec& tau, char trans, Mat& X) {
  const lapack_int n = static_cast<lapack_int>(X.rows()), m = static_cast<lapack_int>(X.cols());
  check(
      LAPACKE_dormtr(LAPACK_COL_MAJOR, 'L', 'L', trans, n, m, R.data(), n, tau.data(), X.data(), n),
      "dormtr");
}

// The eigen-basis path, per target: the 2L + 2 columns as ridge computes them.
Mat eig_target(const Vec& eig, double floor, const std::vector<double>& lambdas,
               const std::function<Mat(const Mat&)>& qt, const std::function<Mat(const Mat&)>& q,
               const Mat& b) {
  const Mat C = qt(b);
  auto coefs = [&](const std::vector<double>& ls) {
    Mat G(eig.size(), static_cast<int64_t>(ls.size()));
    for (size_t l = 0; l < ls.size(); ++l)
      for (int64_t i = 0; i < eig.size(); ++i)
        G(i, static_cast<int64_t>(l)) = shrink(eig[i], ls[l], floor) * C(i, 0);
    return q(G);
  };
  std::vector<double> with_zero = lambdas;
  with_zero.push_back(0.0);
  coefs(lambdas);                   // the λ choice
  coefs({lambdas[lambdas.size() / 2]});  // the read-out
  return coefs(with_zero);          // evaluate()
}

Outcome run_eig(const System& sys, const std::vector<double>& lambdas, int k,
                const std::string& how) {
  Outcome o;
  const lapack_int n = static_cast<lapack_int>(sys.D);
  Mat R = sys.A;
  Vec d(n), e(std::max<lapack_int>(1, n - 1)), tau(std::max<lapack_int>(1, n - 1)), w;
  Mat Z;
  Timer ts;
  if (how == "evd") {
    w.resize(n);
    check(LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'L', n, R.data(), n, w.data()), "dsyevd");
  } else {
    check(LAPACKE_dsytrd(LAPACK_COL_MAJOR, 'L', n, R.data(), n, d.data(), e.data(), tau.data()),
          "dsytrd");
    Z.resize(n, n);
    if (how == "eig") {
      check(LAPACKE_dstedc(LAPACK_COL_MAJOR, 'I', n, d.data(), e.data(), Z.data(), n), "dstedc");
      w = d;
    } else {  // mrrr
      w.resize(n);
      lapack_int m = 0, tryrac = 1;
      std::vector<lapack_int> isuppz(2 * static_cast<size_t>(n));
      Vec en = Vec::Zero(n);  // dstemr uses E(N) as workspace
      en.head(n - 1) = e.head(n - 1);
      check(LAPACKE_dstemr(LAPACK_COL_MAJOR, 'V', 'A', n, d.data(), en.data(), 0, 0, 0, 0, &m,
                           w.data(), Z.data(), n, n, isuppz.data(), &tryrac),
            "dstemr");
    }
  }
  const double eig_max = std::max(0.0, w.maxCoeff());
  const double floor = eig_max * static_cast<double>(n) * std::numeric_limits<double>::epsilon();
  o.shared = ts.stop();
  std::function<Mat(const Mat&)> qt, q;
  if (how == "evd") {
    qt = [&](const Mat& B) -> Mat { return R.transpose() * B; };
    q = [&](const Mat& G) -> Mat { return R * G; };
  } else {
    qt = [&](const Mat& B) -> Mat {
      Mat ub = B;
      apply_u(R, tau, 'T', ub);
      return Z.transpose() * ub;
    };
    q = [&](const Mat& G) -> Mat { Mat out = Z * G; apply_u(R, tau, 'N', out); return out; };
  }
  Timer tt;
  for (int t = 0; t < k; ++t) {
    Mat X = eig_target(w, floor, lambdas, qt, q, sys.B.col(t));
    if (t == 0) o.X0 = std::move(X);
  }
  const Time all = tt.stop();
  o.per_target = {all.wall / k, all.cpu / k};
  o.targets_run = k;
  o.has_zero = true;
  int below = 0;
  for (int64_t i = 0; i < w.size(); ++i) below += w[i] <= floor;
  char buf[160];
  std::snprintf(buf, sizeof buf, "eig_max %.4g floor %.3g eig_min %.3g, %d at or below the floor",
                w.maxCoeff(), floor, w.minCoeff(), below);
  o.note = buf;
  return o;
}

// Sturm count: the number of eigenvalues of the symmetric tridiagonal (d, e) below x.
int64_t sturm_below(const Vec& d, const Vec& e, double x) {
  int64_t count = 0;
  double q = 1.0;
  const double tiny = std::numeric_limits<double>::min();
  for (int64_t i = 0; i < d.size(); ++i) {
    q = d[i] - x - (i > 0 ? e[i - 1] * e[i - 1] / q : 0.0);
    if (q == 0.0) q = -tiny;
    count += q < 0;
  }
  return count;
}

// (T + s I)⁻¹ c for the SPD tridiagonal T = (d, e): dpttrf + dpttrs.
void tri_solve(const Vec& d, const Vec& e, double s, double* c, lapack_int m, lapack_int ld) {
  const lapack_int n = static_cast<lapack_int>(d.size());
  Vec ds = d.array() + s, es = e;
  check(LAPACKE_dpttrf(n, ds.data(), es.data()), "dpttrf");
  check(LAPACKE_dpttrs(LAPACK_COL_MAJOR, n, m, ds.data(), es.data(), c, ld), "dpttrs");
}

Outcome run_tri(const System& sys, const std::vector<double>& lambdas, int k) {
  Outcome o;
  const lapack_int n = static_cast<lapack_int>(sys.D);
  Mat R = sys.A;
  Vec d(n), e(std::max<lapack_int>(1, n - 1)), tau(std::max<lapack_int>(1, n - 1));
  Timer ts;
  check(LAPACKE_dsytrd(LAPACK_COL_MAJOR, 'L', n, R.data(), n, d.data(), e.data(), tau.data()),
        "dsytrd");
  const Vec eh = e.head(std::max<lapack_int>(0, n - 1));
  // The largest eigenvalue by bisection (dstebz, one eigenvalue), then the floor and the count.
  lapack_int m = 0, nsplit = 0;
  Vec w(n);
  std::vector<lapack_int> iblock(n), isplit(n);
  Vec ecopy = e;
  check(LAPACKE_dstebz('I', 'E', n, 0, 0, n, n, 0.0, d.data(), ecopy.data(), &m, &nsplit, w.data(),
                       iblock.data(), isplit.data()),
        "dstebz");
  const double eig_max = std::max(0.0, w[0]);
  const double floor = eig_max * static_cast<double>(n) * std::numeric_limits<double>::epsilon();
  const int64_t low = sturm_below(d, eh, 2 * floor);
  o.shared = ts.stop();
  char buf[120];
  std::snprintf(buf, sizeof buf, "eig_max %.4g, %lld eigenvalues below 2·floor%s", w[0],
                (long long)low, low ? " (tri NOT valid: the eig path is needed)" : "");
  o.note = buf;
  std::vector<double> grid = lambdas, with_zero = lambdas;
  with_zero.push_back(0.0);
  auto coefs = [&](const Mat& c, const std::vector<double>& ls) {
    Mat G(n, static_cast<int64_t>(ls.size()));
    for (size_t l = 0; l < ls.size(); ++l) {
      G.col(static_cast<int64_t>(l)) = c;
      tri_solve(d, eh, ls[l] <= floor ? 0.0 : ls[l], G.col(static_cast<int64_t>(l)).data(), 1, n);
    }
    apply_u(R, tau, 'N', G);
    return G;
  };
  Timer tt;
  for (int t = 0; t < k; ++t) {
    Mat c = sys.B.col(t);
    apply_u(R, tau, 'T', c);
    coefs(c, grid);
    coefs(c, {grid[grid.size() / 2]});
    Mat X = coefs(c, with_zero);
    if (t == 0) o.X0 = std::move(X);
  }
  const Time all = tt.stop();
  o.per_target = {all.wall / k, all.cpu / k};
  o.targets_run = k;
  o.has_zero = low == 0;
  return o;
}


// The band path: dsytrd_sy2sb (A = Q B Qᵀ, B with kd subdiagonals; BLAS-3), the largest
// eigenvalue of B by bisection on Cholesky tests (xI − B positive definite ⇔ x > λ_max), the
// test that B − 2·floor·I is positive definite (no eigenvalue at or below 2·floor), shared;
// per target c = Qᵀ b (dormqr on the reflectors below the band), one band Cholesky (dpbtrf +
// dpbtrs) per λ, Q·(solutions).
struct Band {
  lapack_int n = 0, kd = 0;
  Mat R;    // the reflectors below the kd-th subdiagonal
  Vec tau;  // n − kd
  Mat AB;   // (kd + 1) × n, lower band storage
  // (B + s I)⁻¹ C in place; false when B + s I is not positive definite.
  bool solve(double s, double* c, lapack_int m, lapack_int ld) const {
    Mat F = AB;
    F.row(0).array() += s;
    if (LAPACKE_dpbtrf(LAPACK_COL_MAJOR, 'L', n, kd, F.data(), kd + 1) != 0) return false;
    if (c)
      check(LAPACKE_dpbtrs(LAPACK_COL_MAJOR, 'L', n, kd, m, F.data(), kd + 1, c, ld), "dpbtrs");
    return true;
  }
  void apply_q(char trans, Mat& X) const {
    const lapack_int m = n - kd, cols = static_cast<lapack_int>(X.cols());
    if (m <= 0 || cols == 0) return;
    check(LAPACKE_dormqr(LAPACK_COL_MAJOR, 'L', trans, m, cols, m, R.data() + kd, n, tau.data(),
                         X.data() + kd, n),
          "dormqr");
  }
};

Outcome run_band(const System& sys, const std::vector<double>& lambdas, int k, int kd_opt) {
  Outcome o;
  Band b;
  b.n = static_cast<lapack_int>(sys.D);
  b.kd = std::min<lapack_int>(kd_opt, std::max<lapack_int>(1, b.n - 1));
  b.R = sys.A;
  b.AB.resize(b.kd + 1, b.n);
  b.tau.resize(std::max<lapack_int>(1, b.n - b.kd));
  Timer ts;
  {
    int lwork = -1, info = 0, ldab = b.kd + 1;
    double q = 0;
    dsytrd_sy2sb_("L", &b.n, &b.kd, b.R.data(), &b.n, b.AB.data(), &ldab, b.tau.data(), &q, &lwork,
                  &info, 1);
    lwork = static_cast<int>(q);
    std::vector<double> work(static_cast<size_t>(std::max(1, lwork)));
    dsytrd_sy2sb_("L", &b.n, &b.kd, b.R.data(), &b.n, b.AB.data(), &ldab, b.tau.data(), work.data(),
                  &lwork, &info, 1);
    check(info, "dsytrd_sy2sb");
  }
  const Time t_reduce = ts.stop();
  // λ_max: Gershgorin bounds, then bisection on "xI − B is positive definite".
  double hi = 0;
  for (lapack_int j = 0; j < b.n; ++j) {
    double row = 0;
    for (lapack_int i = std::max<lapack_int>(0, j - b.kd);
         i <= std::min<lapack_int>(b.n - 1, j + b.kd); ++i)
      row += std::abs(i >= j ? b.AB(i - j, j) : b.AB(j - i, i));
    hi = std::max(hi, row);
  }
  double lo = 0;
  for (lapack_int j = 0; j < b.n; ++j) lo = std::max(lo, b.AB(0, j));
  Band neg = b;
  neg.AB = -b.AB;
  int steps = 0;
  while (hi - lo > 4 * std::numeric_limits<double>::epsilon() * hi && steps < 200) {
    const double mid = 0.5 * (lo + hi);
    if (neg.solve(mid, nullptr, 0, 1)) hi = mid; else lo = mid;
    ++steps;
  }
  const double eig_max = hi;
  const double floor = eig_max * static_cast<double>(b.n) * std::numeric_limits<double>::epsilon();
  const bool valid = b.solve(-2 * floor, nullptr, 0, 1);
  o.shared = ts.stop();
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "kd %d: sy2sb %.3f s cpu, eig_max %.6g (%d bisection steps), B − 2·floor·I %s",
                (int)b.kd, t_reduce.cpu, eig_max, steps,
                valid ? "positive definite" : "NOT positive definite (band NOT valid)");
  o.note = buf;
  // The band Cholesky factor of every shift (the grid's λ above the floor, and 0), shared.
  std::map<double, Mat> factors;
  for (double l : lambdas) factors[l <= floor ? 0.0 : l];
  factors[0.0];
  for (auto& [shift, F] : factors) {
    F = b.AB;
    F.row(0).array() += shift;
    check(LAPACKE_dpbtrf(LAPACK_COL_MAJOR, 'L', b.n, b.kd, F.data(), b.kd + 1), "dpbtrf");
  }
  o.shared = ts.stop();
  std::vector<double> grid = lambdas, with_zero = lambdas;
  with_zero.push_back(0.0);
  auto coefs = [&](const Mat& c, const std::vector<double>& ls) {
    Mat G(b.n, static_cast<int64_t>(ls.size()));
    for (size_t l = 0; l < ls.size(); ++l) {
      G.col(static_cast<int64_t>(l)) = c;
      const Mat& F = factors.at(ls[l] <= floor ? 0.0 : ls[l]);
      check(LAPACKE_dpbtrs(LAPACK_COL_MAJOR, 'L', b.n, b.kd, 1, F.data(), b.kd + 1,
                           G.col(static_cast<int64_t>(l)).data(), b.n), "dpbtrs");
    }
    b.apply_q('N', G);
    return G;
  };
  Timer tt;
  for (int t = 0; t < k; ++t) {
    Mat c = sys.B.col(t);
    b.apply_q('T', c);
    coefs(c, grid);
    coefs(c, {grid[grid.size() / 2]});
    Mat X = coefs(c, with_zero);
    if (t == 0) o.X0 = std::move(X);
  }
  const Time all = tt.stop();
  o.per_target = {all.wall / k, all.cpu / k};
  o.targets_run = k;
  o.has_zero = valid;
  return o;
}

Outcome run_chol(const System& sys, const std::vector<double>& lambdas) {
  Outcome o;
  const lapack_int n = static_cast<lapack_int>(sys.D);
  const int64_t L = static_cast<int64_t>(lambdas.size());
  o.X0.resize(n, L + 1);
  Mat F(n, n);
  Timer tt;
  for (int64_t l = 0; l < L; ++l) {
    F.triangularView<Eigen::Lower>() = sys.A;
    F.diagonal().array() += lambdas[static_cast<size_t>(l)];
    check(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, F.data(), n), "dpotrf");
    o.X0.col(l) = sys.B.col(0);
    check(LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', n, 1, F.data(), n, o.X0.col(l).data(), n),
          "dpotrs");
  }
  o.per_target = tt.stop();
  o.targets_run = 1;
  // λ = 0 as a plain Cholesky (not timed): whether it exists at all.
  F.triangularView<Eigen::Lower>() = sys.A;
  const int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, F.data(), n);
  o.note = info == 0 ? "dpotrf at λ = 0 succeeds" : "dpotrf at λ = 0 fails (not positive definite)";
  return o;
}

// Multi-shift CG (one Krylov space for every shift; Jegerlehner's CG-M) for one target.
Outcome run_cg(const System& sys, const std::vector<double>& lambdas, int64_t max_it) {
  Outcome o;
  const int64_t n = sys.D, L = static_cast<int64_t>(lambdas.size());
  const Vec b = sys.B.col(0);
  const double bnorm = b.norm(), tol = 1e-10;
  Timer tt;
  // Base system at the smallest shift s0; the others by the shifted recurrences.
  const double s0 = *std::min_element(lambdas.begin(), lambdas.end());
  Mat X = Mat::Zero(n, L), Pm(n, L);
  for (int64_t l = 0; l < L; ++l) Pm.col(l) = b;
  Vec r = b, p = b, Ap(n);
  std::vector<double> zeta(L, 1.0), zeta_old(L, 1.0), beta_s(L, 0.0), alpha_s(L, 0.0);
  std::vector<bool> done(L, false);
  double rr = r.squaredNorm(), alpha_old = 1.0, beta_old = 0.0;
  int64_t it = 0;
  for (; it < max_it; ++it) {
    Ap.noalias() = sys.A.selfadjointView<Eigen::Lower>() * p;
    Ap += s0 * p;
    const double alpha = rr / p.dot(Ap);
    for (int64_t l = 0; l < L; ++l) {
      if (done[l]) continue;
      const double ds = lambdas[static_cast<size_t>(l)] - s0;
      const double zn = zeta[l] * zeta_old[l] * alpha_old /
                        (alpha * beta_old * (zeta_old[l] - zeta[l]) +
                         zeta_old[l] * alpha_old * (1.0 + alpha * ds));
      alpha_s[l] = alpha * zn / zeta[l];
      X.col(l) += alpha_s[l] * Pm.col(l);
      zeta_old[l] = zeta[l];
      zeta[l] = zn;
    }
    r -= alpha * Ap;
    const double rr_new = r.squaredNorm();
    const double beta = rr_new / rr;
    bool all = true;
    for (int64_t l = 0; l < L; ++l) {
      if (done[l]) continue;
      beta_s[l] = beta * (zeta[l] / zeta_old[l]) * (zeta[l] / zeta_old[l]);
      Pm.col(l) = zeta[l] * r + beta_s[l] * Pm.col(l);
      if (std::abs(zeta[l]) * std::sqrt(rr_new) < tol * bnorm) done[l] = true;
      all = all && done[l];
    }
    p = r + beta * p;
    rr = rr_new;
    alpha_old = alpha;
    beta_old = beta;
    if (all) {
      ++it;
      break;
    }
  }
  o.per_target = tt.stop();
  o.targets_run = 1;
  int64_t converged = 0;
  for (int64_t l = 0; l < L; ++l) converged += done[l];
  double worst = 0;
  for (int64_t l = 0; l < L; ++l) {
    const Vec res = sys.A * X.col(l) + lambdas[static_cast<size_t>(l)] * X.col(l) - b;
    worst = std::max(worst, res.norm() / bnorm);
  }
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "%lld iterations, %lld of %lld λ converged to 1e-10, worst true residual %.2g",
                (long long)it, (long long)converged, (long long)L, worst);
  o.note = buf;
  o.X0.resize(n, L + 1);
  o.X0.leftCols(L) = X;
  o.X0.col(L).setZero();
  return o;
}

Outcome run_2stage(const System& sys) {
  Outcome o;
  const lapack_int n = static_cast<lapack_int>(sys.D);
  Mat R = sys.A;
  Vec w(n);
  Timer ts;
  check(LAPACKE_dsyevd_2stage(LAPACK_COL_MAJOR, 'N', 'L', n, R.data(), n, w.data()),
        "dsyevd_2stage");
  o.shared = ts.stop();
  o.note = "eigenvalues only";
  return o;
}

// Largest relative difference of the grid's columns (and λ → 0⁺) from the eig path's.
std::string difference(const Outcome& m, const Outcome& ref, int64_t L) {
  if (m.X0.size() == 0 || ref.X0.size() == 0) return "";
  double worst = 0;
  int64_t at = 0;
  for (int64_t l = 0; l < L; ++l) {
    const double r = (m.X0.col(l) - ref.X0.col(l)).norm() / ref.X0.col(l).norm();
    if (r > worst) { worst = r; at = l; }
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "vs eig: grid max rel diff %.2e (at λ index %lld)", worst,
                (long long)at);
  std::string s = buf;
  if (m.has_zero && m.X0.cols() > L) {
    std::snprintf(buf, sizeof buf, ", λ→0⁺ %.2e",
                  (m.X0.col(L) - ref.X0.col(L)).norm() / ref.X0.col(L).norm());
    s += buf;
  }
  return s;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t a = 0;
  while (a <= s.size()) {
    const size_t b = s.find(sep, a);
    out.push_back(s.substr(a, b == std::string::npos ? std::string::npos : b - a));
    if (b == std::string::npos) break;
    a = b + 1;
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty()      ? NAN
         : v.size() % 2 ? v[v.size() / 2]
                        : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}


// ---- whole fits (--fit) -------------------------------------------------------------------

// One run group's fits as the runner makes them (train/ridge_share.h on): the k targets of a
// shape on the same inputs, each fit + predict(test) + evaluate(test), with RidgeOptions::path
// `path`. Returns the wall/CPU time of all k and every logged number and prediction.
struct FitRun {
  Time time;
  std::vector<std::map<std::string, double>> scalars;
  std::vector<std::map<std::string, std::vector<double>>> series;
  std::vector<std::vector<double>> pred;
};

FitRun run_fits(const Shape& s, int k, int64_t n_test, const std::string& path,
                const std::vector<double>& lambdas) {
  FitRun out;
  attn::ridge_share_enable(true);
  Timer t;
  for (int j = 0; j < k; ++j) {
    attn::Params p = attn::task_default_params("rf_target");
    p.set_text("d", std::to_string(s.d));
    p.set_text("N", std::to_string(s.N));
    p.set_text("target", kTargets[j % 6][0]);
    p.set_text("p", kTargets[j % 6][1]);
    const auto task = attn::task_make("rf_target", p);
    const Batch train = attn::task_generate(*task, 0, 0, s.n);
    const Batch test = attn::task_generate(*task, 0, 1000000000, n_test);
    attn::RidgeOptions o;
    o.lambdas = lambdas;
    o.path = attn::choice_parse(path, attn::kRidgePaths, "path");
    std::unique_ptr<attn::RidgeSolver> model;
    if (s.model == "rfa_kernel") {
      model = std::make_unique<attn::RidgeSolver>(
          std::make_unique<attn::RfaKernel>(attn::RfaKernelConfig{}, train.shape.T,
                                            train.shape.d_in),
          o);
    } else {
      attn::Params mp("model", s.model == "rfmlp" ? attn::rfmlp_schema()
                               : s.model == "brfa" ? attn::brfa_schema()
                                                   : attn::rfa_schema());
      mp.set_text("heads", std::to_string(s.heads));
      model = std::make_unique<attn::RidgeSolver>(
          attn::rf_feature_map_make(s.model, mp, train.shape, 0), o);
    }
    attn::FitLog log;
    model->fit(train, log);
    out.pred.push_back(model->predict(test));
    model->evaluate(test, log);
    std::map<std::string, double> sc;
    for (const auto& [name, v] : log.scalars) sc[name] = v;
    std::map<std::string, std::vector<double>> se;
    for (const auto& pt : log.points) {
      auto& v = se[pt.series];
      if (v.size() <= static_cast<size_t>(pt.step)) v.resize(static_cast<size_t>(pt.step) + 1, NAN);
      v[static_cast<size_t>(pt.step)] = pt.value;
    }
    out.scalars.push_back(std::move(sc));
    out.series.push_back(std::move(se));
  }
  out.time = t.stop();
  attn::ridge_share_enable(false);
  return out;
}

// The largest relative difference of b from a over every logged number (and, separately,
// the predictions), and whether the chosen λ agrees for every target.
std::string fit_difference(const FitRun& a, const FitRun& b) {
  double worst = 0, worst_pred = 0;
  std::string at;
  bool same_lambda = true;
  auto rel = [](double x, double y) { return std::abs(x - y) / std::max(std::abs(y), 1e-300); };
  for (size_t j = 0; j < a.scalars.size(); ++j) {
    for (const auto& [name, v] : a.scalars[j]) {
      if (name.find("seconds") != std::string::npos) continue;
      const double r = rel(b.scalars[j].at(name), v);
      if (r > worst) { worst = r; at = name; }
    }
    same_lambda = same_lambda && a.scalars[j].at("lambda_index") == b.scalars[j].at("lambda_index");
    for (const auto& [name, v] : a.series[j])
      for (size_t l = 0; l < v.size(); ++l) {
        const double r = rel(b.series[j].at(name)[l], v[l]);
        if (r > worst) { worst = r; at = name + "[" + std::to_string(l) + "]"; }
      }
    double diff = 0, scale = 1e-300;
    for (size_t i = 0; i < a.pred[j].size(); ++i) {
      diff = std::max(diff, std::abs(a.pred[j][i] - b.pred[j][i]));
      scale = std::max(scale, std::abs(a.pred[j][i]));
    }
    worst_pred = std::max(worst_pred, diff / scale);
  }
  char buf[240];
  std::snprintf(buf, sizeof buf,
                "chosen λ %s; logged values max rel diff %.2e (%s); test predictions %.2e",
                same_lambda ? "equal for every target" : "DIFFERS", worst, at.c_str(), worst_pred);
  return buf;
}

int fit_main(const std::vector<Shape>& shapes, int k, int rounds, int64_t n_test,
             const std::vector<double>& lambdas) {
  std::map<std::string, std::map<std::string, std::vector<double>>> cpu;
  for (int r = 0; r < rounds; ++r)
    for (const Shape& s : shapes) {
      std::map<std::string, FitRun> runs;
      for (const char* path : r % 2 ? std::vector<const char*>{"auto", "eigen"}
                                    : std::vector<const char*>{"eigen", "auto"}) {
        runs[path] = run_fits(s, k, n_test, path, lambdas);
        cpu[s.name][path].push_back(runs[path].time.cpu);
      }
      std::printf(
          "fit round %d %-16s %d targets: eigen %7.2f s (cpu %7.2f), auto %7.2f s (cpu %7.2f) | "
          "%s\n",
          r + 1, s.name.c_str(), k, runs["eigen"].time.wall, runs["eigen"].time.cpu,
          runs["auto"].time.wall, runs["auto"].time.cpu,
          fit_difference(runs["eigen"], runs["auto"]).c_str());
      std::fflush(stdout);
    }
  std::printf(
      "\nfit summary (medians over %d rounds, CPU seconds of %d fits + predict + evaluate)\n",
      rounds, k);
  for (const Shape& s : shapes)
    std::printf("%-16s eigen %8.2f auto %8.2f ratio %.2f\n", s.name.c_str(),
                median(cpu[s.name]["eigen"]), median(cpu[s.name]["auto"]),
                median(cpu[s.name]["auto"]) / median(cpu[s.name]["eigen"]));
  return 0;
}

int bench_main(int argc, char** argv) {
  int rounds = 3, k = 6;
  int64_t cg_max = 0;
  int kd = 0, rotate = 0;
  bool fits = false;
  int64_t n_test = 2000;  // 0: as ridge picks it (64 below D = 3000, else 128)
  std::string methods = "eig,tri,band,chol";
  // The shipped shapes (experiments/fu2023): E1/E5/E6 rfa d = 8, M = 512 (P = 4608) at
  // n = 1024 … 8192 (dual below 8192), E4 rfa at M = 256 (P = 2304, primal) and the
  // rfa_kernel (dual) at n = 4096, E3 rfa d = 16, M = 241 (P = 4097) at n = 8192 (primal).
  std::string shapes =
      "e1_n1024=rfa:8:8:512:1024,e1_n2048=rfa:8:8:512:2048,e4_m256=rfa:8:8:256:4096,"
      "e1_n4096=rfa:8:8:512:4096,e4_kernel=rfa_kernel:8:8:0:4096,"
      "e3_d16_n8192=rfa:16:4:241:8192,e1_n8192=rfa:8:8:512:8192";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--rounds") rounds = std::atoi(v.c_str());
    else if (a == "--targets") k = std::atoi(v.c_str());
    else if (a == "--methods") methods = v;
    else if (a == "--shapes") shapes = v;
    else if (a == "--cg-max") cg_max = std::atoll(v.c_str());
    else if (a == "--kd") kd = std::atoi(v.c_str());
    else if (a == "--rotate") rotate = std::atoi(v.c_str());
    else if (a == "--fit") fits = v == "1";
    else if (a == "--n-test") n_test = std::atoll(v.c_str());
    else {
      std::fprintf(stderr, "bench_lambda_path: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  attn::threads_configure(1);
  openblas_set_num_threads(1);
  const std::vector<double> lambdas = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1,
                                       1.0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7};
  const int64_t L = static_cast<int64_t>(lambdas.size());
  std::printf(
      "bench_lambda_path: openblas_core=%s OPENBLAS_CORETYPE=%s rounds=%d targets=%d L=%lld\n",
      attn::blas_core_name(),
      std::getenv("OPENBLAS_CORETYPE") ? std::getenv("OPENBLAS_CORETYPE") : "(unset)", rounds, k,
      (long long)L);
  std::vector<Shape> shape_list;
  for (const std::string& item : split(shapes, ',')) {
    const auto eq = split(item, '=');
    const auto f = split(eq.at(1), ':');
    Shape s;
    s.name = eq.at(0);
    s.model = f.at(0);
    s.d = std::atoll(f.at(1).c_str());
    s.N = std::atoll(f.at(2).c_str());
    s.heads = std::atoll(f.at(3).c_str());
    s.n = std::atoll(f.at(4).c_str());
    shape_list.push_back(s);
  }
  if (fits) return fit_main(shape_list, k, rounds, n_test, lambdas);
  const std::vector<std::string> method_list = split(methods, ',');
  // results[shape][method] = per round (shared wall, per-target wall, shared cpu, per-target cpu)
  std::map<std::string, std::map<std::string, std::vector<std::array<double, 4>>>> results;
  std::map<std::string, System> systems;
  for (const Shape& s : shape_list) {
    Timer t;
    systems[s.name] = build_system(s, k);
    const System& sys = systems[s.name];
    std::printf(
        "shape %s: %s d=%lld N=%lld heads=%lld n=%lld: %s D=%lld (P=%lld, n_fit=%lld), built in "
        "%.1f s\n",
        s.name.c_str(), s.model.c_str(), (long long)s.d, (long long)s.N, (long long)s.heads,
        (long long)s.n, sys.primal ? "primal" : "dual", (long long)sys.D, (long long)sys.P,
        (long long)sys.n_fit, t.stop().wall);
    std::fflush(stdout);
  }
  for (int r = 0; r < rounds; ++r) {
    for (const Shape& s : shape_list) {
      const System& sys = systems[s.name];
      std::map<std::string, Outcome> out;
      for (size_t j = 0; j < method_list.size(); ++j) {
        const std::string& m =
            method_list[(j + static_cast<size_t>(r + rotate)) % method_list.size()];
        const int64_t cap = cg_max > 0 ? std::min<int64_t>(cg_max, sys.D) : sys.D;
        Outcome o = m == "tri" ? run_tri(sys, lambdas, k)
                    : m == "band" ? run_band(sys, lambdas, k, kd > 0 ? kd : sys.D < 3000 ? 64 : 128)
                    : m == "chol" ? run_chol(sys, lambdas)
                    : m == "cg" ? run_cg(sys, lambdas, cap)
                    : m == "2stage" ? run_2stage(sys)
                                    : run_eig(sys, lambdas, k, m);
        results[s.name][m].push_back(
            {o.shared.wall, o.per_target.wall, o.shared.cpu, o.per_target.cpu});
        out[m] = std::move(o);
      }
      for (const std::string& m : method_list) {
        const Outcome& o = out[m];
        const std::string diff = m != "eig" && out.count("eig") ? difference(o, out["eig"], L) : "";
        std::printf(
            "round %d %-16s %-7s shared %7.3f s (cpu %7.3f) per target %7.3f s (cpu %7.3f) | "
            "%s%s%s\n",
            r + 1, s.name.c_str(), m.c_str(), o.shared.wall, o.shared.cpu, o.per_target.wall,
            o.per_target.cpu, o.note.c_str(), diff.empty() ? "" : "; ", diff.c_str());
      }
      std::fflush(stdout);
    }
  }
  // Medians over the rounds, and the totals for k targets (chol, cg: k × one target).
  std::printf("\nsummary (medians over %d rounds, CPU seconds; total(k) = shared + k·per target)\n",
              rounds);
  std::printf("%-16s %-7s %9s %9s %9s %9s %9s %9s | ratio to eig at k = 1, 2, 4, 6\n", "shape",
              "method", "shared", "per-tgt", "k=1", "k=2", "k=4", "k=6");
  for (const Shape& s : shape_list) {
    auto total = [&](const std::string& m, int kk, int col_s, int col_t) {
      std::vector<double> v;
      for (const auto& x : results[s.name][m]) v.push_back(x[col_s] + kk * x[col_t]);
      return median(v);
    };
    for (const std::string& m : method_list) {
      std::vector<double> sh, pt;
      for (const auto& x : results[s.name][m]) {
        sh.push_back(x[2]);
        pt.push_back(x[3]);
      }
      std::printf("%-16s %-7s %9.3f %9.3f", s.name.c_str(), m.c_str(), median(sh), median(pt));
      for (int kk : {1, 2, 4, 6}) std::printf(" %9.3f", total(m, kk, 2, 3));
      std::printf(" |");
      if (results[s.name].count("eig"))
        for (int kk : {1, 2, 4, 6})
          std::printf(" %5.2f", total(m, kk, 2, 3) / total("eig", kk, 2, 3));
      std::printf("\n");
    }
  }
  std::printf("\nsummary wall (medians over %d rounds, wall seconds)\n", rounds);
  for (const Shape& s : shape_list)
    for (const std::string& m : method_list) {
      std::vector<double> sh, pt;
      for (const auto& x : results[s.name][m]) {
        sh.push_back(x[0]);
        pt.push_back(x[1]);
      }
      std::printf("%-16s %-7s shared %9.3f per-target %9.3f\n", s.name.c_str(), m.c_str(),
                  median(sh), median(pt));
    }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  attn::blas_reexec_once(argv);  // as the command line runs OpenBLAS (core/blas_threads.h)
  return bench_main(argc, argv);
}
