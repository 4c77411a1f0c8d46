// The table of gradient-trained models (see neural_kinds.h): one row per NeuralKind.
#include "models/neural_kinds.h"

#include <type_traits>

#include "core/error.h"
#include "models/neural_models.h"
#include "nn/attention_net.h"
#include "nn/gpt2_net.h"
#include "nn/lstm_net.h"
#include "nn/mlp_net.h"
#include "nn/transformer_net.h"

// A row that leaves out a field (every NeuralKindInfo field is without a default) does not
// compile.
#pragma GCC diagnostic error "-Wmissing-field-initializers"

namespace attn {
namespace {

// The network N<T> built from the config that `config_read` makes of Params and the shapes.
template <class T, template <class> class N, auto config_read>
std::unique_ptr<Net<T>> net_from(const Params& model, const TaskShape& shape) {
  return std::make_unique<N<T>>(config_read(model, shape));
}

// A row's network factory: network N from the config reader `config_read`, float and double.
template <template <class> class N, auto config_read>
NeuralNets nets_of() {
  return {net_from<float, N, config_read>, net_from<double, N, config_read>};
}

// A row's `make` (ModelInfo::make is a plain function pointer, one per model).
template <NeuralKind K>
std::unique_ptr<Model> neural_make(const ModelContext& context) {
  return neural_model_make(K, context);
}

std::vector<NeuralKindInfo> rows_make() {
  // Gradient-check settings: small networks in which every path carries a gradient; the
  // rows' names ("model/<name>[/<suffix>]") are what `attnlab gradcheck --filter` matches.
  NeuralKindInfo rows[] = {
      {.kind = NeuralKind::attention,
       .name = "attention",
       .description = "Sanford et al.: one attention unit psi(sum_h softmax heads(phi(X))), "
                      "trained by gradient",
       .schema = attention_schema,
       .make = neural_make<NeuralKind::attention>,
       .nets = nets_of<AttentionNet, neural_attention_config>(),
       .gradcheck =
           {{"",
             {{"m", "3"},
              {"heads", "2"},
              {"phi_width", "5"},
              {"psi", "mlp"},
              {"psi_width", "4"},
              {"activation", "gelu"}}},
            {"relu", {{"m", "3"}, {"phi_width", "5"}}},
            {"identity_psi",
             {{"m", "3"},
              {"phi", "linear"},
              {"psi", "identity"},
              {"residual", "false"},
              {"temperature", "fixed"},
              {"exclude_self", "true"}}},
            {"token0",
             {{"m", "3"}, {"heads", "2"}, {"qk_dim", "2"}, {"value_dim", "3"}, {"phi", "linear"}},
             1},
            {"causal", {{"m", "3"}, {"heads", "2"}, {"phi", "linear"}, {"causal", "true"}}},
            {"learned_positions",
             {{"m", "3"}, {"phi", "linear"}, {"positions", "learned"}, {"causal", "true"}}}}},
      {.kind = NeuralKind::third_order,
       .name = "third_order",
       .description =
           "Sanford et al.: one unit of third-order (pair) attention heads, trained by gradient",
       .schema = third_order_schema,
       .make = neural_make<NeuralKind::third_order>,
       .nets = nets_of<AttentionNet, neural_third_order_config>(),
       .gradcheck = {{"", {{"m", "3"}, {"heads", "2"}, {"phi_width", "5"}, {"activation", "tanh"}}},
                     {"exclude_self", {{"m", "3"}, {"phi", "linear"}, {"exclude_self", "true"}}},
                     {"causal",
                      {{"m", "3"}, {"heads", "2"}, {"phi", "linear"}, {"causal", "true"}}},
                     {"learned_positions",
                      {{"m", "3"}, {"phi", "linear"}, {"positions", "learned"}}}}},
      {.kind = NeuralKind::transformer,
       .name = "transformer",
       .description = "L layers of multi-head attention + MLP with residuals, trained by gradient",
       .schema = transformer_schema,
       .make = neural_make<NeuralKind::transformer>,
       .nets = nets_of<TransformerNet, neural_transformer_config>(),
       .gradcheck =
           {{"",
             {{"layers", "2"},
              {"m", "4"},
              {"heads", "2"},
              {"mlp_width", "5"},
              {"activation", "gelu"}}},
            {"no_layernorm",
             {{"layers", "1"},
              {"m", "3"},
              {"layernorm", "false"},
              {"phi", "mlp"},
              {"phi_width", "4"},
              {"psi", "mlp"},
              {"psi_width", "4"},
              {"activation", "tanh"},
              {"temperature", "inv_sqrt_dk"}}},
            {"causal",
             {{"layers", "2"}, {"m", "4"}, {"heads", "2"}, {"mlp_width", "5"}, {"causal", "true"}}},
            {"learned_positions",
             {{"layers", "2"},
              {"m", "4"},
              {"mlp_width", "5"},
              {"causal", "true"},
              {"positions", "learned"}}},
            {"random_resampled_positions",
             {{"layers", "1"},
              {"m", "4"},
              {"mlp_width", "5"},
              {"positions", "random_resampled"}}}}},
      {.kind = NeuralKind::mlp,
       .name = "mlp",
       .description =
           "fully connected net on the concatenated tokens, all outputs at once (gradient)",
       .schema = mlp_schema,
       .make = neural_make<NeuralKind::mlp>,
       .nets = nets_of<MlpNet, neural_mlp_config>(),
       .gradcheck = {{"", {{"hidden", "[6, 5]"}, {"activation", "tanh"}}},
                     {"relu", {{"hidden", "[7]"}}}}},
      {.kind = NeuralKind::lstm,
       .name = "lstm",
       .description = "LSTM reading the sequence, outputs after the whole sequence (gradient)",
       .schema = lstm_schema,
       .make = neural_make<NeuralKind::lstm>,
       .nets = nets_of<LstmNet, neural_lstm_config>(),
       .gradcheck = {{"", {{"hidden", "3"}}},
                     {"three_layers", {{"hidden", "3"}, {"layers", "3"}}},
                     {"bidirectional",
                      {{"hidden", "3"},
                       {"layers", "2"},
                       {"bidirectional", "true"},
                       {"head_width", "4"},
                       {"activation", "tanh"}}},
                     {"relu_head", {{"hidden", "3"}, {"head_width", "4"}}},
                     // One-hot tokens, 9 wide: the first layer's and the head's products on
                     // x's non-zeros (one list for both, nn/lstm_net.cpp).
                     {"one_hot", {{"hidden", "3"}, {"head_width", "4"}}, 4, 2, 9},
                     // Both directions' states into the fused relu head (ops/sparse_relu_head.h).
                     {"one_hot_bidirectional",
                      {{"hidden", "3"}, {"bidirectional", "true"}, {"head_width", "4"}}, 4, 2, 9},
                     {"per_position",
                      {{"hidden", "3"}, {"bidirectional", "true"}, {"readout", "per_position"}}}}},
      {.kind = NeuralKind::gpt2,
       .name = "gpt2",
       .description = "GPT-2's layout: wte/wpe, pre-LN blocks of fused-qkv attention (width m/H, "
                      "projection) and tanh-GELU MLP, ln_f, causal; imports GPT-2 checkpoints",
       .schema = gpt2_schema,
       .make = neural_make<NeuralKind::gpt2>,
       .nets = nets_of<Gpt2Net, neural_gpt2_config>(),
       .gradcheck =
           {{"", {{"layers", "2"}, {"m", "4"}, {"heads", "2"}}},
            {"tied", {{"layers", "1"}, {"m", "4"}, {"heads", "2"}, {"head", "tied"}}, 4, 3},
            {"token0", {{"layers", "1"}, {"m", "6"}, {"heads", "3"}, {"causal", "false"}}, 1},
            {"sinusoidal", {{"layers", "1"}, {"m", "4"}, {"positions", "sinusoidal"}}}}},
  };
  static_assert(std::extent_v<decltype(rows)> == kNeuralKindCount,
                "one row of the gradient-trained models' table per NeuralKind");
  std::vector<NeuralKindInfo> table;
  for (auto& row : rows) {
    ATTN_ASSERT(static_cast<int>(row.kind) == static_cast<int>(table.size()),
                "the rows of neural_kinds() must be in NeuralKind order");
    ATTN_ASSERT(row.name && row.description && row.schema && row.make && row.nets.make_float &&
                    row.nets.make_double && !row.gradcheck.empty(),
                std::string("neural_kinds(): row ") + (row.name ? row.name : "?") +
                    " lacks a schema, a factory or gradient-check rows");
    table.push_back(std::move(row));
  }
  return table;
}

}  // namespace

const std::vector<NeuralKindInfo>& neural_kinds() {
  static const std::vector<NeuralKindInfo> table = rows_make();
  return table;
}

const NeuralKindInfo& neural_kind_info(NeuralKind kind) {
  const int k = static_cast<int>(kind);
  ATTN_ASSERT(k >= 0 && k < kNeuralKindCount, "not a NeuralKind: " + std::to_string(k));
  return neural_kinds()[static_cast<size_t>(k)];
}

const NeuralKindInfo* neural_kind_find(const std::string& name) {
  for (const NeuralKindInfo& row : neural_kinds())
    if (name == row.name) return &row;
  return nullptr;
}

const NeuralKindInfo& neural_kind_get(const std::string& name) {
  if (const NeuralKindInfo* row = neural_kind_find(name)) return *row;
  throw UserError("not a neural model: '" + name + "'");
}

}  // namespace attn
