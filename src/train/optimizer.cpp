// Adam, AdamW, SGD (see optimizer.h).
#include "train/optimizer.h"

#include <cmath>

#include "core/error.h"
#include "ops/adam_update.h"

namespace attn {

template <class T>
Optimizer<T>::Optimizer(const OptimizerConfig& config, int64_t size) : c_(config) {
  m_.assign(static_cast<size_t>(size), T(0));
  if (c_.kind != OptimizerKind::sgd) v_.assign(static_cast<size_t>(size), T(0));
}

template <class T>
void Optimizer<T>::step(T* params, const T* grads, double lr) {
  ++t_;
  const int64_t n = static_cast<int64_t>(m_.size());
  const T wd = static_cast<T>(c_.weight_decay);
  if (c_.kind == OptimizerKind::sgd) {
    const T mu = static_cast<T>(c_.momentum), g_lr = static_cast<T>(lr);
    for (int64_t i = 0; i < n; ++i) {
      T g = grads[i] + wd * params[i];
      if (c_.momentum != 0) {
        m_[i] = t_ == 1 ? g : mu * m_[i] + g;
        g = m_[i];
      }
      params[i] -= g_lr * g;
    }
    return;
  }
  const double bc1 = 1 - std::pow(c_.beta1, static_cast<double>(t_));
  const double bc2 = 1 - std::pow(c_.beta2, static_cast<double>(t_));
  const AdamScalars<T> s{static_cast<T>(c_.beta1),
                         static_cast<T>(c_.beta2),
                         static_cast<T>(lr / bc1),
                         static_cast<T>(1 / std::sqrt(bc2)),
                         static_cast<T>(c_.eps),
                         wd,
                         static_cast<T>(1 - lr * c_.weight_decay),
                         c_.kind == OptimizerKind::adamw};
  adam_update(params, grads, m_.data(), v_.data(), n, s);
}

template class Optimizer<float>;
template class Optimizer<double>;

}  // namespace attn
