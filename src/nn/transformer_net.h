// TransformerNet: L layers of (multi-head softmax attention + token-wise MLP), each with a
// residual connection and optional pre-layernorm, between a token map φ and an output map ψ
// (spec sanford2023 §1.2, the class T^{D,H}_{d,m,d′,p}).
//
// Per sequence: h_0 = φ(X) + P (N, m), P the position codes (nn/positions.h; none: P = 0);
// for l = 1 … L:
//   u = LN₁(h) (or h),  h ← h + Σ_h softmax_rows(s_l · uQ_h (uK_h)ᵀ) uV_h   (V_h ∈ R^{m×m})
//   w = LN₂(h) (or h),  h ← h + MLP(w)       (m → mlp_width → m)
// out = ψ(h_L) (N, d_out); with T_out = 1, token 0's. s_l as in AttentionNet (learned
// exp(τ_l), fixed, or 1/√m); causal masks score (i, j) for j > i in every layer, so output i
// depends on tokens 0 … i only. Parameter tensors: phi.*, pos (N, m) with learned positions,
// layer<l>.{q, k, v, log_temperature, ln1.gamma, ln1.beta, ln2.gamma, ln2.beta, mlp.*}, psi.*.
// Finite precision (precision.bits > 0, nn/head_precision.h): every layer's q, k, v (and
// optionally scores) are rounded per sequence and head in evaluation forwards, and in
// training forwards with precision.in_training (straight-through backward).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/head_precision.h"
#include "nn/mlp_block.h"
#include "nn/net.h"
#include "nn/positions.h"
#include "nn/temperature.h"

namespace attn {

struct TransformerNetConfig {
  int64_t layers = 2, m = 32, heads = 1, mlp_width = 0;  // 0: 4m
  bool layernorm = true;
  TokenMap phi = TokenMap::linear, psi = TokenMap::linear;  // linear | mlp (width phi_width)
  int64_t phi_width = 128, psi_width = 128;
  Activation activation = Activation::relu;
  Temperature temperature = Temperature::learned;
  double temperature_init = 1.0;
  bool exclude_self = false;
  bool causal = false;      // every layer: query i attends to tokens 0 … i only
  Positions positions = Positions::none;  // codes added to φ(X) (nn/positions.h)
  HeadPrecision precision;  // bits = 0: exact
  int64_t T = 1, d_in = 1, T_out = 1, d_out = 1;
  std::string name = "transformer";
};

// The attention maps "layer<l>" (B, H, N, N) of a stack of attention layers, from each layer's
// probabilities (B·H·N·N values; the transformer and gpt2 nets).
template <class T>
std::vector<AttentionMap> layer_attention_maps(const std::vector<const std::vector<T>*>& probs,
                                               int64_t B, int64_t H, int64_t N);

template <class T>
class TransformerNet : public Net<T> {
 public:
  explicit TransformerNet(const TransformerNetConfig& config);
  void forward(const T* x, int64_t B, T* y) override;
  void backward(const T* dy) override;
  void init(uint64_t seed) override;
  std::vector<AttentionMap> attention_maps() const override;
  std::vector<std::pair<std::string, double>> sizes() const override;

 private:
  struct Layer {
    int q = -1, k = -1, v = -1, tau = -1, g1 = -1, b1 = -1, g2 = -1, b2 = -1;
    MlpBlock<T> mlp;
    // Forward cache.
    std::vector<T> h_in, u, mean1, rstd1, q_buf, k_buf, v_buf, probs, heads, h_mid, w, mean2,
        rstd2, f;
  };
  T scale(const Layer& layer) const;
  TransformerNetConfig c_;
  MlpBlock<T> phi_, psi_;
  PositionCodes<T> pos_;
  std::vector<std::unique_ptr<Layer>> layers_;
  int64_t B_ = 0;
  int64_t score_bits_ = 0;  // of the last forward (the backward's shape)
  std::vector<T> h_out_, psi_out_;
};

}  // namespace attn
