// Private to src/train/ridge*.cpp: the fitted state of a RidgeSolver and the spectral
// helpers its fit, predict and evaluate share.
#pragma once

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "core/memory.h"
#include "tasks/batch.h"
#include "train/ridge.h"
#include "train/ridge_band.h"

namespace attn {

using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ColMat = Eigen::MatrixXd;

// Huge pages for a large, not yet written matrix (core/memory.h): a faster first touch.
template <class Matrix>
void ridge_advise_huge(Matrix& m) {
  memory_advise_huge_pages(m.data(), static_cast<uint64_t>(m.size()) * sizeof(*m.data()));
}

// The eigenvectors Q of a symmetric D × D matrix, kept factored as Q = U Z: U the Householder
// reflectors of its tridiagonal reduction (LAPACK dsytrd: below the subdiagonal of
// `reflectors`, with tau), Z the eigenvectors of the tridiagonal matrix (dstedc). Q itself is
// never formed: the λ path applies it to a few columns at a time (O(D²) each), while forming Q
// (dsyevd's back-transformation, 2D³ flops) took a third of the eigendecomposition's time in the
// fu2023 pipeline benchmark (docs/performance.md).
// Or, at the sizes where it is faster (RidgeSolver's path option, ridge_band.h), no
// eigenvectors at all: `band` holds the band form A = Q B Qᵀ, and Z and the reflectors here
// are empty.
struct RidgeSpectrum {
  ColMat reflectors, Z;
  Eigen::VectorXd tau;
  RidgeBand band;
  ColMat q_times(const ColMat& G) const;   // Q · G  (D × m)
  ColMat qt_times(const ColMat& B) const;  // Qᵀ · B (D × m)
};

struct RidgeSolver::State {
  bool primal = true;
  int64_t x_size = 0, P = 0, K = 0, T_out = 0, d_out = 0;
  int64_t n_fit = 0, n_val = 0;
  Eigen::VectorXd y_mean;  // K, the label mean predict() adds (all n samples after a refit)
  Eigen::VectorXd y_mean_fit;  // K, the fit split's label mean: the λ path's models use it
  // Spectral form of the fit split: eigenvalues (clipped at 0), eigenvectors Q (factored),
  // C = Qᵀ B; in the band form no eigenvalues, and C = Qᵀ B for the band's Q.
  Eigen::VectorXd eig;
  RidgeSpectrum Q;
  ColMat C;
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
  // Dual feature models without Phi_fit (spread over the ranks, or recomputed per tile): the
  // read-outs of path_lambdas (P × L·K, the grid and λ → 0⁺) are formed during the fit, for
  // the chosen read-out and evaluate() (ridge_choose.cpp).
  std::vector<double> path_lambdas;
  ColMat path_readout;
};

// Shrinkage 1/(Λ + λ) with the numerical floor: λ = 0 or below the floor gives the
// pseudo-inverse on the eigenvalues above the floor.
double ridge_shrink(double eig, double lambda, double floor);

// Symmetric eigendecomposition of the lower triangle of A (moved into Q's factors); returns the
// eigenvalues in ascending order.
Eigen::VectorXd ridge_eigen_symmetric(ColMat&& A, RidgeSpectrum& Q, const std::string& what);

// Eigen-basis solutions of the fit split at every λ of `lambdas`: D × (L·K), λ_l in
// columns [l·K, (l+1)·K); primal: read-outs V, dual: coefficients α.
ColMat ridge_path_coefficients(const RidgeSolver::State& st, const std::vector<double>& lambdas);

// The λ of a refit on all n samples (train.refit): the chosen λ, raised to the fit split's
// numerical floor if below it (a direct solve cannot take it lower; the path's pseudo-inverse
// lives in the fit split's spectrum). Logs refit_lambda; with `say`, prints the raise.
double ridge_refit_lambda(const RidgeSolver::State& st, int64_t n, FitLog& log, bool say);

// Features of samples [first, first + count) of data into the first `count` rows of F
// (count ≤ F.rows()), `block` samples per FeatureMap call.
void ridge_features_rows(const FeatureMap& features, const Batch& data, int64_t first,
                         int64_t count, int64_t block, RowMat& F);

// Dual feature fits that do not store Φ (train.dual_features = recompute, or auto when n × P
// would not fit in memory): features are recomputed per tile of samples (ridge_tiled.cpp).
// Rows per tile: two tiles of P features in a quarter of budget_bytes, at most 4096, at least
// one feature block, at most max(block, n).
int64_t ridge_dual_tile_rows(int64_t n, int64_t P, int64_t block, uint64_t budget_bytes);
// The lower triangle of ΦΦᵀ (n × n, unscaled) for samples [0, n) of data; the strict upper
// triangle is zero. Each tile's features are computed once per later tile (≈ n/(2·tile) passes).
ColMat ridge_dual_kernel_tiled(const FeatureMap& features, const Batch& data, int64_t n,
                               int64_t tile, int64_t block);
// Φᵀ C (P × C.cols()) for samples [0, n) of data, C n × m: one pass of feature tiles.
ColMat ridge_features_t_times_tiled(const FeatureMap& features, const Batch& data, int64_t n,
                                    int64_t tile, int64_t block, const ColMat& C);

// Predictions, without the label mean, of the fit split's models at every λ of `lambdas`
// for samples [first, first + count) of data: count × (L·K), λ_l in columns
// [l·K, (l+1)·K). The read-outs of all λ are formed first (P × L·K for feature models,
// n_fit × L·K for kernels), so each sample costs one feature row (or kernel row) times
// that matrix, never a pass through the n_fit training samples per λ.
ColMat ridge_path_predictions(const RidgeSolver::State& st, const FeatureMap* features,
                              const KernelFunction* kernel, const Batch& data, int64_t first,
                              int64_t count, int64_t block, const std::vector<double>& lambdas);

// Samples [first, first + count) of data times M, `block` samples at a time: count × M.cols().
// Feature models: φ(x)ᵀ M (M: P × c); kernel models: k(x, X_fit)ᵀ M / n_fit (M: n_fit × c),
// with the kernel rows (kernel models) or feature rows (feature models) of data taken from
// `cached` when given (rows of all of data, computed `block` samples at a time from row 0).
ColMat ridge_rows_times(const FeatureMap* features, const KernelFunction* kernel,
                        const double* X_fit, int64_t n_fit, const Batch& data, int64_t first,
                        int64_t count, int64_t block, const ColMat& M, const RowMat* cached);

// In a run group (ridge_share.h on): the features of all of data's samples (a test set every run
// of the group has alike), computed once, `block` samples at a time from sample 0, as predict()
// and the test λ path compute them alone; null when sharing is off or they do not fit.
const RowMat* ridge_shared_test_features(const FeatureMap& features, const Batch& data,
                                         int64_t block);

// nmse of predictions given as an n × K column-major matrix (flattened into flat).
void ridge_predictions_nmse(const Batch& data, const ColMat& pred_rows, std::vector<double>& flat,
                            double* nmse);

}  // namespace attn
