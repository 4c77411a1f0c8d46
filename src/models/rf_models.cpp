// Parameters and construction of the random-feature models (rf_models.h).
#include "models/rf_models.h"

#include <cmath>

#include "core/error.h"
#include "models/rf_kernels.h"
#include "models/rfa_features.h"
#include "models/rfmlp_features.h"
#include "models/select_model.h"
#include "models/ridge_model.h"

namespace attn {
namespace {

// Defaults are the config structs' initialisers (RfaConfig, RfaKernelConfig, RfmlpConfig,
// RfmlpKernelConfig): one source, checked by tests/test_param_defaults.cpp.
std::vector<ParamSpec> attention_common(bool kernel) {
  const RfaConfig rfa;
  const RfaKernelConfig rfa_kernel;
  std::vector<ParamSpec> s;
  if (!kernel) s.push_back(param_int("heads", rfa.heads, "number of random heads M", 1, 1 << 24));
  s.push_back(param_choice(
      "activation", choice_name(kernel ? rfa_kernel.activation : rfa.activation, kRfaActivations),
      kernel ? std::vector<std::string>{"relu", "exp"} : choice_names(kRfaActivations),
      "score activation: relu(s)/N, exp(s)/N" +
          std::string(kernel ? "" : ", or softmax over the keys")));
  s.push_back(param_bool("augment", kernel ? rfa_kernel.augment : rfa.augment,
                         "append the constant coordinate: x~ = [x; 1]"));
  s.push_back(param_real("w_var", kernel ? rfa_kernel.w_var : rfa.w_var,
                         "variance of W's entries (1/4 gives N(0,1) scores on the unit sphere)",
                         0.0));
  return s;
}

void check_rf_shape(const TaskShape& shape, const std::string& model) {
  ATTN_CHECK(shape.T >= 2 && shape.T_out * shape.d_out == 1,
             "model " + model + " needs rf_target-style data (a query row, key rows, one scalar "
             "target); this task has T = " + std::to_string(shape.T) + ", outputs " +
             std::to_string(shape.T_out * shape.d_out));
}

void check_rf_input(const ModelContext& c, const std::string& model) {
  check_rf_shape(c.shape, model);
}

RfaConfig rfa_config(const Params& p, double w_mean) {
  RfaConfig c;
  c.heads = p.get_int("heads");
  c.activation = choice_parse(p.get_string("activation"), kRfaActivations, "model.activation");
  c.augment = p.get_bool("augment");
  c.w_var = p.get_real("w_var");
  c.w_mean = w_mean;
  return c;
}

RfaKernelConfig rfa_kernel_config(const Params& p, double w_mean) {
  RfaKernelConfig c;
  c.activation = choice_parse(p.get_string("activation"), kRfaActivations, "model.activation");
  c.augment = p.get_bool("augment");
  c.w_var = p.get_real("w_var");
  c.w_mean = w_mean;
  c.mean_method =
      choice_parse(p.get_string("mean_method"), kKernelMeanMethods, "model.mean_method");
  c.quadrature_nodes = static_cast<int>(p.get_int("quadrature_nodes"));
  return c;
}

double brfa_mean(const Params& p, int64_t d) {
  return p.get_real("mean_scale") * std::sqrt(static_cast<double>(d));
}

}  // namespace

RfaKernelConfig rfa_kernel_config_from(const Params& p, const std::string& model, int64_t d) {
  ATTN_ASSERT(model == "rfa_kernel" || model == "brfa_kernel", "rfa_kernel_config_from: " + model);
  return rfa_kernel_config(p, model == "brfa_kernel" ? brfa_mean(p, d) : p.get_real("w_mean"));
}

RfmlpKernelConfig rfmlp_kernel_config_from(const Params& p) {
  RfmlpKernelConfig config;
  config.augment = p.get_bool("augment");
  config.w_var = p.get_real("w_var");
  return config;
}

RfaConfig rfa_config_from(const Params& p, const std::string& model, int64_t d) {
  ATTN_ASSERT(model == "rfa" || model == "brfa", "rfa_config_from: " + model);
  return rfa_config(p, model == "brfa" ? brfa_mean(p, d) : p.get_real("w_mean"));
}

RfmlpConfig rfmlp_config_from(const Params& p, int64_t d) {
  RfmlpConfig config;
  config.augment = p.get_bool("augment");
  config.w_var = p.get_real("w_var");
  config.width = p.get_int("width");
  if (config.width == 0)
    config.width = rfmlp_matched_width(p.get_int("matched_heads"), d, config.augment);
  return config;
}

bool rf_is_feature_model(const std::string& model) {
  return model == "rfa" || model == "brfa" || model == "rfmlp";
}

void rf_feature_model_check(const std::string& model) {
  model_find(model);  // unknown names: did-you-mean
  if (rf_is_feature_model(model)) return;
  const bool kernel = model.size() > 7 && model.substr(model.size() - 7) == "_kernel";
  throw UserError("model " + model +
                  (kernel ? " is a kernel model (the infinite-width limit, no finite features)"
                          : " has no random features") +
                  "; the feature models are rfa, brfa and rfmlp");
}

std::unique_ptr<FeatureMap> rf_feature_map_make(const std::string& model, const Params& p,
                                                const TaskShape& shape, uint64_t seed) {
  rf_feature_model_check(model);
  check_rf_shape(shape, model);
  if (model == "rfmlp")
    return std::make_unique<RfmlpFeatures>(rfmlp_config_from(p, shape.d_in), shape.T, shape.d_in,
                                           seed);
  ATTN_CHECK(!p.has("mean_scales") || p.get_real_list("mean_scales").empty(),
             "model.mean_scales chooses one of several brfa feature maps on validation data; "
             "give a single model.mean_scale instead");
  return std::make_unique<RfaFeatures>(rfa_config_from(p, model, shape.d_in), shape.T, shape.d_in,
                                       seed);
}

bool rf_feature_weights(const FeatureMap& features, ModelTensor* out) {
  if (const auto* rfa = dynamic_cast<const RfaFeatures*>(&features)) {
    const int64_t e = rfa->token_dim();
    *out = {"W", {rfa->config().heads, e, e}, rfa->weights()};
    return true;
  }
  if (const auto* mlp = dynamic_cast<const RfmlpFeatures*>(&features)) {
    *out = {"w", {mlp->dim(), mlp->input_dim()}, mlp->weights()};
    return true;
  }
  return false;
}

std::vector<ParamSpec> rfa_schema() {
  auto s = attention_common(false);
  s.push_back(
      param_real("w_mean", RfaConfig{}.w_mean, "mean μ of W: μ·blockdiag(I_d, 0) (0 = RFA)"));
  return s;
}

std::vector<ParamSpec> brfa_schema() {
  auto s = attention_common(false);
  s.push_back(param_real("mean_scale", 1.0, "c in the mean μ = c·√d of W (spec §1.4)"));
  s.push_back(param_real_list("mean_scales", {},
                              "if given, fit one model per c and keep the best on validation "
                              "(overrides mean_scale)", 0.0));
  return s;
}

// rfmlp's width 0 (the schema's own meaning) is resolved by rfmlp_config_from; RfmlpConfig
// has no width default. `matched_heads` was called `heads` (its stored name).
std::vector<ParamSpec> rfmlp_schema() {
  const RfmlpConfig rfmlp;
  return {
      param_int("width", 0,
                "random features M'; 0 = matched_heads·(d+1), RFA's trainable-parameter count", 0,
                1 << 26),
      param_renamed(
          param_int("matched_heads", RfaConfig{}.heads,
                    "the RFA head count M that width = 0 matches: M·(d+1) features", 1, 1 << 24),
          "heads"),
      param_real("w_var", rfmlp.w_var,
                 "variance of w's entries; 0 = 1/(N+2) (N(0,1) pre-activations)", 0.0),
      param_bool("augment", rfmlp.augment, "append the constant 1 to the flattened input"),
  };
}

// Kernel models: `lambda_heads` = M rescales the penalty to λ/M, the kernel-ridge problem an
// M-head model at λ tends to (spec §3.5); 0 = λ as given. It was called `heads` (its stored
// name, so a zipped sweep of model.heads over rfa and rfa_kernel still works).
ParamSpec kernel_heads_param() {
  return param_renamed(
      param_int("lambda_heads", 0,
                "compare with an M-head model: the penalty becomes λ/M (spec §3.5); 0 = λ as given",
                0, 1 << 24),
      "heads");
}

constexpr const char* kMeanMethodHelp =
    "relu with μ ≠ 0: bivariate-normal closed form (cdf) or the reference Gauss–Legendre "
    "quadrature of a 1-D integral (about 20× slower)";

// Added after results were stored: out of run ids at its default (ParamSpec::id_omit_default).
ParamSpec quadrature_nodes_param() {
  return param_id_omit_default(
      param_int("quadrature_nodes", RfaKernelConfig{}.quadrature_nodes,
                "Gauss–Legendre nodes per panel for mean_method = quadrature", 2, 1000));
}

RidgeOptions kernel_ridge_options(const ModelContext& c) {
  RidgeOptions o = ridge_options(c.train);
  const int64_t heads = c.model.get_int("lambda_heads");
  if (heads > 0)
    for (double& l : o.lambdas) l /= static_cast<double>(heads);
  return o;
}

std::vector<ParamSpec> rfa_kernel_schema() {
  auto s = attention_common(true);
  s.push_back(kernel_heads_param());
  s.push_back(
      param_real("w_mean", RfaKernelConfig{}.w_mean, "mean μ of W: μ·blockdiag(I_d, 0) (0 = RFA)"));
  s.push_back(param_choice("mean_method",
                           choice_name(RfaKernelConfig{}.mean_method, kKernelMeanMethods),
                           choice_names(kKernelMeanMethods), kMeanMethodHelp));
  s.push_back(quadrature_nodes_param());
  return s;
}

std::vector<ParamSpec> brfa_kernel_schema() {
  auto s = attention_common(true);
  s.push_back(kernel_heads_param());
  s.push_back(param_real("mean_scale", 1.0, "c in the mean μ = c·√d of W (spec §1.4)"));
  s.push_back(param_choice("mean_method",
                           choice_name(RfaKernelConfig{}.mean_method, kKernelMeanMethods),
                           choice_names(kKernelMeanMethods), kMeanMethodHelp));
  s.push_back(quadrature_nodes_param());
  return s;
}

std::vector<ParamSpec> rfmlp_kernel_schema() {
  const RfmlpKernelConfig kernel;
  return {
      param_renamed(param_int("lambda_heads", 0,
                              "compare with RFMLP of width lambda_heads·(d+1): the penalty "
                              "becomes λ/width; 0 = λ as given",
                              0, 1 << 24),
                    "heads"),
      param_real("w_var", kernel.w_var, "variance of w's entries; 0 = 1/(N+2)", 0.0),
      param_bool("augment", kernel.augment, "append the constant 1 to the flattened input"),
  };
}

std::vector<ParamSpec> rf_train_schema() { return ridge_train_schema(); }

std::unique_ptr<Model> rfa_make(const ModelContext& c) {
  check_rf_input(c, "rfa");
  return std::make_unique<RidgeModel>(rf_feature_map_make("rfa", c.model, c.shape, c.seed),
                                      ridge_options(c.train));
}

std::unique_ptr<Model> brfa_make(const ModelContext& c) {
  check_rf_input(c, "brfa");
  const std::vector<double>& scales = c.model.get_real_list("mean_scales");
  if (!scales.empty()) {
    // One candidate per mean scale, chosen on the validation split.
    std::vector<std::unique_ptr<Model>> candidates;
    for (double scale : scales) {
      const double mu = scale * std::sqrt(static_cast<double>(c.shape.d_in));
      candidates.push_back(std::make_unique<RidgeModel>(
          std::make_unique<RfaFeatures>(rfa_config(c.model, mu), c.shape.T, c.shape.d_in, c.seed),
          ridge_options(c.train)));
    }
    return std::make_unique<SelectByValidation>(std::move(candidates), scales, "mean_scale");
  }
  auto features = std::make_unique<RfaFeatures>(
      rfa_config(c.model, brfa_mean(c.model, c.shape.d_in)), c.shape.T, c.shape.d_in, c.seed);
  return std::make_unique<RidgeModel>(std::move(features), ridge_options(c.train));
}

std::unique_ptr<Model> rfmlp_make(const ModelContext& c) {
  check_rf_input(c, "rfmlp");
  return std::make_unique<RidgeModel>(rf_feature_map_make("rfmlp", c.model, c.shape, c.seed),
                                      ridge_options(c.train));
}

std::unique_ptr<Model> rfa_kernel_make(const ModelContext& c) {
  check_rf_input(c, "rfa_kernel");
  auto kernel = std::make_unique<RfaKernel>(
      rfa_kernel_config_from(c.model, "rfa_kernel", c.shape.d_in), c.shape.T, c.shape.d_in);
  return std::make_unique<RidgeModel>(std::move(kernel), kernel_ridge_options(c));
}

std::unique_ptr<Model> brfa_kernel_make(const ModelContext& c) {
  check_rf_input(c, "brfa_kernel");
  auto kernel = std::make_unique<RfaKernel>(
      rfa_kernel_config_from(c.model, "brfa_kernel", c.shape.d_in), c.shape.T, c.shape.d_in);
  return std::make_unique<RidgeModel>(std::move(kernel), kernel_ridge_options(c));
}

std::unique_ptr<Model> rfmlp_kernel_make(const ModelContext& c) {
  check_rf_input(c, "rfmlp_kernel");
  const RfmlpKernelConfig config = rfmlp_kernel_config_from(c.model);
  auto kernel = std::make_unique<RfmlpKernel>(config, c.shape.T, c.shape.d_in);
  RidgeOptions o = ridge_options(c.train);
  const int64_t heads = c.model.get_int("lambda_heads");
  if (heads > 0) {
    const double width =
        static_cast<double>(rfmlp_matched_width(heads, c.shape.d_in, config.augment));
    for (double& l : o.lambdas) l /= width;
  }
  return std::make_unique<RidgeModel>(std::move(kernel), o);
}

}  // namespace attn
