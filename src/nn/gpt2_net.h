// Gpt2Net: the transformer in GPT-2's layout (Radford et al. 2019; the `gpt2` model), with the
// tensor names of GPT-2 checkpoints so that they import and export as they are
// (models/gpt2_checkpoint.h; docs/models.md "gpt2").
//
// Per sequence, x (N, d_in) its rows (one-hot tokens on the token tasks), m = n_embd, H heads of
// width dh = m/H:
//   h_0 = x · wte + P                                  wte (d_in, m), P = wpe (N, m) (learned)
//   for l = 0 … L−1 (prefix h.<l>.):
//     u = LN(h; ln_1), [q k v] = u · attn.c_attn.weight + attn.c_attn.bias   ((m, 3m), (3m))
//     heads = softmax_rows(qₕ kₕᵀ / √dh, causal) vₕ per head h (columns h·dh … (h+1)·dh − 1)
//     h ← h + heads · attn.c_proj.weight + attn.c_proj.bias                  ((m, m), (m))
//     w = LN(h; ln_2), h ← h + gelu_tanh(w · mlp.c_fc.weight + b) · mlp.c_proj.weight + b
//                                                                           ((m, 4m), (4m, m))
//   z = LN(h_L; ln_f), logits = z · Eᵀ (N, d_out)
// E is wte itself when the head is tied (d_out = d_in) or lm_head.weight (d_out, m). Every
// weight is stored (in, out) (GPT-2's Conv1D layout) except wte and lm_head (rows = tokens).
// LayerNorm eps 1e-5; no dropout (every forward is deterministic). T_out = 1 keeps token 0's
// logits. bits > 0 rounds q, k, v (and scores) as in the transformer (nn/head_precision.h).
// Parameter init (GPT-2's): weights N(0, 0.02²), attn.c_proj/mlp.c_proj N(0, (0.02/√(2L))²),
// biases 0, LayerNorm weights 1 and biases 0, wpe N(0, 0.02²) (nn/positions.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/choice.h"
#include "nn/head_precision.h"
#include "nn/net.h"
#include "nn/positions.h"

namespace attn {

// model.head: the output matrix E. automatic ("auto"): tied when d_out = d_in, else separate.
enum class Gpt2Head { automatic, tied, separate };
inline constexpr Choice<Gpt2Head> kGpt2Heads[] = {
    {Gpt2Head::automatic, "auto"}, {Gpt2Head::tied, "tied"}, {Gpt2Head::separate, "separate"}};

struct Gpt2NetConfig {
  int64_t layers = 2, m = 32, heads = 4;
  bool causal = true;
  Positions positions = Positions::learned;
  Gpt2Head head = Gpt2Head::automatic;
  HeadPrecision precision;  // bits = 0: exact
  int64_t T = 1, d_in = 1, T_out = 1, d_out = 1;
  std::string name = "gpt2";
};

// Whether the config's head is wte (resolves automatic); UserError for tied with d_out ≠ d_in.
bool gpt2_head_tied(const Gpt2NetConfig& c);

// gelu with the tanh approximation (GPT-2's): 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
// Backward accumulates dinp += dout · gelu_tanh'(inp). count values each.
template <class T>
void gelu_tanh_forward(T* out, const T* inp, int64_t count);
template <class T>
void gelu_tanh_backward(T* dinp, const T* dout, const T* inp, int64_t count);

template <class T>
class Gpt2Net : public Net<T> {
 public:
  // Declares the tensors (GPT-2's names); UserError for m % heads ≠ 0 or a tied head with
  // d_out ≠ d_in.
  explicit Gpt2Net(const Gpt2NetConfig& config);
  void init(uint64_t seed) override;                   // GPT-2's initialisation (see above)
  void forward(const T* x, int64_t B, T* y) override;  // x (B, N, d_in) -> y (B, T_out, d_out)
  void backward(const T* dy) override;
  // "layer<l>" (B, H, N, N): each block's softmax weights.
  std::vector<AttentionMap> attention_maps() const override;
  std::vector<std::pair<std::string, double>> sizes() const override;  // m, heads, layers

 private:
  struct Layer {
    int g1, b1, attn_w, attn_b, proj_w, proj_b, g2, b2, fc_w, fc_b, mproj_w, mproj_b;
    // Forward cache (rows = B·N).
    std::vector<T> h_in, u, mean1, rstd1, q, k, v, probs, heads, h_mid, w, mean2, rstd2, fc, act;
  };
  void attention_layer_forward(Layer& L, int64_t B, int64_t bits);
  Gpt2NetConfig c_;
  bool tied_ = false;
  int wte_ = -1, gf_ = -1, bf_ = -1, head_ = -1;
  PositionCodes<T> pos_;
  std::vector<Layer> layers_;
  const T* x_ = nullptr;  // the last forward's input
  int64_t B_ = 0, score_bits_ = 0;
  std::vector<T> h_out_, z_, mean_f_, rstd_f_, logits_;
  std::vector<T> qkv_;  // attention_layer_forward's fused projection (scratch)
};

}  // namespace attn
