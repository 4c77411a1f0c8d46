// RFA / BRFA random features (Fu et al. 2023, spec §1.3, §1.4, §1.7): the frozen part of a
// random-feature attention layer, f(x_0, X; V) = Σ_m <v_m, Φ_m(x_0, X)> with V trained.
//
//   x̃ = [x; 1] ∈ R^e (e = d + 1) with augment, x̃ = x (e = d) without
//   s_mi = x̃_0ᵀ W_m x̃_i                   score of key i = 1..N under head m = 1..M
//   Φ_m  = Σ_i a_mi x̃_i ∈ R^e            a_mi = relu(s_mi)/N | exp(s_mi)/N | softmax_i(s_mi)
//   W_m  = w_mean·blockdiag(I_d, 0) + sqrt(w_var)·G_m,  G_m i.i.d. N(0, 1)   (w_mean = 0: RFA)
//
// Shapes: X count × T × d (row-major; row 0 of a sample is the query x_0, rows 1..N = T − 1
// the keys); Phi count × M·e, head-major: Phi[j][m·e + k] = Φ_m(sample j)[k].
// weights() M × e × e, W_m row-major: W_m[a][b] multiplies x̃_0[a] x̃_i[b].
//
// Guarantees: head m is drawn from its own stream Rng(seed, "rfa.W", m), filled row by row,
// so the first M' heads of an M-head model are the M'-head model (nested in M). Φ is a
// function of the key set only (exactly invariant to permuting keys, up to the rounding of
// the sum over keys). features() is const and thread-safe; it splits the samples of a call
// into blocks of B samples (B = block_size(); blocks start at multiples of B) over up to
// threads_count() threads, and its result is bit-identical for any thread count. Grouping
// samples differently (another first sample or count) can change the last bits of a
// sample's features (BLAS rounding depends on a row's place in its block; ~1e-16 relative).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/choice.h"
#include "model_api/feature_map.h"

namespace attn {

// model.activation of the RFA models and kernels: a_mi = relu(s_mi)/N, exp(s_mi)/N, or the
// softmax of the scores over the keys (finite width only).
enum class RfaActivation { relu, exp, softmax };
inline constexpr Choice<RfaActivation> kRfaActivations[] = {{RfaActivation::relu, "relu"},
                                                            {RfaActivation::exp, "exp"},
                                                            {RfaActivation::softmax, "softmax"}};

struct RfaConfig {
  int64_t heads = 512;              // M
  RfaActivation activation = RfaActivation::relu;
  bool augment = true;              // x̃ = [x; 1]
  double w_var = 0.25;              // entry variance s² of W_m
  double w_mean = 0.0;              // μ: E W_m = μ·blockdiag(I_d, 0) (0 = RFA, > 0 = BRFA)
  int64_t block = 0;                // samples per GEMM block B in features(); 0 = automatic
                                    // (a power of two in [16, 256], U = B × M·e ≤ 2 MiB)
};

class RfaFeatures final : public FeatureMap {
 public:
  // Draws W. UserError on a bad config (heads < 1, w_var < 0) or a
  // sample shape without keys (T < 2) or tokens (d < 1).
  RfaFeatures(const RfaConfig& config, int64_t T, int64_t d, uint64_t seed);

  int64_t dim() const override;  // M·e
  // Fast path: per block of B samples one GEMM U = X̃_0 (B × e) · [W_1 … W_M] (e × M·e),
  // then per sample S = U_mat (M × e) · X̃_keysᵀ (e × N), the activation, and
  // Φ = A (M × N) · X̃_keys (N × e), written in place into the sample's row of Phi.
  void features(const double* X, int64_t count, double* Phi) const override;

  const RfaConfig& config() const { return config_; }
  const std::vector<double>& weights() const { return W_; }  // M × e × e
  int64_t token_dim() const { return e_; }                   // e
  int64_t block_size() const { return block_; }              // B actually used

 private:
  RfaConfig config_;
  int64_t T_, d_, e_, block_;
  std::vector<double> W_;     // M × e × e, as drawn
  std::vector<double> Wcat_;  // e × M·e row-major: [W_1 … W_M], Wcat[a][m·e + b] = W_m[a][b]
};

// The definition, one scalar loop per (sample, head, key): the test reference for
// RfaFeatures::features. W is M × e × e as returned by weights().
void rfa_features_reference(const RfaConfig& c, const std::vector<double>& W, int64_t T,
                            int64_t d, const double* X, int64_t count, double* Phi);

}  // namespace attn
