// Training losses: the mean of a per-term loss over the terms of `count` values.
//
// mse:           terms = the count values;  ℓ = (pred − target)²
// bce_logits:    terms = the count values;  ℓ = max(z, 0) − z·y + log(1 + exp(−|z|)), z the
//                logit, y ∈ [0, 1] (binary cross-entropy on sigmoid(z), computed stably)
// cross_entropy: the values are positions of `classes` logits each (count = positions ·
//                classes); terms = the positions whose target row is not all zero (an all-zero
//                row is an ignored position: no loss, no gradient);
//                ℓ = −Σ_k t_k log softmax(z)_k = Σ_k t_k (logsumexp(z) − z_k), t a one-hot (or
//                any non-negative) target row
// Shapes: pred/logits, target, dpred all hold `count` values (row-major: cross_entropy's
// position p is values [p·classes, (p+1)·classes)). The forward returns L = mean of ℓ over the
// terms, in double (accumulated in double whatever T is); the backward accumulates
// dpred += scale · ∂L/∂pred. Both throw UserError when there is no term to average over.
#pragma once

#include <cstdint>
#include <string>

#include "tasks/target_kind.h"

namespace attn {

enum class Loss { mse, bce_logits, cross_entropy };

// A loss and its grouping; converts implicitly from a Loss (mse and bce need no grouping).
struct LossSpec {
  Loss loss = Loss::mse;
  int64_t classes = 0;  // cross_entropy: the logits per position (>= 2); unused otherwise
  LossSpec(Loss l = Loss::mse, int64_t c = 0) : loss(l), classes(c) {}  // NOLINT: implicit
};

// "mse", "bce" (binary cross-entropy with logits), "cross_entropy" (softmax cross-entropy
// over each position's d_out logits); UserError otherwise.
Loss loss_parse(const std::string& name);
const char* loss_name(Loss loss);

// The loss a target kind trains with: real → mse, binary → bce, categorical → cross_entropy.
Loss loss_of_target(TargetKind kind);

// The number of terms L averages over in these `count` values (see above).
template <class T>
int64_t loss_terms(const LossSpec& loss, const T* target, int64_t count);

// The weight of `rows` rows of `row_size` values each in a mean over several blocks of rows:
// mse and bce: rows (every row holds row_size terms); cross_entropy: loss_terms. A mean of
// block means weighted by it is the mean over the union.
template <class T>
double loss_weight(const LossSpec& loss, const T* target, int64_t rows, int64_t row_size);

template <class T>
double loss_forward(const LossSpec& loss, const T* pred, const T* target, int64_t count);
template <class T>
void loss_backward(const LossSpec& loss, T* dpred, const T* pred, const T* target, int64_t count,
                   T scale);

// Naive reference of cross_entropy for tests: L with logsumexp = log Σ exp(z) computed
// directly (no max shift) and the gradient (Σt)·softmax(z) − t over the terms; double only.
double loss_cross_entropy_naive(const double* z, const double* target, int64_t count,
                                int64_t classes, double* grad);

}  // namespace attn
