// Model registry: one row per model, in the order `attnlab list` shows them.
#include <string>
#include <vector>

#include "core/error.h"
#include "core/suggest.h"
#include "models/baselines.h"
#include "models/model.h"

namespace attn {

const std::vector<ModelInfo>& model_registry() {
  static const std::vector<ModelInfo> registry = {
      {"mean", "baseline: the training mean of every output coordinate", mean_schema,
       mean_train_schema, mean_make},
      {"linear", "baseline: ridge regression on the flattened sequence, with intercept",
       linear_schema, linear_train_schema, linear_make},
  };
  return registry;
}

const ModelInfo& model_find(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& info : model_registry()) {
    if (info.name == name) return info;
    names.push_back(info.name);
  }
  std::string known;
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  throw UserError("unknown model '" + name + "'" + did_you_mean(name, names) +
                  "; models: " + known + " (see `attnlab list`)");
}

}  // namespace attn
