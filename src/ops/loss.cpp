// Training losses (loss.h): mean squared error, binary cross-entropy with logits and softmax
// cross-entropy, forward and backward adjacent. Forward returns L in double; backward
// accumulates dpred += scale · ∂L/∂pred.
//
// mse:           ∂L/∂p = 2 (p − t) / count
// bce_logits:    ℓ(z, y) = max(z, 0) − z·y + log1p(exp(−|z|)),  ∂L/∂z = (sigmoid(z) − y) / count
//                with sigmoid from exp(−|z|), so neither direction overflows.
// cross_entropy: per position (C logits z, target row t), m = max z,
//                lse = m + log Σ exp(z_k − m),  ℓ = Σ_k t_k (lse − z_k),
//                ∂L/∂z_k = ((Σt)·softmax(z)_k − t_k) / terms  (0 on ignored positions).
#include "ops/loss.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/choice.h"
#include "core/error.h"
#include "core/suggest.h"

namespace attn {
namespace {

constexpr Choice<Loss> kLosses[] = {
    {Loss::mse, "mse"}, {Loss::bce_logits, "bce"}, {Loss::cross_entropy, "cross_entropy"}};

void loss_check(int64_t count) {
  ATTN_CHECK(count > 0, "loss: nothing to average over (count " + std::to_string(count) +
                            "); the batch must hold at least one element");
}

// cross_entropy's grouping and its number of terms (UserError when every position is ignored).
template <class T>
int64_t cross_entropy_check(const LossSpec& loss, const T* target, int64_t count) {
  ATTN_ASSERT(loss.classes >= 2 && count % loss.classes == 0,
              "cross_entropy needs classes >= 2 dividing count");
  const int64_t terms = loss_terms(loss, target, count);
  ATTN_CHECK(terms > 0, "loss: every position of the batch is ignored (all-zero target rows); "
                        "cross_entropy needs at least one labelled position");
  return terms;
}

// logsumexp of C logits, shifted by their max (no overflow).
template <class T>
double logsumexp(const T* z, int64_t C) {
  double m = static_cast<double>(z[0]);
  for (int64_t k = 1; k < C; ++k) m = std::max(m, static_cast<double>(z[k]));
  double s = 0;
  for (int64_t k = 0; k < C; ++k) s += std::exp(static_cast<double>(z[k]) - m);
  return m + std::log(s);
}

}  // namespace

Loss loss_parse(const std::string& name) {
  if (const Loss* loss = choice_find(name, kLosses)) return *loss;
  const std::vector<std::string> names = choice_names(kLosses);
  throw UserError("unknown loss '" + name + "'" + did_you_mean(name, names) +
                  "; losses: " + join_names(names) +
                  " (bce = binary cross-entropy with logits, cross_entropy = softmax "
                  "cross-entropy over each position's d_out logits)");
}

const char* loss_name(Loss loss) { return choice_name(loss, kLosses); }

Loss loss_of_target(TargetKind kind) {
  switch (kind) {
    case TargetKind::real: return Loss::mse;
    case TargetKind::binary: return Loss::bce_logits;
    case TargetKind::categorical: return Loss::cross_entropy;
  }
  ATTN_ASSERT(false, "loss_of_target: unknown target kind");
}

template <class T>
int64_t loss_terms(const LossSpec& loss, const T* target, int64_t count) {
  switch (loss.loss) {
    case Loss::mse:
    case Loss::bce_logits: return count;
    case Loss::cross_entropy: {
      const int64_t C = loss.classes;
      int64_t terms = 0;
      for (int64_t p = 0; p < count / C; ++p)
        terms += std::any_of(target + p * C, target + (p + 1) * C, [](T t) { return t != T(0); });
      return terms;
    }
  }
  ATTN_ASSERT(false, "loss_terms: unknown loss");
}

template <class T>
double loss_weight(const LossSpec& loss, const T* target, int64_t rows, int64_t row_size) {
  switch (loss.loss) {
    case Loss::mse:
    case Loss::bce_logits: return static_cast<double>(rows);
    case Loss::cross_entropy: return static_cast<double>(loss_terms(loss, target, rows * row_size));
  }
  ATTN_ASSERT(false, "loss_weight: unknown loss");
}

template <class T>
double loss_forward(const LossSpec& loss, const T* pred, const T* target, int64_t count) {
  loss_check(count);
  double sum = 0;
  switch (loss.loss) {
    case Loss::mse:
      for (int64_t k = 0; k < count; ++k) {
        const double d = static_cast<double>(pred[k]) - static_cast<double>(target[k]);
        sum += d * d;
      }
      return sum / static_cast<double>(count);
    case Loss::bce_logits:
      for (int64_t k = 0; k < count; ++k) {
        const double z = pred[k], y = target[k];
        sum += std::max(z, 0.0) - z * y + std::log1p(std::exp(-std::abs(z)));
      }
      return sum / static_cast<double>(count);
    case Loss::cross_entropy: {
      const int64_t C = loss.classes, terms = cross_entropy_check(loss, target, count);
      for (int64_t p = 0; p < count / C; ++p) {
        const T* z = pred + p * C;
        const T* t = target + p * C;
        if (std::all_of(t, t + C, [](T v) { return v == T(0); })) continue;
        const double lse = logsumexp(z, C);
        for (int64_t k = 0; k < C; ++k)
          if (t[k] != T(0)) sum += static_cast<double>(t[k]) * (lse - static_cast<double>(z[k]));
      }
      return sum / static_cast<double>(terms);
    }
  }
  ATTN_ASSERT(false, "loss_forward: unknown loss");
}

template <class T>
void loss_backward(const LossSpec& loss, T* dpred, const T* pred, const T* target, int64_t count,
                   T scale) {
  loss_check(count);
  switch (loss.loss) {
    case Loss::mse: {
      const T c = T(2) * scale / static_cast<T>(count);
      for (int64_t k = 0; k < count; ++k) dpred[k] += c * (pred[k] - target[k]);
      return;
    }
    case Loss::bce_logits: {
      const T c = scale / static_cast<T>(count);
      for (int64_t k = 0; k < count; ++k) {
        const T z = pred[k];
        const T e = std::exp(-std::abs(z));
        const T s = z >= T(0) ? T(1) / (T(1) + e) : e / (T(1) + e);
        dpred[k] += c * (s - target[k]);
      }
      return;
    }
    case Loss::cross_entropy: {
      const int64_t C = loss.classes, terms = cross_entropy_check(loss, target, count);
      const double c = static_cast<double>(scale) / static_cast<double>(terms);
      for (int64_t p = 0; p < count / C; ++p) {
        const T* z = pred + p * C;
        const T* t = target + p * C;
        double mass = 0;  // Σ_k t_k (1 for a one-hot row, 0 for an ignored one)
        for (int64_t k = 0; k < C; ++k) mass += static_cast<double>(t[k]);
        if (mass == 0) continue;
        const double lse = logsumexp(z, C);
        for (int64_t k = 0; k < C; ++k) {
          const double softmax = std::exp(static_cast<double>(z[k]) - lse);
          dpred[p * C + k] += static_cast<T>(c * (mass * softmax - static_cast<double>(t[k])));
        }
      }
      return;
    }
  }
  ATTN_ASSERT(false, "loss_backward: unknown loss");
}

double loss_cross_entropy_naive(const double* z, const double* target, int64_t count,
                                int64_t classes, double* grad) {
  const int64_t C = classes;
  int64_t terms = 0;
  double sum = 0;
  std::vector<double> g(static_cast<size_t>(count), 0.0);
  for (int64_t p = 0; p < count / C; ++p) {
    double mass = 0, partition = 0;
    for (int64_t k = 0; k < C; ++k) mass += target[p * C + k];
    if (mass == 0) continue;
    ++terms;
    for (int64_t k = 0; k < C; ++k) partition += std::exp(z[p * C + k]);
    for (int64_t k = 0; k < C; ++k) {
      sum -= target[p * C + k] * std::log(std::exp(z[p * C + k]) / partition);
      g[p * C + k] = mass * std::exp(z[p * C + k]) / partition - target[p * C + k];
    }
  }
  for (int64_t k = 0; k < count; ++k) grad[k] = g[k] / static_cast<double>(terms);
  return sum / static_cast<double>(terms);
}

template int64_t loss_terms<float>(const LossSpec&, const float*, int64_t);
template int64_t loss_terms<double>(const LossSpec&, const double*, int64_t);
template double loss_weight<float>(const LossSpec&, const float*, int64_t, int64_t);
template double loss_weight<double>(const LossSpec&, const double*, int64_t, int64_t);
template double loss_forward<float>(const LossSpec&, const float*, const float*, int64_t);
template double loss_forward<double>(const LossSpec&, const double*, const double*, int64_t);
template void loss_backward<float>(const LossSpec&, float*, const float*, const float*, int64_t,
                                   float);
template void loss_backward<double>(const LossSpec&, double*, const double*, const double*,
                                    int64_t, double);

}  // namespace attn
