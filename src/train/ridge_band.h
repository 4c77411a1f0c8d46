// Private to src/train/ridge*.cpp: ridge's λ path from a band form of the D × D system instead
// of its eigendecomposition, at the sizes where that is faster (docs/performance.md, "λ path:
// eigendecomposition vs per-λ solves").
//
// A = Q B Qᵀ with B banded (kd subdiagonals): from D ≈ 2000 LAPACK's dsytrd_sy2sb, the first
// stage of the two-stage tridiagonal reduction, made of BLAS-3 calls, where dsytrd (the eigen
// path's first step) is half memory-bound BLAS-2; below that dsytrd itself (kd = 1, B the
// tridiagonal T), leaving out the eigen path's second step (dstedc). Every λ's solution is then
//   (A + λI)⁻¹ R = Q (B + λI)⁻¹ Qᵀ R
// : a band Cholesky factor per λ (O(D·kd²), shared by every target and kept) and Q applied to
// the columns (O(D²) each), as the eigen path applies its eigenvectors. This equals the eigen
// path's shrinkage 1/(Λ + λ) to rounding when no eigenvalue is at or below the numerical floor
// (floor = D·ε·λ_max): then a λ at or below the floor and λ → 0⁺, which the eigen path solves
// as the pseudo-inverse, are the solve at λ = 0. So the band form is only taken when
// B − 2·floor·I is positive definite (its band Cholesky succeeds); otherwise the fit uses the
// eigendecomposition as before.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

enum class RidgePath;  // train/ridge.h

struct RidgeBand {
  int64_t kd = 0;
  // Q as LAPACK's reflectors: column j's below row j + kd (D × D; the rest is unused), tau.
  Eigen::MatrixXd reflectors;
  Eigen::VectorXd tau;
  Eigen::MatrixXd
      band;  // (kd + 1) × D: B's lower band, LAPACK band storage B(i, j) = band(i − j, j)
  double eig_max = 0.0;  // B's largest eigenvalue (bisection; 0 if negative)
  // Band Cholesky factors of B + shift·I for the shifts the λ grid needs (made with the form).
  std::vector<double> shifts;
  std::vector<Eigen::MatrixXd> factors;

  bool empty() const { return band.size() == 0; }
  int64_t size() const { return band.cols(); }
  Eigen::MatrixXd q_times(Eigen::MatrixXd X) const;   // Q · X  (D × m)
  Eigen::MatrixXd qt_times(Eigen::MatrixXd X) const;  // Qᵀ · X (D × m)
  // (B + shift·I)⁻¹ C (D × m), from a kept factor or a new one.
  Eigen::MatrixXd solve(double shift, Eigen::MatrixXd C) const;
};

// The band width a fit tries for a D × D system (RidgeOptions::path), 0 for the
// eigendecomposition: "eigen" 0; "tridiagonal" 1 (dsytrd, the eigen path's own first step);
// "band" 64 below D = 3000, else 128 (dsytrd_sy2sb), at most D/4; "auto" (the benchmark's
// choice, docs/performance.md) the eigendecomposition below D = 512, tridiagonal below 2048,
// band from there.
int64_t ridge_band_width(RidgePath path, int64_t D);
// The numerical floor of a D × D system whose largest eigenvalue is eig_max (≥ 0).
double ridge_floor(double eig_max, int64_t D);
// The band form with kd subdiagonals (kd = 1: tridiagonal) of the symmetric matrix whose
// lower triangle is A, with the factors of the shifts `lambdas` need (λ > floor, and 0 for the
// rest and λ → 0⁺). True: A was consumed (its storage holds the reflectors). False, A
// unchanged: B has non-finite entries or an eigenvalue at or below 2·floor, so the caller
// takes the eigendecomposition.
bool ridge_band_make(Eigen::MatrixXd& A, const std::vector<double>& lambdas, int64_t kd,
                     RidgeBand& out);
// The path's solutions from the band form: D × (L·K), λ_l in columns [l·K, (l+1)·K), for the
// right-hand sides C = Qᵀ R (D × K), as ridge_path_coefficients gives them from the spectrum.
Eigen::MatrixXd ridge_band_path(const RidgeBand& band, const Eigen::MatrixXd& C, double floor,
                                const std::vector<double>& lambdas);

}  // namespace attn
