// Ridge's band form (ridge_band.h): the reduction A = Q B Qᵀ (dsytrd_sy2sb, or dsytrd for the
// tridiagonal form), B's largest
// eigenvalue, the positive-definiteness test that makes the form equal to the eigen path, and
// the per-λ band Cholesky solves.
#include "train/ridge_band.h"

#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "train/ridge_state.h"

extern "C" {
// LAPACK (3.7+), no LAPACKE wrapper: the lower triangle of A to band form with kd subdiagonals.
void dsytrd_sy2sb_(const char* uplo, const lapack_int* n, const lapack_int* kd, double* a,
                   const lapack_int* lda, double* ab, const lapack_int* ldab, double* tau,
                   double* work, const lapack_int* lwork, lapack_int* info, size_t uplo_len);
}

namespace attn {
namespace {

// The band Cholesky factor of B + shift·I (negate: of shift·I − B) into F; false if that matrix
// is not (numerically) positive definite.
bool band_factor(const ColMat& band, int64_t kd, bool negate, double shift, ColMat& F) {
  F = band;
  if (negate) F = -F;
  F.row(0).array() += shift;
  const lapack_int n = static_cast<lapack_int>(band.cols()), k = static_cast<lapack_int>(kd);
  return LAPACKE_dpbtrf_work(LAPACK_COL_MAJOR, 'L', n, k, F.data(), k + 1) == 0;
}

// B's largest eigenvalue (0 if it is negative): bisection between B's largest diagonal entry
// and its Gershgorin bound on "shift·I − B is positive definite", to a few ulps.
double band_eig_max(const ColMat& band, int64_t kd) {
  const int64_t D = band.cols();
  Eigen::VectorXd row_sum = Eigen::VectorXd::Zero(D);
  for (int64_t j = 0; j < D; ++j)
    for (int64_t r = 0; r <= std::min(kd, D - 1 - j); ++r) {
      const double v = std::abs(band(r, j));
      row_sum[j] += v;
      if (r > 0) row_sum[j + r] += v;
    }
  double lo = std::max(0.0, band.row(0).maxCoeff()), hi = row_sum.maxCoeff();
  if (!(hi > 0)) return 0.0;
  ColMat F;
  const double eps = std::numeric_limits<double>::epsilon();
  for (int it = 0; it < 200 && hi - lo > 4 * eps * hi; ++it) {
    const double mid = 0.5 * (lo + hi);
    (band_factor(band, kd, true, mid, F) ? hi : lo) = mid;
  }
  return 0.5 * (lo + hi);
}

// Q · X or Qᵀ · X in place (dormqr on the reflectors below the band).
void apply_q(const RidgeBand& b, char trans, ColMat& X) {
  const lapack_int D = static_cast<lapack_int>(b.size()), kd = static_cast<lapack_int>(b.kd);
  const lapack_int m = static_cast<lapack_int>(b.tau.size()),
                   cols = static_cast<lapack_int>(X.cols());
  if (m == 0 || cols == 0) return;
  const double* v = b.reflectors.data() + kd;  // the m × m block from row kd
  double query = 0;
  lapack_int info = LAPACKE_dormqr_work(LAPACK_COL_MAJOR, 'L', trans, m, cols, m, v, D,
                                        b.tau.data(), X.data() + kd, D, &query, -1);
  std::vector<double> work(static_cast<size_t>(std::max(1.0, query)));
  if (info == 0)
    info = LAPACKE_dormqr_work(LAPACK_COL_MAJOR, 'L', trans, m, cols, m, v, D, b.tau.data(),
                               X.data() + kd, D, work.data(), static_cast<lapack_int>(work.size()));
  ATTN_CHECK(info == 0, "applying the band reduction failed (LAPACK dormqr info " +
                            std::to_string(info) + ")");
}

}  // namespace

int64_t ridge_band_width(RidgePath path, int64_t D) {
  // Wide enough for the reduction's BLAS-3 calls, narrow enough for cheap band solves (the
  // benchmark's best at D ≈ 2000 and ≈ 4000), at most D/4 so that there are reflectors.
  const int64_t band = std::max<int64_t>(2, std::min<int64_t>(D < 3000 ? 64 : 128, D / 4));
  if (path == RidgePath::tridiagonal) return D >= 3 ? 1 : 0;
  if (path == RidgePath::band) return D >= 8 ? band : 0;
  if (path == RidgePath::automatic) return D < 512 ? 0 : D < 2048 ? 1 : band;
  return 0;
}

double ridge_floor(double eig_max, int64_t D) {
  return eig_max * static_cast<double>(D) * std::numeric_limits<double>::epsilon();
}

ColMat RidgeBand::q_times(ColMat X) const {
  apply_q(*this, 'N', X);
  return X;
}

ColMat RidgeBand::qt_times(ColMat X) const {
  apply_q(*this, 'T', X);
  return X;
}

ColMat RidgeBand::solve(double shift, ColMat C) const {
  const lapack_int n = static_cast<lapack_int>(size()), k = static_cast<lapack_int>(kd);
  const lapack_int m = static_cast<lapack_int>(C.cols());
  if (n == 0 || m == 0) return C;
  const auto at = std::find(shifts.begin(), shifts.end(), shift);
  ColMat fresh;
  if (at == shifts.end())
    ATTN_CHECK(band_factor(band, kd, false, shift, fresh),
               "the band Cholesky factorisation at λ = " + std::to_string(shift) + " failed");
  const ColMat& F = at == shifts.end() ? fresh : factors[static_cast<size_t>(at - shifts.begin())];
  const lapack_int info =
      LAPACKE_dpbtrs_work(LAPACK_COL_MAJOR, 'L', n, k, m, F.data(), k + 1, C.data(), n);
  ATTN_CHECK(info == 0, "the band solve failed (LAPACK dpbtrs info " + std::to_string(info) + ")");
  return C;
}

namespace {

// A = Q B Qᵀ into b (kd = b.kd; A overwritten by the reflectors): LAPACK's info.
lapack_int band_reduce(ColMat& A, RidgeBand& b) {
  const lapack_int n = static_cast<lapack_int>(A.rows()), kd = static_cast<lapack_int>(b.kd);
  const lapack_int ldab = kd + 1;
  b.band = ColMat::Zero(ldab, n);
  Eigen::VectorXd tau(std::max<lapack_int>(1, n - kd));
  lapack_int info = 0;
  if (kd == 1) {  // the tridiagonal reduction: dsytrd's reflectors have the same layout
    Eigen::VectorXd d(n), e(std::max<lapack_int>(1, n - 1));
    info = LAPACKE_dsytrd(LAPACK_COL_MAJOR, 'L', n, A.data(), n, d.data(), e.data(), tau.data());
    b.band.row(0) = d.transpose();
    b.band.row(1).head(n - 1) = e.head(n - 1).transpose();
  } else {
    lapack_int lwork = -1;
    double query = 0;
    dsytrd_sy2sb_("L", &n, &kd, A.data(), &n, b.band.data(), &ldab, tau.data(), &query, &lwork,
                  &info, 1);
    std::vector<double> work(static_cast<size_t>(std::max(1.0, query)));
    lwork = static_cast<lapack_int>(work.size());
    if (info == 0)
      dsytrd_sy2sb_("L", &n, &kd, A.data(), &n, b.band.data(), &ldab, tau.data(), work.data(),
                    &lwork, &info, 1);
  }
  b.tau = tau.head(n > kd + 1 ? n - kd : 0);  // no reflectors when B is all of A
  return info;
}

}  // namespace

bool ridge_band_make(ColMat& A, const std::vector<double>& lambdas, int64_t kd, RidgeBand& out) {
  const int64_t D = A.rows();
  ATTN_ASSERT(kd >= 1 && kd < D, "ridge_band_make: band width out of range");
  RidgeBand b;
  b.kd = kd;
  // The reduction overwrites A; keep the matrix for the eigen path in case the form is refused.
  ColMat backup(D, D);
  ridge_advise_huge(backup);
  backup = A;
  // OpenBLAS stays at 1 thread (as for the eigendecomposition): bit-identical on any thread count.
  bool ok = band_reduce(A, b) == 0 && b.band.allFinite();
  if (ok) {
    b.eig_max = band_eig_max(b.band, kd);
    const double floor = ridge_floor(b.eig_max, D);
    ColMat F;
    ok = band_factor(b.band, kd, false, -2 * floor, F);
    // The shifts of the grid: λ above the floor, and 0 (λ at or below it, and λ → 0⁺).
    b.shifts = {0.0};
    for (double l : lambdas)
      if (l > floor && std::find(b.shifts.begin(), b.shifts.end(), l) == b.shifts.end())
        b.shifts.push_back(l);
    for (size_t s = 0; ok && s < b.shifts.size(); ++s) {
      b.factors.emplace_back();
      ok = band_factor(b.band, kd, false, b.shifts[s], b.factors.back());
    }
  }
  if (!ok) {
    A = std::move(backup);
    return false;
  }
  backup = ColMat();
  b.reflectors = std::move(A);
  A = ColMat();
  out = std::move(b);
  return true;
}

ColMat ridge_band_path(const RidgeBand& band, const ColMat& C, double floor,
                       const std::vector<double>& lambdas) {
  const int64_t D = band.size(), K = C.cols(), L = static_cast<int64_t>(lambdas.size());
  ColMat G(D, L * K);
  for (int64_t l = 0; l < L; ++l) {
    const double lambda = lambdas[static_cast<size_t>(l)];
    G.middleCols(l * K, K) = band.solve(lambda <= floor ? 0.0 : lambda, C);
  }
  return band.q_times(std::move(G));
}

}  // namespace attn
