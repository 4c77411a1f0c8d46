// The gradient-trained models, one row each of one table (models/neural_kinds.cpp): a model's
// name and one-line description, its [model] schema, its network factory (the config reader
// Params + TaskShape -> net config, built into the network, in float and in double), the
// factory the model registry calls, and the settings of its gradient-check rows.
//
// Everything that lists these models loops the table: the registry's rows
// (models/model_registry.cpp), neural_net_make and neural_default_params
// (models/neural_schemas.cpp), the gradient-check rows (models/gradcheck_rows_models.cpp).
// Adding a model is one enum value and one row; NeuralKind::kCount and a static_assert keep
// the two in step, a row that leaves out a field does not compile, a null factory or an empty
// gradient-check list aborts at the table's first use, and tests/test_neural_kinds.cpp checks
// that every row is complete (schema, both factories, the registry's factory, gradient-check
// rows in the table, a case of the PyTorch forward test).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/params.h"
#include "model_api/model.h"
#include "nn/net.h"

namespace attn {

// In the order `attnlab list` shows them. kCount: the number of kinds (not a kind).
enum class NeuralKind { attention, third_order, transformer, mlp, lstm, gpt2, kCount };

inline constexpr int kNeuralKindCount = static_cast<int>(NeuralKind::kCount);

// One gradient-check row of a model: the parameters of a small network (B = 2 sequences of
// T = 4 tokens, d_in = 3, d_out = 2 unless set) at the schema defaults with `set` applied.
struct NeuralGradcheckSpec {
  std::string suffix;  // the row is "model/<name>" ("" here) or "model/<name>/<suffix>"
  std::vector<std::pair<std::string, std::string>> set;  // [model] key = value (text)
  int64_t T_out = 4;
  int64_t d_out = 2;  // 3 = d_in: a head tied to the input embedding (gpt2)
  // > 0: x is one-hot (one non-zero of this many columns a token: the sparse input paths),
  // else 3 columns uniform in [−1, 1].
  int64_t one_hot_d_in = 0;
};

template <class T>
using NeuralNetMake = std::unique_ptr<Net<T>> (*)(const Params& model, const TaskShape& shape);

// A model's network factory in both scalar types: the network for resolved [model] params and
// the task's shapes (its config reader's config built into the net); UserError for impossible
// settings (the net's own checks).
struct NeuralNets {
  NeuralNetMake<float> make_float;
  NeuralNetMake<double> make_double;
};

struct NeuralKindInfo {
  NeuralKind kind;
  const char* name;         // [model] name = "..."
  const char* description;  // one line, for `attnlab list`
  std::vector<ParamSpec> (*schema)();  // [model] keys
  // The registry's factory: a NeuralModel (models/neural_model.cpp) of this kind.
  std::unique_ptr<Model> (*make)(const ModelContext& context);
  NeuralNets nets;
  std::vector<NeuralGradcheckSpec> gradcheck;  // at least one row
};

// Every row, in NeuralKind order (row k has kind k).
const std::vector<NeuralKindInfo>& neural_kinds();
const NeuralKindInfo& neural_kind_info(NeuralKind kind);
// The row called `name`, or null.
const NeuralKindInfo* neural_kind_find(const std::string& name);
// The row called `name`; UserError "not a neural model" if there is none.
const NeuralKindInfo& neural_kind_get(const std::string& name);

// A NeuralModel of this kind (models/neural_model.cpp): what every row's `make` calls.
std::unique_ptr<Model> neural_model_make(NeuralKind kind, const ModelContext& context);

}  // namespace attn
