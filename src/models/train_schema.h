// The [train] and [eval] schemas of a run, next to the model registry: the keys every model
// has (train.n; eval.n, eval.first, eval.instances) and a model's whole [train] schema. The
// one place they are assembled, for specs (experiment/plan.h), run points sent to other
// processes, saved models (models/model_io.h), `attnlab list` and Python.
#pragma once

#include <vector>

#include "core/params.h"
#include "models/model_registry.h"

namespace attn {

// [train] keys every model has (n), and the [eval] keys.
std::vector<ParamSpec> train_common_schema();
std::vector<ParamSpec> eval_schema();

// A model's [train] schema: train_common_schema() followed by its own train_schema().
std::vector<ParamSpec> model_train_schema(const ModelInfo& model);

}  // namespace attn
