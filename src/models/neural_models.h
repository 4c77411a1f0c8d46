// The gradient-trained models of Sanford et al. (2023): `attention` (one attention unit,
// H softmax heads), `third_order` (third-order attention heads), `transformer` (L layers),
// `mlp` and `lstm` (the comparators); `gpt2`, the transformer in GPT-2's layout. Their [model]
// schemas and config readers; the table that lists them (and makes them, neural_model_make) is
// models/neural_kinds.h, the shared [train] schema of the gradient loop
// models/neural_train_config.h.
//
// Networks run in float32 (train.dtype = "float64" for double); nets are built by
// neural_net_make from resolved parameters and the task's shapes. The attention models
// take the finite-precision keys bits, bits_scores, bits_in_training (docs/precision.md).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/params.h"
#include "models/model_registry.h"
#include "models/neural_kinds.h"
#include "models/neural_train_config.h"
#include "nn/net.h"

namespace attn {

struct AttentionNetConfig;
struct TransformerNetConfig;
struct MlpNetConfig;
struct LstmNetConfig;
struct Gpt2NetConfig;

std::vector<ParamSpec> attention_schema();
std::vector<ParamSpec> third_order_schema();
std::vector<ParamSpec> transformer_schema();
std::vector<ParamSpec> mlp_schema();
std::vector<ParamSpec> lstm_schema();
std::vector<ParamSpec> gpt2_schema();

// The network of model `model` (a row of neural_kinds()) for these [model] parameters and
// task shapes; UserError for impossible settings or a name that is not a neural model.
template <class T>
std::unique_ptr<Net<T>> neural_net_make(const std::string& model, const Params& params,
                                        const TaskShape& shape);

// The net configs neural_net_make builds from [model] parameters and task shapes (the
// schema defaults give the configs' own defaults: tests/test_param_defaults.cpp).
AttentionNetConfig neural_attention_config(const Params& params, const TaskShape& shape);
AttentionNetConfig neural_third_order_config(const Params& params, const TaskShape& shape);
TransformerNetConfig neural_transformer_config(const Params& params, const TaskShape& shape);
MlpNetConfig neural_mlp_config(const Params& params, const TaskShape& shape);
LstmNetConfig neural_lstm_config(const Params& params, const TaskShape& shape);
Gpt2NetConfig neural_gpt2_config(const Params& params, const TaskShape& shape);

// [model] parameters of `model` at their defaults (for tests and gradient-check rows).
Params neural_default_params(const std::string& model);

}  // namespace attn
