// Model registry: one row per model, in the order `attnlab list` shows them; and the
// [train]/[eval] schemas of a run (train_schema.h).
#include <string>
#include <vector>

#include "core/error.h"
#include "core/suggest.h"
#include "models/baselines.h"
#include "models/construction_model.h"
#include "models/model_registry.h"
#include "models/neural_models.h"
#include "models/rf_models.h"
#include "models/train_schema.h"

namespace attn {

const std::vector<ModelInfo>& model_registry() {
  static const std::vector<ModelInfo> registry = {
      {.name = "mean",
       .description = "baseline: the training mean of every output coordinate",
       .schema = mean_schema,
       .train_schema = mean_train_schema,
       .make = mean_make},
      {.name = "linear",
       .description = "baseline: ridge regression on the flattened sequence, with intercept",
       .schema = linear_schema,
       .train_schema = linear_train_schema,
       .make = linear_make},
      {.name = "rfa",
       .description = "Fu et al.: random-feature attention, frozen W_m, ridge-trained values",
       .schema = rfa_schema,
       .train_schema = rf_train_schema,
       .make = rfa_make,
       .ridge_fitted = true},
      {.name = "brfa",
       .description = "Fu et al.: biased RFA, W_m with mean mean_scale*sqrt(d)*I",
       .schema = brfa_schema,
       .train_schema = rf_train_schema,
       .make = brfa_make,
       .ridge_fitted = true},
      {.name = "rfmlp",
       .description = "Fu et al.: random-feature MLP on the flattened sequence",
       .schema = rfmlp_schema,
       .train_schema = rf_train_schema,
       .make = rfmlp_make,
       .ridge_fitted = true},
      {.name = "rfa_kernel",
       .description = "infinite-head limit of rfa (kernel ridge)",
       .schema = rfa_kernel_schema,
       .train_schema = rf_train_schema,
       .make = rfa_kernel_make,
       .ridge_fitted = true},
      {.name = "brfa_kernel",
       .description = "infinite-head limit of brfa (kernel ridge)",
       .schema = brfa_kernel_schema,
       .train_schema = rf_train_schema,
       .make = brfa_kernel_make,
       .ridge_fitted = true},
      {.name = "rfmlp_kernel",
       .description = "infinite-width limit of rfmlp (kernel ridge)",
       .schema = rfmlp_kernel_schema,
       .train_schema = rf_train_schema,
       .make = rfmlp_kernel_make,
       .ridge_fitted = true},
      {.name = "attention",
       .description = "Sanford et al.: one attention unit psi(sum_h softmax heads(phi(X))), trained by gradient",
       .schema = attention_schema,
       .train_schema = neural_train_schema,
       .make = attention_make,
       .fresh_samples = true,
       .check_train = neural_train_check},
      {.name = "third_order",
       .description = "Sanford et al.: one unit of third-order (pair) attention heads, trained by gradient",
       .schema = third_order_schema,
       .train_schema = neural_train_schema,
       .make = third_order_make,
       .fresh_samples = true,
       .check_train = neural_train_check},
      {.name = "transformer",
       .description = "L layers of multi-head attention + MLP with residuals, trained by gradient",
       .schema = transformer_schema,
       .train_schema = neural_train_schema,
       .make = transformer_make,
       .fresh_samples = true,
       .check_train = neural_train_check},
      {.name = "mlp",
       .description = "fully connected net on the concatenated tokens, all outputs at once (gradient)",
       .schema = mlp_schema,
       .train_schema = neural_train_schema,
       .make = mlp_make,
       .fresh_samples = true,
       .check_train = neural_train_check},
      {.name = "lstm",
       .description = "LSTM reading the sequence, outputs after the whole sequence (gradient)",
       .schema = lstm_schema,
       .train_schema = neural_train_schema,
       .make = lstm_make,
       .fresh_samples = true,
       .check_train = neural_train_check},
      {.name = "construction",
       .description = "Sanford et al.: explicit attention weights from the proofs (no training)",
       .schema = construction_schema,
       .train_schema = construction_train_schema,
       .make = construction_make_model,
       .fresh_samples = true,
       .no_training = true},
  };
  return registry;
}

std::vector<ParamSpec> train_common_schema() {
  return {param_int("n", 1000,
                    "training-set size (samples 0 .. n-1 of the run's seed); 0 = fresh samples "
                    "every step (gradient-trained models)",
                    0, 1e12)};
}

std::vector<ParamSpec> eval_schema() {
  return {param_int("n", 2000, "test-set size", 1, 1e12),
          param_int("first", 1000000000,
                    "index of the first test sample (train uses 0 .. train.n-1)", 0, 1e15),
          // Added later: out of run ids while "" (see ParamSpec::id_omit_default).
          param_id_omit_default(param_choice(
              "instances", "", {},
              "test set drawn with task.instances set to this (e.g. disj, planted_triples); "
              "\"\" = the task's own"))};
}

std::vector<ParamSpec> model_train_schema(const ModelInfo& model) {
  std::vector<ParamSpec> train = train_common_schema();
  for (auto& p : model.train_schema()) train.push_back(std::move(p));
  return train;
}

const ModelInfo& model_find(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& info : model_registry()) {
    if (info.name == name) return info;
    names.push_back(info.name);
  }
  const std::string known = join_names(names);
  throw UserError("unknown model '" + name + "'" + did_you_mean(name, names) +
                  "; models: " + known + " (see `attnlab list`)");
}

}  // namespace attn
