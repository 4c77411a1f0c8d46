// The model registry: every model attnlab can build (one ModelInfo each: its [model] and
// [train] schemas and how to make it; models/model_registry.cpp). The interface a model
// implements, and ModelInfo itself, are model_api/model.h.
#pragma once

#include <string>
#include <vector>

#include "model_api/model.h"

namespace attn {

// Every model, in the order `attnlab list` shows them.
const std::vector<ModelInfo>& model_registry();
// The model called `name`; UserError with a did-you-mean if there is none.
const ModelInfo& model_find(const std::string& name);

}  // namespace attn
