// rf_target (Fu et al. 2023): a query x_0 and N keys in R^d, scalar target
//   f*(x_0, X) = (1/K) Σ_{keys i} F(x_0, x_i)      (K = N, or N + 1 in self mode)
// for the families of the spec (§2.2), with t_i = <x_0, x_i>:
//   pair_power  (s t_i)^p           pair_value  (s t_i)^p (b <β, x_i>)
//   keys_power  (b <β, x_i>)^p      query_power (b <β, x_0>)^p
//   corr_exp    exp(γ s t_i)        corr_cos    cos(γ s t_i)     corr_poly (s t_i + γ)^p
// s and b scale each inner product to unit variance when normalize = true (s = √d, b = √d
// for unit-sphere tokens), else 1. β is a unit vector drawn once per dataset seed.
//
// Shapes: X n × (N+1) × d (query in row 0, keys after; self mode: x_0 repeated as the last
// key, n × (N+2) × d). Y n × 1 × 1. Raw: f_star (n) when label noise is on. Constant: beta (d).
#pragma once

#include <memory>
#include <vector>

#include "core/params.h"
#include "tasks/task.h"

namespace attn {

std::vector<ParamSpec> rf_target_schema();
std::unique_ptr<Task> rf_target_make(const Params& params);

// Brute-force reference for tests: the target of one sample from its tokens, written
// from the definition above (x rows as in X), independent of the fast path.
double rf_target_reference(const Params& params, const double* x, const double* beta);
// The registry's reference (TaskReference): rf_target_reference on the sample's tokens and
// the dataset's β (the clean target: label noise excluded).
void rf_target_batch_reference(const Params& params, const Batch& batch, int64_t row, double* y);

}  // namespace attn
