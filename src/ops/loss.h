// Training losses, averaged over all `count` elements.
//
// mse:        L = (1/count) Σ (pred − target)²
// bce_logits: L = (1/count) Σ [max(z, 0) − z·y + log(1 + exp(−|z|))], z the logit, y ∈ [0, 1]
//             (binary cross-entropy on sigmoid(z), computed stably).
// Shapes: pred/logits, target, dpred all hold `count` values. The forward returns L in
// double (accumulated in double whatever T is); backward accumulates dpred += scale · ∂L/∂pred.
#pragma once

#include <cstdint>
#include <string>

namespace attn {

enum class Loss { mse, bce_logits };

// "mse", "bce" (binary cross-entropy with logits); UserError otherwise.
Loss loss_parse(const std::string& name);
const char* loss_name(Loss loss);

template <class T>
double loss_forward(Loss loss, const T* pred, const T* target, int64_t count);
template <class T>
void loss_backward(Loss loss, T* dpred, const T* pred, const T* target, int64_t count, T scale);

}  // namespace attn
