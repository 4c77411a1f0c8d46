// The [model] schemas and config readers of the gradient-trained models, and the network
// factory over their table (see neural_models.h, neural_kinds.h).
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>

#include "core/error.h"
#include "models/neural_models.h"
#include "nn/attention_net.h"
#include "nn/gpt2_net.h"
#include "nn/lstm_net.h"
#include "nn/mlp_net.h"
#include "nn/transformer_net.h"

namespace attn {
namespace {

// Defaults are the net configs' initialisers (AttentionNetConfig, TransformerNetConfig,
// MlpNetConfig, LstmNetConfig; third_order's m = 4 is its own): one source, checked by
// tests/test_param_defaults.cpp.
ParamSpec activation_param() {
  return param_choice("activation", activation_name(AttentionNetConfig{}.activation),
                      activation_names(),
                      "activation of the MLPs inside the model (φ, ψ, hidden layers)");
}

// model.bits, model.bits_scores, model.bits_in_training (nn/head_precision.h,
// docs/precision.md), shared by attention, third_order and transformer.
void precision_schema_add(std::vector<ParamSpec>& schema) {
  const HeadPrecision precision;
  schema.push_back(param_int("bits", precision.bits,
                             "precision p: round queries, keys and values to p-bit fixed point "
                             "(sign + p−1 bits, one scale per sequence and head); 0 = exact",
                             0, 53));
  schema.push_back(param_bool("bits_scores", precision.scores,
                              "with bits > 0, also round the attention scores (pre-softmax)"));
  schema.push_back(param_bool("bits_in_training", precision.in_training,
                              "with bits > 0, also round in training (straight-through gradient); "
                              "else only evaluation forwards round"));
}

// The keys precision_schema_add declares.
HeadPrecision precision_read(const Params& p) {
  HeadPrecision precision;
  precision.bits = p.get_int("bits");  // the nets check it (quantize_check_bits)
  precision.scores = p.get_bool("bits_scores");
  precision.in_training = p.get_bool("bits_in_training");
  return precision;
}

// model.causal: added after results were stored, so out of run ids at its default
// (ParamSpec::id_omit_default).
ParamSpec causal_param(bool def, std::string help) {
  return param_id_omit_default(param_bool("causal", def, std::move(help)));
}

// model.positions (nn/positions.h): added after results were stored, out of run ids at "none".
ParamSpec positions_param(Positions def) {
  return param_id_omit_default(param_choice(
      "positions", choice_name(def, kPositions), choice_names(kPositions),
      "position codes added to the token embedding: none, learned (N x m table, GPT-2), "
      "sinusoidal (Vaswani et al.), random (fixed per run) or random_resampled (per sequence)"));
}

std::vector<ParamSpec> unit_schema(int64_t m_default, const std::string& what) {
  const AttentionNetConfig c;
  std::vector<ParamSpec> schema = {
      param_int("m", m_default, "embedding dimension m: φ maps each token to R^m", 1, 1 << 16),
      param_int("heads", c.heads, "heads H (" + what + "), outputs summed", 1, 1024),
      param_int("qk_dim", c.qk_dim, "query/key dimension per head; 0 = m (Q, K ∈ R^{m×m})", 0,
                1 << 16),
      param_int("value_dim", c.value_dim,
                "value dimension per head; 0 = the task's output dimension", 0, 1 << 16),
      param_choice("phi", choice_name(c.phi, kTokenMaps), {"linear", "mlp"},
                   "token map φ: linear, or a 2-layer MLP"),
      param_int("phi_width", c.phi_width, "hidden width of φ when phi = \"mlp\"", 1, 1 << 20),
      param_choice("psi", choice_name(c.psi, kTokenMaps), choice_names(kTokenMaps),
                   "output map ψ (identity needs residual = false)"),
      param_int("psi_width", c.psi_width, "hidden width of ψ when psi = \"mlp\"", 1, 1 << 20),
      param_bool("residual", c.residual, "ψ sees [φ(x_i); attention output] (spec §7 A1)"),
      activation_param(),
      param_choice("temperature", choice_name(c.temperature, kTemperatures),
                   choice_names(kTemperatures),
                   "score scale: learned exp(τ), fixed temperature_init, or 1/√dk"),
      param_real("temperature_init", c.temperature_init, "initial (or fixed) score scale", 1e-12,
                 1e12),
      param_bool("exclude_self", c.exclude_self,
                 "mask the query's own token (and, third order, j = k)"),
      causal_param(c.causal, what == "third-order"
                                 ? "causal mask: query i attends to pairs (j, k) with j, k <= i"
                                 : "causal mask: query i attends to tokens j <= i only"),
      positions_param(c.positions),
  };
  precision_schema_add(schema);
  return schema;
}

template <class T>
void fill_unit(T& c, const Params& p) {
  c.m = p.get_int("m");
  c.heads = p.get_int("heads");
  c.temperature = choice_parse(p.get_string("temperature"), kTemperatures, "model.temperature");
  c.temperature_init = p.get_real("temperature_init");
  c.exclude_self = p.get_bool("exclude_self");
  c.causal = p.get_bool("causal");
  c.positions = choice_parse(p.get_string("positions"), kPositions, "model.positions");
  c.activation = activation_parse(p.get_string("activation"));
  c.phi = choice_parse(p.get_string("phi"), kTokenMaps, "model.phi");
  c.phi_width = p.get_int("phi_width");
  c.psi = choice_parse(p.get_string("psi"), kTokenMaps, "model.psi");
  c.psi_width = p.get_int("psi_width");
  c.precision = precision_read(p);
}

template <class C>
void fill_shape(C& c, const TaskShape& s) {
  c.T = s.T;
  c.d_in = s.d_in;
  c.T_out = s.T_out;
  c.d_out = s.d_out;
}

}  // namespace

std::vector<ParamSpec> attention_schema() { return unit_schema(AttentionNetConfig{}.m, "softmax"); }
std::vector<ParamSpec> third_order_schema() { return unit_schema(4, "third-order"); }

std::vector<ParamSpec> transformer_schema() {
  const TransformerNetConfig c;
  std::vector<ParamSpec> schema = {
      param_int("layers", c.layers, "attention + MLP blocks", 1, 256),
      param_int("m", c.m, "embedding (residual stream) dimension", 1, 1 << 16),
      param_int("heads", c.heads, "softmax heads per layer (value dim m, summed)", 1, 1024),
      param_int("mlp_width", c.mlp_width, "hidden width of each block's MLP; 0 = 4m", 0, 1 << 20),
      param_bool("layernorm", c.layernorm, "pre-layernorm before attention and MLP"),
      param_choice("phi", choice_name(c.phi, kTokenMaps), {"linear", "mlp"},
                   "token map φ into R^m"),
      param_int("phi_width", c.phi_width, "hidden width of φ when phi = \"mlp\"", 1, 1 << 20),
      param_choice("psi", choice_name(c.psi, kTokenMaps), {"linear", "mlp"},
                   "output map ψ from R^m"),
      param_int("psi_width", c.psi_width, "hidden width of ψ when psi = \"mlp\"", 1, 1 << 20),
      activation_param(),
      param_choice("temperature", choice_name(c.temperature, kTemperatures),
                   choice_names(kTemperatures),
                   "score scale per layer: learned exp(τ), fixed temperature_init, or 1/√m"),
      param_real("temperature_init", c.temperature_init, "initial (or fixed) score scale", 1e-12,
                 1e12),
      param_bool("exclude_self", c.exclude_self, "mask each query's own token"),
      causal_param(c.causal, "causal mask in every layer: query i attends to tokens j <= i only"),
      positions_param(c.positions),
  };
  precision_schema_add(schema);
  return schema;
}

std::vector<ParamSpec> gpt2_schema() {
  const Gpt2NetConfig c;
  std::vector<ParamSpec> schema = {
      param_int("layers", c.layers, "blocks (GPT-2's n_layer)", 1, 256),
      param_int("m", c.m, "embedding (residual stream) dimension (n_embd), a multiple of heads", 1,
                1 << 16),
      param_int("heads", c.heads, "heads per layer (n_head), each of width m/heads", 1, 1024),
      param_bool("causal", c.causal, "causal mask in every layer (GPT-2); false: bidirectional"),
      param_choice("positions", choice_name(c.positions, kPositions), choice_names(kPositions),
                   "position codes added to x·wte: learned (wpe, GPT-2), none, sinusoidal, "
                   "random or random_resampled"),
      param_choice("head", choice_name(c.head, kGpt2Heads), choice_names(kGpt2Heads),
                   "output matrix: tied (wte, GPT-2's lm_head; needs d_out = d_in), separate "
                   "(lm_head.weight (d_out, m)), or auto (tied when d_out = d_in)"),
  };
  precision_schema_add(schema);
  return schema;
}

std::vector<ParamSpec> mlp_schema() {
  const MlpNetConfig c;  // hidden {256, 256}: width 256, depth 3
  return {param_int("width", c.hidden.front(), "hidden width (the size measure of spec §1.5)", 1,
                    1 << 24),
          param_int("depth", static_cast<int64_t>(c.hidden.size()) + 1,
                    "linear layers (depth − 1 hidden layers of `width`)", 2, 64),
          param_real_list("hidden", {},
                          "explicit hidden widths, overriding width and depth (empty: unused)", 1,
                          1 << 24),
          activation_param()};
}

std::vector<ParamSpec> lstm_schema() {
  const LstmNetConfig c;
  return {
      param_int("hidden", c.hidden, "hidden size per layer and direction", 1, 1 << 16),
      param_int("layers", c.layers, "stacked LSTM layers", 1, 64),
      param_bool("bidirectional", c.bidirectional, "also read the sequence backwards (a control)"),
      param_choice("readout", choice_name(c.readout, kLstmReadouts), choice_names(kLstmReadouts),
                   "output i from [final state; x_i] (spec §7 A13) or from position i's state"),
      param_int("head_width", c.head_width, "hidden width of the output head; 0 = linear head", 0,
                1 << 20),
      activation_param()};
}

Params neural_default_params(const std::string& model) {
  return Params("model", neural_kind_get(model).schema());
}

namespace {

AttentionNetConfig attention_config(NeuralKind kind, const Params& p, const TaskShape& shape) {
  AttentionNetConfig c;
  c.third_order = kind == NeuralKind::third_order;
  c.name = neural_kind_info(kind).name;
  fill_unit(c, p);
  c.qk_dim = p.get_int("qk_dim");
  c.value_dim = p.get_int("value_dim");
  c.residual = p.get_bool("residual");
  fill_shape(c, shape);
  return c;
}

}  // namespace

AttentionNetConfig neural_attention_config(const Params& p, const TaskShape& shape) {
  return attention_config(NeuralKind::attention, p, shape);
}

AttentionNetConfig neural_third_order_config(const Params& p, const TaskShape& shape) {
  return attention_config(NeuralKind::third_order, p, shape);
}

TransformerNetConfig neural_transformer_config(const Params& p, const TaskShape& shape) {
  TransformerNetConfig c;
  fill_unit(c, p);
  c.layers = p.get_int("layers");
  c.mlp_width = p.get_int("mlp_width");
  c.layernorm = p.get_bool("layernorm");
  fill_shape(c, shape);
  return c;
}

MlpNetConfig neural_mlp_config(const Params& p, const TaskShape& shape) {
  MlpNetConfig c;
  c.hidden.assign(static_cast<size_t>(p.get_int("depth") - 1), p.get_int("width"));
  if (!p.get_real_list("hidden").empty()) c.hidden.clear();
  for (double w : p.get_real_list("hidden")) {
    ATTN_CHECK(w == std::floor(w), "model.hidden: widths must be whole numbers");
    c.hidden.push_back(static_cast<int64_t>(w));
  }
  c.activation = activation_parse(p.get_string("activation"));
  fill_shape(c, shape);
  return c;
}

LstmNetConfig neural_lstm_config(const Params& p, const TaskShape& shape) {
  LstmNetConfig c;
  c.hidden = p.get_int("hidden");
  c.layers = p.get_int("layers");
  c.bidirectional = p.get_bool("bidirectional");
  c.readout = choice_parse(p.get_string("readout"), kLstmReadouts, "model.readout");
  c.head_width = p.get_int("head_width");
  c.activation = activation_parse(p.get_string("activation"));
  fill_shape(c, shape);
  return c;
}

Gpt2NetConfig neural_gpt2_config(const Params& p, const TaskShape& shape) {
  Gpt2NetConfig c{
      .layers = p.get_int("layers"),
      .m = p.get_int("m"),
      .heads = p.get_int("heads"),
      .causal = p.get_bool("causal"),
      .positions = choice_parse(p.get_string("positions"), kPositions, "model.positions"),
      .head = choice_parse(p.get_string("head"), kGpt2Heads, "model.head"),
      .precision = precision_read(p),
  };
  fill_shape(c, shape);
  return c;
}

template <class T>
std::unique_ptr<Net<T>> neural_net_make(const std::string& model, const Params& p,
                                        const TaskShape& shape) {
  const NeuralKindInfo& row = neural_kind_get(model);
  if constexpr (std::is_same_v<T, float>) {
    return row.nets.make_float(p, shape);
  } else {
    static_assert(std::is_same_v<T, double>, "networks are float or double");
    return row.nets.make_double(p, shape);
  }
}

template std::unique_ptr<Net<float>> neural_net_make<float>(const std::string&, const Params&,
                                                            const TaskShape&);
template std::unique_ptr<Net<double>> neural_net_make<double>(const std::string&, const Params&,
                                                              const TaskShape&);

}  // namespace attn
