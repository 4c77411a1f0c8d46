// First-order optimisers over a flat parameter vector: Adam, AdamW and SGD (with momentum),
// exactly as the PyTorch documentation states them (torch.optim.Adam, AdamW, SGD; Adam:
// Kingma & Ba 2015, Algorithm 1; AdamW: Loshchilov & Hutter 2019, decoupled weight decay):
//   Adam:  g ← ∇ + λθ;  m ← β₁m + (1−β₁)g;  v ← β₂v + (1−β₂)g²;
//          θ ← θ − γ · (m / (1−β₁ᵗ)) / (√(v / (1−β₂ᵗ)) + ε)
//   AdamW: θ ← θ − γλθ, then the Adam step with g = ∇ (no λθ term)
//   SGD:   g ← ∇ + λθ;  b ← g (t = 1), μb + g (t > 1) when μ ≠ 0, else b = g;  θ ← θ − γb
// γ is the step's learning rate (the schedule's value), t the 1-based step count.
// Moments are kept in T (float for training, double in tests); bias corrections in double.
#pragma once

#include <cstdint>
#include <vector>

#include "core/choice.h"

namespace attn {

enum class OptimizerKind { adam, adamw, sgd };
inline constexpr Choice<OptimizerKind> kOptimizerKinds[] = {
    {OptimizerKind::adam, "adam"}, {OptimizerKind::adamw, "adamw"}, {OptimizerKind::sgd, "sgd"}};

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::adam;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weight_decay = 0;
  double momentum = 0;  // SGD only
};

template <class T>
class Optimizer {
 public:
  Optimizer(const OptimizerConfig& config, int64_t size);
  // One update of params (size values) from grads, with learning rate lr.
  void step(T* params, const T* grads, double lr);
  int64_t steps() const { return t_; }

 private:
  OptimizerConfig c_;
  std::vector<T> m_, v_;
  int64_t t_ = 0;
};

}  // namespace attn
