// Training losses averaged over `count` elements: mean squared error and binary
// cross-entropy with logits (stable form). Forward returns L in double; backward accumulates
// dpred += scale · ∂L/∂pred.
//
// mse:        ∂L/∂p = 2 (p − t) / count
// bce_logits: ℓ(z, y) = max(z, 0) − z·y + log1p(exp(−|z|)),  ∂L/∂z = (sigmoid(z) − y) / count
//             with sigmoid from exp(−|z|), so neither direction overflows.
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

void loss_check(int64_t count) {
  ATTN_CHECK(count > 0, "loss: nothing to average over (count " + std::to_string(count) +
                            "); the batch must hold at least one element");
}

}  // namespace

constexpr Choice<Loss> kLosses[] = {{Loss::mse, "mse"}, {Loss::bce_logits, "bce"}};

Loss loss_parse(const std::string& name) {
  if (const Loss* loss = choice_find(name, kLosses)) return *loss;
  const std::vector<std::string> names = choice_names(kLosses);
  throw UserError("unknown loss '" + name + "'" + did_you_mean(name, names) +
                  "; losses: " + join_names(names) + " (bce = binary cross-entropy with logits)");
}

const char* loss_name(Loss loss) { return choice_name(loss, kLosses); }

template <class T>
double loss_forward(Loss loss, const T* pred, const T* target, int64_t count) {
  loss_check(count);
  double sum = 0;
  switch (loss) {
    case Loss::mse:
      for (int64_t k = 0; k < count; ++k) {
        const double d = static_cast<double>(pred[k]) - static_cast<double>(target[k]);
        sum += d * d;
      }
      break;
    case Loss::bce_logits:
      for (int64_t k = 0; k < count; ++k) {
        const double z = pred[k], y = target[k];
        sum += std::max(z, 0.0) - z * y + std::log1p(std::exp(-std::abs(z)));
      }
      break;
  }
  return sum / static_cast<double>(count);
}

template <class T>
void loss_backward(Loss loss, T* dpred, const T* pred, const T* target, int64_t count, T scale) {
  loss_check(count);
  switch (loss) {
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
  }
  ATTN_ASSERT(false, "loss_backward: unknown loss");
}

template double loss_forward<float>(Loss, const float*, const float*, int64_t);
template double loss_forward<double>(Loss, const double*, const double*, int64_t);
template void loss_backward<float>(Loss, float*, const float*, const float*, int64_t, float);
template void loss_backward<double>(Loss, double*, const double*, const double*, int64_t, double);

}  // namespace attn
