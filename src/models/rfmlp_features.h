// RFMLP random features (Fu et al. 2023, spec §1.5): the frozen first layer of a two-layer
// random-feature network on the flattened sequence, f(x; a) = Σ_m a_m φ_m with a trained.
//
//   z̃   = [x_0; x_1; …; x_N; 1] ∈ R^D      (D = T·d + 1 with augment, T·d without)
//   φ_m = relu(<w_m, z̃>),   w_m i.i.d. N(0, w_var·I_D),  w_var = 0 means 1/(N + 2)
//
// Shapes: X count × T × d (row-major, N = T − 1 keys); Phi count × width;
// weights() width × D row-major (row m is w_m, its last entry multiplies the constant 1).
//
// Guarantees: w_m is drawn from its own stream Rng(seed, "rfmlp.w", m), so the first W'
// features of a width-W model are the width-W' model (nested in width). features() is
// const and thread-safe; it splits a call into blocks of B samples starting at multiples
// of B, over up to threads_count() threads, and is bit-identical for any thread count
// (another grouping of samples into calls can change the last bits, as for RFA). Unlike
// RFA, the features are not invariant to permuting the keys.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model_api/feature_map.h"

namespace attn {

struct RfmlpConfig {
  int64_t width = 0;                // M' ≥ 1, no default: set it (the rfmlp model's default,
                                    // width 0 = matched to RFA, is resolved by rfmlp_config_from)
  double w_var = 0;                 // entry variance of w_m; 0 = 1/(N+2), the spec default
  bool augment = true;              // append the constant 1 to z
  int64_t block = 0;                // samples per GEMM block B in features(); 0 = automatic (256)
};

class RfmlpFeatures final : public FeatureMap {
 public:
  // Draws the weights. UserError on a bad config (width < 1, w_var < 0) or shape (T < 1, d < 1).
  RfmlpFeatures(const RfmlpConfig& config, int64_t T, int64_t d, uint64_t seed);

  int64_t dim() const override;  // width
  // Fast path: per block of B samples one GEMM Z̃ (B × D) · Wᵀ (D × width), then relu.
  void features(const double* X, int64_t count, double* Phi) const override;

  const RfmlpConfig& config() const { return config_; }
  const std::vector<double>& weights() const { return W_; }  // width × D
  int64_t input_dim() const { return D_; }                   // D
  double weight_var() const { return w_var_; }               // the variance actually used
  int64_t block_size() const { return block_; }              // B actually used

 private:
  RfmlpConfig config_;
  int64_t T_, d_, D_, block_;
  double w_var_;
  std::vector<double> W_;     // width × D
  std::vector<double> bias_;  // width: the augmented column W[:, T·d] (augment only)
};

// The definition, one scalar dot product per (sample, unit): the test reference for
// RfmlpFeatures::features. W is width × D as returned by weights().
void rfmlp_features_reference(const RfmlpConfig& c, const std::vector<double>& W, int64_t T,
                              int64_t d, const double* X, int64_t count, double* Phi);

// The RFMLP width with as many trainable parameters as an RFA with `heads` heads:
// heads·(d + 1) with augment, heads·d without (spec §1.5, M' = M(d + 1)).
int64_t rfmlp_matched_width(int64_t heads, int64_t d, bool augment);

}  // namespace attn
