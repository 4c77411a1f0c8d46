// Schemas of the neural models and the network factory (see neural_models.h).
#include <cmath>

#include "core/error.h"
#include "models/neural_models.h"
#include "nn/attention_net.h"
#include "nn/lstm_net.h"
#include "nn/mlp_net.h"
#include "nn/transformer_net.h"
#include "train/lr_schedule.h"
#include "train/optimizer.h"

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
      param_choice("temperature", choice_name(c.temperature, kTemperatures), choice_names(kTemperatures),
                   "score scale: learned exp(τ), fixed temperature_init, or 1/√dk"),
      param_real("temperature_init", c.temperature_init, "initial (or fixed) score scale", 1e-12,
                 1e12),
      param_bool("exclude_self", c.exclude_self,
                 "mask the query's own token (and, third order, j = k)"),
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
  c.activation = activation_parse(p.get_string("activation"));
  c.phi = choice_parse(p.get_string("phi"), kTokenMaps, "model.phi");
  c.phi_width = p.get_int("phi_width");
  c.psi = choice_parse(p.get_string("psi"), kTokenMaps, "model.psi");
  c.psi_width = p.get_int("psi_width");
  c.precision.bits = p.get_int("bits");  // the nets check it (quantize_check_bits)
  c.precision.scores = p.get_bool("bits_scores");
  c.precision.in_training = p.get_bool("bits_in_training");
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
      param_choice("phi", choice_name(c.phi, kTokenMaps), {"linear", "mlp"}, "token map φ into R^m"),
      param_int("phi_width", c.phi_width, "hidden width of φ when phi = \"mlp\"", 1, 1 << 20),
      param_choice("psi", choice_name(c.psi, kTokenMaps), {"linear", "mlp"}, "output map ψ from R^m"),
      param_int("psi_width", c.psi_width, "hidden width of ψ when psi = \"mlp\"", 1, 1 << 20),
      activation_param(),
      param_choice("temperature", choice_name(c.temperature, kTemperatures), choice_names(kTemperatures),
                   "score scale per layer: learned exp(τ), fixed temperature_init, or 1/√m"),
      param_real("temperature_init", c.temperature_init, "initial (or fixed) score scale", 1e-12,
                 1e12),
      param_bool("exclude_self", c.exclude_self, "mask each query's own token"),
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
  return {param_int("hidden", c.hidden, "hidden size per layer and direction", 1, 1 << 16),
          param_int("layers", c.layers, "stacked LSTM layers", 1, 64),
          param_bool("bidirectional", c.bidirectional, "also read the sequence backwards (a control)"),
          param_choice("readout", choice_name(c.readout, kLstmReadouts), choice_names(kLstmReadouts),
                       "output i from [final state; x_i] (spec §7 A13) or from position i's state"),
          param_int("head_width", c.head_width, "hidden width of the output head; 0 = linear head",
                    0, 1 << 20),
          activation_param()};
}

std::vector<ParamSpec> neural_train_schema() {
  return {
      param_int("steps", 2000, "optimiser steps (see epochs)", 1, 1e12),
      param_int("epochs", 0, "if > 0: steps = epochs · ceil(n_fit / batch) (fixed training sets)", 0, 1e9),
      param_int("batch", 256, "samples per step", 1, 1 << 24),
      param_choice("optimizer", choice_name(OptimizerConfig{}.kind, kOptimizerKinds),
                   choice_names(kOptimizerKinds), "optimiser (PyTorch's definitions)"),
      param_real("lr", 1e-3, "learning rate", 0, 1e6),
      param_real_list("lrs", {},
                      "train once per learning rate and keep the best on validation (empty: lr alone)",
                      0, 1e6),
      param_real("beta1", 0.9, "Adam β₁", 0, 1),
      param_real("beta2", 0.999, "Adam β₂", 0, 1),
      param_real("eps", 1e-8, "Adam ε", 0, 1),
      param_real("weight_decay", 0, "L2 penalty (adam, sgd) or decoupled decay (adamw)", 0, 1e6),
      param_real("momentum", 0, "SGD momentum", 0, 1),
      param_choice("schedule", choice_name(LrSchedule{}.kind, kLrScheduleKinds),
                   choice_names(kLrScheduleKinds), "learning-rate schedule"),
      param_int("warmup_steps", 0, "linear warm-up steps", 0, 1e12),
      param_real("min_lr_factor", 0, "cosine schedule's final lr / lr", 0, 1),
      param_real("clip_norm", 0, "cap on the global gradient norm (0: no clipping)", 0, 1e12),
      param_int("eval_every", 200, "steps between validation evaluations", 1, 1e12),
      param_int("patience", 0,
                "stopping rule: stop after this many evaluations in a row without an improvement "
                "of at least min_delta (0: off)",
                0, 1e12),
      // Added after results were stored: out of run ids at its default.
      param_id_omit_default(param_real(
          "min_delta", 0,
          "stopping rule: the validation-loss decrease an evaluation must reach to count as an "
          "improvement (needs patience)",
          0, 1e12)),
      param_bool("restore_best", true, "end with the parameters of the best validation loss"),
      param_real("val_fraction", 0.1, "fixed training sets (n > 0): the last fraction is held out", 0, 0.9),
      param_int("val_n", 1024, "fresh samples (n = 0): validation samples 0 .. val_n-1", 1, 1e9),
      param_choice("loss", "auto", {"auto", "mse", "bce"},
                   "training loss; auto = bce (with logits) when every target is 0 or 1, else mse"),
      param_choice("dtype", "float32", {"float32", "float64"}, "arithmetic of the network"),
      param_int("eval_batch", 1024, "samples per forward pass when evaluating", 1, 1 << 24),
  };
}

void neural_train_check(const Params& train) {
  if (train.has("n") && train.get_int("n") > 0 && train.get_real("val_fraction") == 0)
    throw UserError("train.val_fraction = 0 leaves a fixed training set (train.n > 0) no "
                    "validation samples, which gradient training needs (eval_every, restore_best, "
                    "lrs); set train.val_fraction > 0, e.g. 0.1");
  const double min_delta = train.get_real("min_delta");
  if (min_delta > 0 && train.get_int("patience") == 0)
    throw UserError("train.min_delta = " + param_value_text(ParamValue(min_delta)) +
                    " has no effect without train.patience (the number of evaluations in a row "
                    "without such an improvement after which training stops); set train.patience "
                    "or remove train.min_delta");
}

Params neural_default_params(const std::string& model) {
  if (model == "attention") return Params("model", attention_schema());
  if (model == "third_order") return Params("model", third_order_schema());
  if (model == "transformer") return Params("model", transformer_schema());
  if (model == "mlp") return Params("model", mlp_schema());
  if (model == "lstm") return Params("model", lstm_schema());
  throw UserError("not a neural model: '" + model + "'");
}

AttentionNetConfig neural_attention_config(const std::string& model, const Params& p,
                                           const TaskShape& shape) {
  AttentionNetConfig c;
  c.third_order = model == "third_order";
  c.name = model;
  fill_unit(c, p);
  c.qk_dim = p.get_int("qk_dim");
  c.value_dim = p.get_int("value_dim");
  c.residual = p.get_bool("residual");
  fill_shape(c, shape);
  return c;
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

template <class T>
std::unique_ptr<Net<T>> neural_net_make(const std::string& model, const Params& p,
                                        const TaskShape& shape) {
  if (model == "attention" || model == "third_order")
    return std::make_unique<AttentionNet<T>>(neural_attention_config(model, p, shape));
  if (model == "transformer")
    return std::make_unique<TransformerNet<T>>(neural_transformer_config(p, shape));
  if (model == "mlp") return std::make_unique<MlpNet<T>>(neural_mlp_config(p, shape));
  if (model == "lstm") return std::make_unique<LstmNet<T>>(neural_lstm_config(p, shape));
  throw UserError("not a neural model: '" + model + "'");
}

template std::unique_ptr<Net<float>> neural_net_make<float>(const std::string&, const Params&,
                                                            const TaskShape&);
template std::unique_ptr<Net<double>> neural_net_make<double>(const std::string&, const Params&,
                                                              const TaskShape&);

}  // namespace attn
