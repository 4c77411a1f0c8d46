// Infinite-width kernels of Fu et al.'s random-feature models (spec §1.3–1.5, §3.5), and
// the Gaussian expectations they are made of.
//
// Input X: count samples of T × d, row-major (the rf_target layout): row 0 the query x_0,
// rows 1..T−1 the N = T − 1 keys. x̃ = [x; 1] when augment, else x̃ = x (D = d + 1 or d).
//
//   RFA/BRFA  Φ_m(x) = (1/N) Σ_i σ(s_mi) x̃_i,  s_mi = x̃_0ᵀ W_m x̃_i,
//             W_m = μ·W_0 + √(w_var)·G,  W_0 = blockdiag(I_d, 0) (I_d without augment).
//             H(x, x') = E_W ⟨Φ_m(x), Φ_m(x')⟩
//                      = (1/N²) Σ_{i,j} E[σ(s_i) σ(s'_j)] ⟨x̃_i, x̃'_j⟩,
//             (s_i, s'_j) jointly Gaussian: means μ⟨x_0, x_i⟩, μ⟨x'_0, x'_j⟩, variances
//             w_var‖x̃_0‖²‖x̃_i‖², w_var‖x̃'_0‖²‖x̃'_j‖²,
//             covariance w_var⟨x̃_0, x̃'_0⟩⟨x̃_i, x̃'_j⟩.
//             σ = relu or exp (the finite model's a = σ(s)/N). M heads: ⟨Φ, Φ'⟩ ≈ M·H.
//   RFMLP     φ_m(x) = relu(⟨w_m, z̃⟩), z̃ = [x_0; …; x_N; 1] (no 1 without augment),
//             w_m ~ N(0, w_var·I): H = relu_gauss_kernel(w_var‖z̃‖², w_var‖z̃'‖², w_var⟨z̃, z̃'⟩).
//
// N = T − 1: every row after the query is a key (rf_target's self mode included).
//
// Costs for K (na × nb): RFA is na·nb·N² Gaussian expectations over (i, j) key pairs.
// μ = 0 (relu) and exp are closed forms over GEMM blocks (SSE2, ~6–7 ns per pair); μ ≠ 0
// (relu, mean_method = "cdf") integrates 4–20 Gauss–Legendre nodes per pair by |ρ| band
// (~100 ns per pair; "quadrature" ~2 µs). Measured, one core, N = d = 8, n = 2000, X = X:
// μ = 0 0.7 s, μ = 0.5√d 14 s. K = kernel(X, n, X, n) (same pointer) is computed as a
// symmetric matrix (half the work, exactly symmetric). Work is split over threads_count()
// threads by blocks of rows of K; results do not depend on the thread count.
// RFMLP is one GEMM plus na·nb arc-cosines.
#pragma once

#include <cstdint>
#include <string>

#include "model_api/feature_map.h"
#include "models/rfa_features.h"

namespace attn {

// E[relu(g_a) relu(g_b)] for centred Gaussians with variances qa, qb ≥ 0 and covariance c
// (arc-cosine kernel, spec §3.5): √(qa qb)/(2π)·(√(1−ρ²) + ρ(π − arccos ρ)), ρ = c/√(qa qb)
// clamped to [−1, 1]; 0 when qa or qb is 0.
double relu_gauss_kernel(double qa, double qb, double c);

// E[relu(ma + g_a) relu(mb + g_b)] with means ma, mb, by quadrature (the reference method).
// In standardised form (a = ma/√qa, b = mb/√qb, ρ = c/√(qa qb)) the ρ-derivative of the
// expectation is Φ₂(a, b; ρ) (Price's theorem), whose own derivative is the bivariate
// density; integrating twice from ρ = 0 (independent factors) and substituting
// u = sin θ (Plackett/Sheppard):
//   F(a, b, ρ) = c₀(a)c₀(b) + ρΦ(a)Φ(b) + (1/2π) ∫_0^{asin ρ} (ρ − sin θ)·
//                exp(−(a² + b² − 2ab sin θ)/(2cos²θ)) dθ,      c₀(a) = aΦ(a) + φ(a),
// a smooth one-dimensional integral even at |ρ| = 1 (no Cholesky, nothing degenerate).
// Gauss–Legendre with `nodes` points per panel, panels graded geometrically towards
// θ = ±π/2 (where the integrand has a boundary layer of width |a ∓ b| as |ρ| → 1).
// Accuracy about 1e-15·(1 + |result|) with the default 48 nodes; exact closed form for
// ma = mb = 0 up to that error. qa = 0 or qb = 0 reduce to one-dimensional closed forms.
// (A plain 2-D Gauss–Hermite rule is not used: relu's kink limits it to ~1e-3 at 48×48.)
double relu_gauss_kernel_mean(double ma, double mb, double qa, double qb, double c,
                              int nodes = 48);

// The same expectation by the fast method used by RfaKernel: the integral above with
// 4–20 Gauss–Legendre nodes chosen by |ρ| band for |ρ| < 0.925, and
//   F = (ab + ρ)Φ₂(a, b; ρ) + aφ(b)Φ((a−ρb)/√(1−ρ²)) + bφ(a)Φ((b−ρa)/√(1−ρ²))
//       + √(1−ρ²) φ(a) φ((b−ρa)/√(1−ρ²))
// otherwise, with Φ₂ by Genz's high-correlation method; exact limits at |ρ| = 1.
// Agrees with relu_gauss_kernel_mean to ~1e-15·(1 + |result|).
double relu_gauss_kernel_mean_cdf(double ma, double mb, double qa, double qb, double c);

// Bivariate standard normal CDF P(Z₁ ≤ h, Z₂ ≤ k) with correlation rho ∈ [−1, 1]
// (Drezner–Wesolowsky / Genz 2004), absolute accuracy ~1e-15.
double bvn_cdf(double h, double k, double rho);

// E[exp(ma + g_a) exp(mb + g_b)] = exp(ma + mb + (qa + qb + 2c)/2)   (closed form).
double exp_gauss_kernel(double ma, double mb, double qa, double qb, double c);

// RFA / BRFA per-head kernel H. Keys are the [model] keys of the finite model.
// model.mean_method (relu with μ ≠ 0): "cdf" (fast, closed form via Φ₂) or "quadrature"
// (relu_gauss_kernel_mean, ~20× slower).
enum class KernelMeanMethod { cdf, quadrature };
inline constexpr Choice<KernelMeanMethod> kKernelMeanMethods[] = {
    {KernelMeanMethod::cdf, "cdf"}, {KernelMeanMethod::quadrature, "quadrature"}};

struct RfaKernelConfig {
  RfaActivation activation = RfaActivation::relu;  // relu | exp (softmax has no kernel here)
  bool augment = true;              // x̃ = [x; 1]
  double w_var = 0.25;              // entry variance s² of G (≥ 0; 0 = W = μW_0 exactly)
  double w_mean = 0.0;              // μ: BRFA mean scale (0 = RFA)
  int quadrature_nodes = 48;        // per panel, for mean_method = "quadrature"
  KernelMeanMethod mean_method = KernelMeanMethod::cdf;
};

class RfaKernel final : public KernelFunction {
 public:
  // T = N + 1 rows per sample (query + N keys), d token dim. Throws UserError on a bad
  // config (naming the model.* key) or T < 2.
  RfaKernel(const RfaKernelConfig& config, int64_t T, int64_t d);
  void kernel(const double* Xa, int64_t na, const double* Xb, int64_t nb,
              double* K) const override;

 private:
  RfaKernelConfig config_;
  int64_t T_, d_;
};

// RFMLP kernel H = E[relu(⟨w, z̃⟩) relu(⟨w, z̃'⟩)].
struct RfmlpKernelConfig {
  bool augment = true;  // z̃ ends with a constant 1
  double w_var = 0;     // variance of w's entries; 0 = 1/(N+2) with N = T − 1
};

class RfmlpKernel final : public KernelFunction {
 public:
  RfmlpKernel(const RfmlpKernelConfig& config, int64_t T, int64_t d);
  void kernel(const double* Xa, int64_t na, const double* Xb, int64_t nb,
              double* K) const override;
  double w_var() const { return w_var_; }  // the variance in force (default resolved)

 private:
  bool augment_;
  double w_var_;
  int64_t T_, d_;
};

}  // namespace attn
