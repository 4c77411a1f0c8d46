// AttentionNet: the paper's single attention unit ψ ∘ L ∘ φ (spec sanford2023 §1.1–1.2, §1.4)
// with H heads summed — softmax heads (`attention` model) or third-order heads
// (`third_order` model).
//
// Per sequence X (N, d_in):
//   Φ = φ(X) + P                   (N, m)      φ: linear or MLP, row-wise; P the position
//                                              codes (nn/positions.h; none: P = 0)
//   softmax head h: q = ΦQ_h, k = ΦK_h (N, dk), v = ΦV_h (N, dv)
//                   A_h = softmax_rows(s · q kᵀ),  a_h = A_h v
//   third-order head h: q = ΦQ_h, k¹ = ΦK1_h, k² = ΦK2_h, v¹ = ΦV1_h, v² = ΦV2_h,
//                   a_h as in ops/third_order_attention.h
//   a = Σ_h a_h                    (N, dv)
//   out = ψ([Φ, a]) with the residual flag (spec §7 A1), ψ(a) without   (N, d_out)
// causal: score (i, j) = −∞ for j > i (third order: pair (j, k) masked when j > i or k > i),
// so output i depends on tokens 0 … i only.
// s is the temperature: exp(τ) with τ learned (init log temperature_init), fixed
// temperature_init, or 1/√dk. Q/K/V have no bias (the paper's unit). When the task has
// T_out = 1 (one output per sequence, e.g. rf_target) the output is token 0's.
// Parameter tensors: phi.*, pos (N, m) with learned positions, q (m, H·dk), k (m, H·dk) [third
// order: k1, k2], v (m, H·dv) [third order: v1, v2], log_temperature (1) when learned, psi.*.
// Softmax heads with dk = m and unrounded q, k compute the same scores as ΦA_h·Φᵀ with
// A_h = Q_h K_hᵀ (ops/attention.h shared_keys): one m × m projection per head instead of two.
// Finite precision (precision.bits > 0, nn/head_precision.h): q, k, v (and optionally the
// scores) are rounded per sequence and head in evaluation forwards, and in training
// forwards with precision.in_training (straight-through backward).
#pragma once

#include <string>

#include "nn/head_precision.h"
#include "nn/mlp_block.h"
#include "nn/net.h"
#include "nn/positions.h"
#include "nn/temperature.h"
#include "ops/activation.h"

namespace attn {

struct AttentionNetConfig {
  bool third_order = false;
  int64_t m = 16, heads = 1;
  int64_t qk_dim = 0;     // 0: m (Q, K ∈ R^{m×m}, spec §7 A2)
  int64_t value_dim = 0;  // 0: d_out
  TokenMap phi = TokenMap::mlp;  // linear | mlp
  int64_t phi_width = 128;
  TokenMap psi = TokenMap::linear;  // identity | linear | mlp
  int64_t psi_width = 128;
  bool residual = true;
  Activation activation = Activation::relu;
  Temperature temperature = Temperature::learned;
  double temperature_init = 1.0;
  bool exclude_self = false;
  bool causal = false;  // query i attends to tokens 0 … i only (third order: pairs j, k ≤ i)
  Positions positions = Positions::none;  // codes added to Φ (nn/positions.h)
  HeadPrecision precision;  // bits = 0: exact
  // Task shapes.
  int64_t T = 1, d_in = 1, T_out = 1, d_out = 1;
  std::string name = "attention";  // RNG stream prefix
};

template <class T>
class AttentionNet : public Net<T> {
 public:
  // Validates the configuration (UserError naming the model key) and declares parameters.
  explicit AttentionNet(const AttentionNetConfig& config);
  void forward(const T* x, int64_t B, T* y) override;
  void backward(const T* dy) override;
  void init(uint64_t seed) override;
  std::vector<AttentionMap> attention_maps() const override;
  std::vector<std::pair<std::string, double>> sizes() const override;

 private:
  T scale() const;
  AttentionNetConfig c_;
  int64_t dk_ = 0, dv_ = 0, psi_in_ = 0;
  // Softmax heads with Q_h, K_h ∈ R^{m×m}·… and exact q, k: the scores φ_i Q_h K_hᵀ φ_jᵀ are
  // computed as queries Φ·A_h, A_h = Q_h K_hᵀ (m × m), against the shared keys Φ — one
  // projection per head instead of two (Activations::fused).
  MlpBlock<T> phi_, psi_;
  PositionCodes<T> pos_;
  int q_ = -1, k1_ = -1, k2_ = -1, v1_ = -1, v2_ = -1, tau_ = -1;  // parameter ids
  // What forward() keeps for backward(), for the last batch: B sequences of N = T tokens,
  // rows = B·N, H heads, key width dk, value width dv (second key and value: third order only).
  struct Activations {
    int64_t B = 0;
    int64_t score_bits = 0;  // the scores' rounding (the backward's shape)
    bool fused = false;      // queries Φ·A_h against the keys Φ
    std::vector<T> qk;       // (m, H·m): [A_1 … A_H] (fused only)
    std::vector<T> phi_out;  // (rows, m): φ(x_i)
    std::vector<T> q;        // (rows, H·dk), fused: (rows, H·m)
    std::vector<T> k1, k2;   // (rows, H·dk) (k1 unused when fused)
    std::vector<T> v1, v2;   // (rows, H·dv)
    std::vector<T> probs;    // (B, H, N, N); third order (B, H, N, N, N)
    std::vector<T> heads;    // (rows, H·dv): each head's output
    std::vector<T> psi_in;   // (rows, psi_in_): [φ(x_i); Σ_h heads] or Σ_h heads
    std::vector<T> psi_out;  // (rows, d_out)
  };
  // The gradients of the loss w.r.t. the same tensors (backward scratch, reused across steps;
  // heads doubles as the forward's head-sum scratch).
  struct ActivationGrads {
    std::vector<T> qk, phi, q, k1, k2, v1, v2, heads, psi_in, psi_out;
  };
  Activations acts_;
  ActivationGrads grad_acts_;
};

}  // namespace attn
