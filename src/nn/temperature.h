// The score scale of an attention layer (attention_net, transformer_net): the model key
// `temperature` = "learned" (exp of the parameter log_temperature), "fixed" (temperature_init)
// or "inv_sqrt_dk" (1/√dk), parsed once into a Temperature by the config builder.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/choice.h"

namespace attn {

enum class Temperature { learned, fixed, inv_sqrt_dk };
inline constexpr Choice<Temperature> kTemperatures[] = {{Temperature::learned, "learned"},
                                                        {Temperature::fixed, "fixed"},
                                                        {Temperature::inv_sqrt_dk, "inv_sqrt_dk"}};

// log_tau: the value of log_temperature (read only when mode == Temperature::learned).
template <class T>
T temperature_scale(Temperature mode, const T* log_tau, double temperature_init, int64_t dk) {
  if (mode == Temperature::learned) return std::exp(log_tau[0]);
  if (mode == Temperature::inv_sqrt_dk)
    return static_cast<T>(1.0 / std::sqrt(static_cast<double>(dk)));
  return static_cast<T>(temperature_init);
}

}  // namespace attn
