// Adam, AdamW, SGD (see optimizer.h).
#include "train/optimizer.h"

#include <cmath>

#include "core/error.h"

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
  const bool decoupled = c_.kind == OptimizerKind::adamw;
  const T b1 = static_cast<T>(c_.beta1), b2 = static_cast<T>(c_.beta2);
  const double bc1 = 1 - std::pow(c_.beta1, static_cast<double>(t_));
  const double bc2 = 1 - std::pow(c_.beta2, static_cast<double>(t_));
  const T step_size = static_cast<T>(lr / bc1);
  const T inv_sqrt_bc2 = static_cast<T>(1 / std::sqrt(bc2));
  const T eps = static_cast<T>(c_.eps), decay = static_cast<T>(1 - lr * c_.weight_decay);
  for (int64_t i = 0; i < n; ++i) {
    T g = grads[i];
    if (decoupled) {
      params[i] *= decay;
    } else {
      g += wd * params[i];
    }
    m_[i] = b1 * m_[i] + (1 - b1) * g;
    v_[i] = b2 * v_[i] + (1 - b2) * g * g;
    params[i] -= step_size * m_[i] / (std::sqrt(v_[i]) * inv_sqrt_bc2 + eps);
  }
}

template class Optimizer<float>;
template class Optimizer<double>;

}  // namespace attn
