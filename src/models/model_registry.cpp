// Model registry: one row per model, in the order `attnlab list` shows them.
#include <string>
#include <vector>

#include "core/error.h"
#include "core/suggest.h"
#include "models/baselines.h"
#include "models/construction_model.h"
#include "models/model.h"
#include "models/neural_models.h"
#include "models/rf_models.h"

namespace attn {

const std::vector<ModelInfo>& model_registry() {
  static const std::vector<ModelInfo> registry = {
      {"mean", "baseline: the training mean of every output coordinate", mean_schema,
       mean_train_schema, mean_make},
      {"linear", "baseline: ridge regression on the flattened sequence, with intercept",
       linear_schema, linear_train_schema, linear_make},
      {"rfa", "Fu et al.: random-feature attention, frozen W_m, ridge-trained values",
       rfa_schema, rf_train_schema, rfa_make, false, false, true},
      {"brfa", "Fu et al.: biased RFA, W_m with mean mean_scale*sqrt(d)*I", brfa_schema,
       rf_train_schema, brfa_make, false, false, true},
      {"rfmlp", "Fu et al.: random-feature MLP on the flattened sequence", rfmlp_schema,
       rf_train_schema, rfmlp_make, false, false, true},
      {"rfa_kernel", "infinite-head limit of rfa (kernel ridge)", rfa_kernel_schema,
       rf_train_schema, rfa_kernel_make, false, false, true},
      {"brfa_kernel", "infinite-head limit of brfa (kernel ridge)", brfa_kernel_schema,
       rf_train_schema, brfa_kernel_make, false, false, true},
      {"rfmlp_kernel", "infinite-width limit of rfmlp (kernel ridge)", rfmlp_kernel_schema,
       rf_train_schema, rfmlp_kernel_make, false, false, true},
      {"attention", "Sanford et al.: one attention unit psi(sum_h softmax heads(phi(X))), trained by gradient",
       attention_schema, neural_train_schema, attention_make, true},
      {"third_order", "Sanford et al.: one unit of third-order (pair) attention heads, trained by gradient",
       third_order_schema, neural_train_schema, third_order_make, true},
      {"transformer", "L layers of multi-head attention + MLP with residuals, trained by gradient",
       transformer_schema, neural_train_schema, transformer_make, true},
      {"mlp", "fully connected net on the concatenated tokens, all outputs at once (gradient)",
       mlp_schema, neural_train_schema, mlp_make, true},
      {"lstm", "LSTM reading the sequence, outputs after the whole sequence (gradient)",
       lstm_schema, neural_train_schema, lstm_make, true},
      {"construction", "Sanford et al.: explicit attention weights from the proofs (no training)",
       construction_schema, construction_train_schema, construction_make_model, true, true},
  };
  return registry;
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
