// The random-feature models of Fu et al. (2023) as attnlab models: frozen features or
// their infinite-width kernels, with a ridge read-out (train/ridge.h).
//
//   rfa           RFA: random-feature attention, W_m ~ w_mean·blockdiag(I_d, 0) + N(0, w_var)
//   brfa          BRFA: rfa with w_mean = mean_scale·√d (spec §1.4 default, c = 1)
//   rfmlp         random-feature MLP on the flattened sequence (width 0: as many trainable
//                 parameters as an RFA with `heads` heads)
//   rfa_kernel, brfa_kernel, rfmlp_kernel   their M → ∞ limits (kernel ridge); their
//                 `heads` = M divides the λ grid by M (resp. the matched width), the
//                 problem an M-head model at λ tends to; 0 leaves λ as given
// Inputs are rf_target samples (row 0 the query, rows 1..N the keys); outputs one scalar.
// [train] keys: n and the ridge keys (lambdas, val_fraction, solver, refit).
#pragma once

#include <memory>
#include <vector>

#include "core/params.h"
#include "models/model.h"

namespace attn {

std::vector<ParamSpec> rfa_schema();
std::vector<ParamSpec> brfa_schema();
std::vector<ParamSpec> rfmlp_schema();
std::vector<ParamSpec> rfa_kernel_schema();
std::vector<ParamSpec> brfa_kernel_schema();
std::vector<ParamSpec> rfmlp_kernel_schema();
std::vector<ParamSpec> rf_train_schema();  // the ridge keys

std::unique_ptr<Model> rfa_make(const ModelContext& context);
std::unique_ptr<Model> brfa_make(const ModelContext& context);
std::unique_ptr<Model> rfmlp_make(const ModelContext& context);
std::unique_ptr<Model> rfa_kernel_make(const ModelContext& context);
std::unique_ptr<Model> brfa_kernel_make(const ModelContext& context);
std::unique_ptr<Model> rfmlp_kernel_make(const ModelContext& context);

}  // namespace attn
