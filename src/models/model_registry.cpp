// Model registry: one row per model, in the order `attnlab list` shows them (the rows of the
// gradient-trained models come from their table, neural_kinds.h); and the [train]/[eval]
// schemas of a run (train_schema.h).
#include <string>
#include <vector>

#include "core/error.h"
#include "core/suggest.h"
#include "models/baselines.h"
#include "models/construction_model.h"
#include "models/model_registry.h"
#include "models/neural_kinds.h"
#include "models/neural_train_config.h"
#include "models/rf_models.h"
#include "models/train_schema.h"
#include "train/ridge.h"

namespace attn {

namespace {

// The registry's row of a gradient-trained model (models/neural_kinds.h).
ModelInfo neural_model_info(const NeuralKindInfo& kind) {
  return {.name = kind.name,
          .description = kind.description,
          .schema = kind.schema,
          .train_schema = neural_train_schema,
          .make = kind.make,
          .fresh_samples = true,
          .check_train = neural_train_check};
}

}  // namespace

const std::vector<ModelInfo>& model_registry() {
  // Every row but the gradient-trained models', which go before the last (construction).
  static const std::vector<ModelInfo> others = {
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
       .ridge_fitted = true,
       .check_train = ridge_train_check},
      {.name = "brfa",
       .description = "Fu et al.: biased RFA, W_m with mean mean_scale*sqrt(d)*I",
       .schema = brfa_schema,
       .train_schema = rf_train_schema,
       .make = brfa_make,
       .ridge_fitted = true,
       .check_train = ridge_train_check},
      {.name = "rfmlp",
       .description = "Fu et al.: random-feature MLP on the flattened sequence",
       .schema = rfmlp_schema,
       .train_schema = rf_train_schema,
       .make = rfmlp_make,
       .ridge_fitted = true,
       .check_train = ridge_train_check},
      {.name = "rfa_kernel",
       .description = "infinite-head limit of rfa (kernel ridge)",
       .schema = rfa_kernel_schema,
       .train_schema = rf_train_schema,
       .make = rfa_kernel_make,
       .ridge_fitted = true,
       .check_train = ridge_train_check},
      {.name = "brfa_kernel",
       .description = "infinite-head limit of brfa (kernel ridge)",
       .schema = brfa_kernel_schema,
       .train_schema = rf_train_schema,
       .make = brfa_kernel_make,
       .ridge_fitted = true,
       .check_train = ridge_train_check},
      {.name = "rfmlp_kernel",
       .description = "infinite-width limit of rfmlp (kernel ridge)",
       .schema = rfmlp_kernel_schema,
       .train_schema = rf_train_schema,
       .make = rfmlp_kernel_make,
       .ridge_fitted = true,
       .check_train = ridge_train_check},
      {.name = "construction",
       .description = "Sanford et al.: explicit attention weights from the proofs (no training)",
       .schema = construction_schema,
       .train_schema = construction_train_schema,
       .make = construction_make_model,
       .fresh_samples = true,
       .no_training = true},
  };
  static const std::vector<ModelInfo> registry = [] {
    ATTN_ASSERT(others.back().name == "construction",
                "the gradient-trained models go before construction");
    std::vector<ModelInfo> rows(others.begin(), others.end() - 1);
    for (const NeuralKindInfo& kind : neural_kinds()) rows.push_back(neural_model_info(kind));
    rows.push_back(others.back());
    return rows;
  }();
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
              "\"\" = the task's own")),
          // Added later: out of run ids while 0 (experiment/eval_length.h).
          param_id_omit_default(
              param_int("N", 0,
                        "test set drawn with task.N set to this (evaluation at another length than "
                        "training); 0 = the task's own",
                        0, 1 << 20))};
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
