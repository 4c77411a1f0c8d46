// The random-feature models of Fu et al. (2023) as attnlab models: frozen features or
// their infinite-width kernels, with a ridge read-out (train/ridge.h).
//
//   rfa           RFA: random-feature attention, W_m ~ w_mean·blockdiag(I_d, 0) + N(0, w_var)
//   brfa          BRFA: rfa with w_mean = mean_scale·√d (spec §1.4 default, c = 1)
//   rfmlp         random-feature MLP on the flattened sequence (width 0: as many trainable
//                 parameters as an RFA with `matched_heads` heads)
//   rfa_kernel, brfa_kernel, rfmlp_kernel   their M → ∞ limits (kernel ridge); their
//                 `lambda_heads` = M divides the λ grid by M (resp. the matched width), the
//                 problem an M-head model at λ tends to; 0 leaves λ as given
// `matched_heads` and `lambda_heads` were both called `heads`: that spelling is accepted and
// stays their name in stored configurations, run ids and result columns (ParamSpec::stored_as).
// Inputs are rf_target samples (row 0 the query, rows 1..N the keys); outputs one scalar.
// [train] keys: n and the ridge keys (lambdas, val_fraction, solver, refit).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/params.h"
#include "model_api/feature_map.h"
#include "models/model_registry.h"
#include "models/rf_kernels.h"
#include "models/rfa_features.h"
#include "models/rfmlp_features.h"

namespace attn {

std::vector<ParamSpec> rfa_schema();
std::vector<ParamSpec> brfa_schema();
std::vector<ParamSpec> rfmlp_schema();
std::vector<ParamSpec> rfa_kernel_schema();
std::vector<ParamSpec> brfa_kernel_schema();
std::vector<ParamSpec> rfmlp_kernel_schema();
std::vector<ParamSpec> rf_train_schema();  // the ridge keys

// [model] params -> feature-map and kernel configs, as the models use them (d = token dim
// d_in): rfa and rfa_kernel take w_mean as given, brfa and brfa_kernel set w_mean =
// mean_scale·√d; rfmlp's width 0 means rfmlp_matched_width(matched_heads, d, augment) =
// matched_heads·(d+1) (matched_heads·d without augment).
RfaConfig rfa_config_from(const Params& model_params, const std::string& model, int64_t d);
RfmlpConfig rfmlp_config_from(const Params& model_params, int64_t d);
RfaKernelConfig rfa_kernel_config_from(const Params& model_params, const std::string& model,
                                       int64_t d);
RfmlpKernelConfig rfmlp_kernel_config_from(const Params& model_params);

// True for the finite random-feature models: rfa, brfa, rfmlp.
bool rf_is_feature_model(const std::string& model);
// UserError unless `model` is one of them: did-you-mean for unknown names, and a clear
// line for a kernel or baseline model.
void rf_feature_model_check(const std::string& model);
// The frozen feature map of rfa, brfa or rfmlp for data of this shape, drawn from `seed`
// exactly as the model draws it. UserError for an unknown name (did-you-mean), a kernel
// or baseline model, data that is not rf_target-style, or brfa with model.mean_scales.
std::unique_ptr<FeatureMap> rf_feature_map_make(const std::string& model,
                                                const Params& model_params,
                                                const TaskShape& shape, uint64_t seed);
// The frozen weights of an RFA/BRFA or RFMLP feature map as a tensor: "W" (M, e, e) or
// "w" (width, D), as RfaFeatures / RfmlpFeatures::weights() hold them. False otherwise.
bool rf_feature_weights(const FeatureMap& features, ModelTensor* out);

std::unique_ptr<Model> rfa_make(const ModelContext& context);
std::unique_ptr<Model> brfa_make(const ModelContext& context);
std::unique_ptr<Model> rfmlp_make(const ModelContext& context);
std::unique_ptr<Model> rfa_kernel_make(const ModelContext& context);
std::unique_ptr<Model> brfa_kernel_make(const ModelContext& context);
std::unique_ptr<Model> rfmlp_kernel_make(const ModelContext& context);

}  // namespace attn
