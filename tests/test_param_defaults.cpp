// Defaults are written once: for every model of the registry, the config struct its factory
// builds from default Params equals the struct's own defaults (whose initialisers the schema
// rows take), and the ridge options from the default [train] params equal RidgeOptions{}.
// A model without a config struct (it reads its Params directly) is listed as such, so a new
// model must be added here.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <tuple>

#include "models/model_registry.h"
#include "models/neural_models.h"
#include "models/rf_models.h"
#include "models/train_schema.h"
#include "nn/attention_net.h"
#include "nn/gpt2_net.h"
#include "nn/lstm_net.h"
#include "nn/mlp_net.h"
#include "nn/transformer_net.h"
#include "train/ridge.h"
#include "train/trainer.h"

namespace attn {
namespace {

constexpr int64_t kD = 8;  // token dimension of the shape the configs are built for

Params model_defaults(const std::string& model) {
  return Params("model", model_find(model).schema());
}

TaskShape token_shape() {
  TaskShape s;
  s.T = 1;
  s.d_in = kD;
  s.T_out = 1;
  s.d_out = 1;
  return s;
}

void expect_rfa(const RfaConfig& got, const RfaConfig& want) {
  EXPECT_EQ(got.heads, want.heads);
  EXPECT_EQ(got.activation, want.activation);
  EXPECT_EQ(got.augment, want.augment);
  EXPECT_EQ(got.w_var, want.w_var);
  EXPECT_EQ(got.w_mean, want.w_mean);
  EXPECT_EQ(got.block, want.block);
}

void expect_rfa_kernel(const RfaKernelConfig& got, const RfaKernelConfig& want) {
  EXPECT_EQ(got.activation, want.activation);
  EXPECT_EQ(got.augment, want.augment);
  EXPECT_EQ(got.w_var, want.w_var);
  EXPECT_EQ(got.w_mean, want.w_mean);
  EXPECT_EQ(got.quadrature_nodes, want.quadrature_nodes);
  EXPECT_EQ(got.mean_method, want.mean_method);
}

template <class C>
void expect_unit(const C& got, const C& want) {
  EXPECT_EQ(got.m, want.m);
  EXPECT_EQ(got.heads, want.heads);
  EXPECT_EQ(got.phi, want.phi);
  EXPECT_EQ(got.phi_width, want.phi_width);
  EXPECT_EQ(got.psi, want.psi);
  EXPECT_EQ(got.psi_width, want.psi_width);
  EXPECT_EQ(got.activation, want.activation);
  EXPECT_EQ(got.temperature, want.temperature);
  EXPECT_EQ(got.temperature_init, want.temperature_init);
  EXPECT_EQ(got.exclude_self, want.exclude_self);
  EXPECT_EQ(got.precision.bits, want.precision.bits);
  EXPECT_EQ(got.precision.scores, want.precision.scores);
  EXPECT_EQ(got.precision.in_training, want.precision.in_training);
}

void expect_attention(const std::string& model, int64_t m) {
  const TaskShape shape = token_shape();
  const AttentionNetConfig got = model == "third_order"
                                     ? neural_third_order_config(model_defaults(model), shape)
                                     : neural_attention_config(model_defaults(model), shape);
  AttentionNetConfig want;
  want.m = m;
  want.third_order = model == "third_order";
  EXPECT_EQ(got.third_order, want.third_order);
  EXPECT_EQ(got.name, model);
  expect_unit(got, want);
  EXPECT_EQ(got.qk_dim, want.qk_dim);
  EXPECT_EQ(got.value_dim, want.value_dim);
  EXPECT_EQ(got.residual, want.residual);
}

void expect_ridge_defaults(const std::string& model) {
  SCOPED_TRACE(model);
  const RidgeOptions got = ridge_options(Params("train", model_train_schema(model_find(model))));
  const RidgeOptions want;
  EXPECT_EQ(got.lambdas, want.lambdas);
  EXPECT_EQ(got.val_fraction, want.val_fraction);
  EXPECT_EQ(got.solver, want.solver);
  EXPECT_EQ(got.refit, want.refit);
  EXPECT_EQ(got.dual_features, want.dual_features);
  EXPECT_EQ(got.distributed, want.distributed);
}

void expect_trainer(const TrainerConfig& got, const TrainerConfig& want) {
  EXPECT_EQ(got.optimizer.kind, want.optimizer.kind);
  EXPECT_EQ(got.optimizer.beta1, want.optimizer.beta1);
  EXPECT_EQ(got.optimizer.beta2, want.optimizer.beta2);
  EXPECT_EQ(got.optimizer.eps, want.optimizer.eps);
  EXPECT_EQ(got.optimizer.weight_decay, want.optimizer.weight_decay);
  EXPECT_EQ(got.optimizer.momentum, want.optimizer.momentum);
  EXPECT_EQ(got.schedule.kind, want.schedule.kind);
  EXPECT_EQ(got.schedule.warmup, want.schedule.warmup);
  EXPECT_EQ(got.schedule.min_factor, want.schedule.min_factor);
  EXPECT_EQ(got.lr, want.lr);
  EXPECT_EQ(got.steps, want.steps);
  EXPECT_EQ(got.batch, want.batch);
  EXPECT_EQ(got.clip_norm, want.clip_norm);
  EXPECT_EQ(got.eval_every, want.eval_every);
  EXPECT_EQ(got.patience, want.patience);
  EXPECT_EQ(got.min_delta, want.min_delta);
  EXPECT_EQ(got.restore_best, want.restore_best);
  EXPECT_EQ(got.loss, want.loss);
  EXPECT_EQ(got.eval_batch, want.eval_batch);
}

TEST(ParamDefaults, TrainerConfigFromDefaultParamsEqualsTheStructDefaults) {
  for (const NeuralKindInfo& kind : neural_kinds()) {
    SCOPED_TRACE(kind.name);
    const Params train("train", model_train_schema(model_find(kind.name)));
    expect_trainer(trainer_config_from_params(train), TrainerConfig{});
    EXPECT_EQ(net_dtype_from_params(train), NetDtype::float32);
  }
}

// The reader reads every key: each set to a value other than its default comes back.
TEST(ParamDefaults, TrainerConfigReaderReadsEveryKey) {
  Params train("train", neural_train_schema());
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{
           {"optimizer", "sgd"}, {"beta1", "0.8"}, {"beta2", "0.99"}, {"eps", "1e-6"},
           {"weight_decay", "0.01"}, {"momentum", "0.5"}, {"schedule", "cosine"},
           {"warmup_steps", "7"}, {"min_lr_factor", "0.25"}, {"lr", "0.03"}, {"steps", "11"},
           {"batch", "13"}, {"clip_norm", "2"}, {"eval_every", "17"}, {"patience", "3"},
           {"min_delta", "0.125"}, {"restore_best", "false"}, {"eval_batch", "19"},
           {"dtype", "float64"}})
    train.set_text(key, value);
  TrainerConfig want;
  want.optimizer = {.kind = OptimizerKind::sgd, .beta1 = 0.8, .beta2 = 0.99, .eps = 1e-6,
                    .weight_decay = 0.01, .momentum = 0.5};
  want.schedule = {.kind = LrScheduleKind::cosine, .warmup = 7, .min_factor = 0.25};
  want.lr = 0.03;
  want.steps = 11;
  want.batch = 13;
  want.clip_norm = 2;
  want.eval_every = 17;
  want.patience = 3;
  want.min_delta = 0.125;
  want.restore_best = false;
  want.eval_batch = 19;
  expect_trainer(trainer_config_from_params(train), want);
  EXPECT_EQ(net_dtype_from_params(train), NetDtype::float64);
}

TEST(ParamDefaults, EveryModelsConfigFromDefaultParamsEqualsTheStructDefaults) {
  std::set<std::string> covered;
  auto model = [&](const std::string& name) {
    covered.insert(name);
    return model_defaults(name);
  };
  // Random-feature models and their kernels.
  expect_rfa(rfa_config_from(model("rfa"), "rfa", kD), RfaConfig{});
  RfaConfig brfa;
  brfa.w_mean = 1.0 * std::sqrt(static_cast<double>(kD));  // mean_scale 1: μ = √d
  expect_rfa(rfa_config_from(model("brfa"), "brfa", kD), brfa);
  const RfmlpConfig rfmlp = rfmlp_config_from(model("rfmlp"), kD);
  const RfmlpConfig rfmlp_want;
  EXPECT_EQ(rfmlp.width, rfmlp_matched_width(RfaConfig{}.heads, kD, rfmlp_want.augment));
  EXPECT_EQ(rfmlp.width, 4608);  // 512·(8 + 1): the width the earlier struct default wrote
  EXPECT_EQ(rfmlp.w_var, rfmlp_want.w_var);
  EXPECT_EQ(rfmlp.augment, rfmlp_want.augment);
  expect_rfa_kernel(rfa_kernel_config_from(model("rfa_kernel"), "rfa_kernel", kD),
                    RfaKernelConfig{});
  RfaKernelConfig brfa_kernel;
  brfa_kernel.w_mean = std::sqrt(static_cast<double>(kD));
  expect_rfa_kernel(rfa_kernel_config_from(model("brfa_kernel"), "brfa_kernel", kD), brfa_kernel);
  const RfmlpKernelConfig rfmlp_kernel = rfmlp_kernel_config_from(model("rfmlp_kernel"));
  EXPECT_EQ(rfmlp_kernel.augment, RfmlpKernelConfig{}.augment);
  EXPECT_EQ(rfmlp_kernel.w_var, RfmlpKernelConfig{}.w_var);
  for (const auto& info : model_registry())
    if (info.ridge_fitted) expect_ridge_defaults(info.name);
  // Gradient-trained models (third_order's m = 4 is its own default).
  model("attention");
  expect_attention("attention", AttentionNetConfig{}.m);
  model("third_order");
  expect_attention("third_order", 4);
  const TaskShape shape = token_shape();
  const TransformerNetConfig transformer = neural_transformer_config(model("transformer"), shape);
  const TransformerNetConfig transformer_want;
  expect_unit(transformer, transformer_want);
  EXPECT_EQ(transformer.layers, transformer_want.layers);
  EXPECT_EQ(transformer.mlp_width, transformer_want.mlp_width);
  EXPECT_EQ(transformer.layernorm, transformer_want.layernorm);
  const MlpNetConfig mlp = neural_mlp_config(model("mlp"), shape);
  EXPECT_EQ(mlp.hidden, MlpNetConfig{}.hidden);
  EXPECT_EQ(mlp.activation, MlpNetConfig{}.activation);
  const LstmNetConfig lstm = neural_lstm_config(model("lstm"), shape);
  const LstmNetConfig lstm_want;
  EXPECT_EQ(lstm.hidden, lstm_want.hidden);
  EXPECT_EQ(lstm.layers, lstm_want.layers);
  EXPECT_EQ(lstm.bidirectional, lstm_want.bidirectional);
  EXPECT_EQ(lstm.readout, lstm_want.readout);
  EXPECT_EQ(lstm.head_width, lstm_want.head_width);
  EXPECT_EQ(lstm.activation, lstm_want.activation);
  auto gpt2_keys = [](const Gpt2NetConfig& c) {
    return std::tuple(c.layers, c.m, c.heads, c.causal, c.positions, c.head, c.precision.bits,
                      c.precision.scores, c.precision.in_training);
  };
  EXPECT_EQ(gpt2_keys(neural_gpt2_config(model("gpt2"), shape)), gpt2_keys(Gpt2NetConfig{}));
  // No config struct: these read their Params directly, the schema is their only default.
  for (const char* name : {"mean", "linear", "construction"}) covered.insert(name);
  for (const auto& info : model_registry())
    EXPECT_TRUE(covered.count(info.name)) << info.name << " has no defaults check here";
}

}  // namespace
}  // namespace attn
