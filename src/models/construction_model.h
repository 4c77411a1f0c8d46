// The `construction` model: explicit attention weights from the paper's proofs
// (constructions/construction.h), with no training. [model] keys: construction (the recipe),
// bits / bits_scores (the precision model, ops/quantize.h), epsilon, beta, beta_factor
// (temperature rule), m_prime, code_dist, query_code (position codes), window (local_match3),
// bits_search (evaluate() finds the fewest bits that still succeed).
#pragma once

#include <memory>
#include <vector>

#include "core/params.h"
#include "models/model_registry.h"

namespace attn {

std::vector<ParamSpec> construction_schema();
std::vector<ParamSpec> construction_train_schema();
std::unique_ptr<Model> construction_make_model(const ModelContext& context);

}  // namespace attn
