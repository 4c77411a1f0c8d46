// The score scale of an attention layer (attention_net, transformer_net): the model key
// `temperature` = "learned" (exp of the parameter log_temperature), "fixed" (temperature_init)
// or "inv_sqrt_dk" (1/√dk).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

namespace attn {

// log_tau: the value of log_temperature (read only when mode == "learned").
template <class T>
T temperature_scale(const std::string& mode, const T* log_tau, double temperature_init,
                    int64_t dk) {
  if (mode == "learned") return std::exp(log_tau[0]);
  if (mode == "inv_sqrt_dk") return static_cast<T>(1.0 / std::sqrt(static_cast<double>(dk)));
  return static_cast<T>(temperature_init);
}

}  // namespace attn
