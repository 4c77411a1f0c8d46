// Evaluation at another length than training (eval.N): the test set is drawn with task.N set to
// eval.N (same seed and indices), the training set stays at the task's N.
//
// The trained model reads the longer (or shorter) test sequences through a copy of itself built
// at the test set's shapes: the registry makes the model for the test shapes (T = eval.N) with
// the same [model]/[train] keys and seed, and Model::load gives it the trained parameters that
// Model::save wrote. That works exactly for the models whose parameters do not depend on N
// (attention, third_order, transformer and lstm with model.positions none, sinusoidal or random:
// their weights act per token, and position codes come from a formula or a stream indexed by the
// position). The others are refused before anything runs, by building the model at both lengths
// from the outside, with no list of model names: their parameter shapes differ (mlp over the
// flattened sequence: its first layer is (T·d_in, width); learned positions: the table is
// (N, m)), the copy refuses them (a construction whose weights depend on N), the model cannot be
// built at the other length, or its parameters exist only after a fit (the ridge-fitted and
// baseline models), so they cannot be checked before the run. A task whose token width d_in or
// output width d_out changes with N (qsa with the multi-hot encoding) is refused too.
#pragma once

#include <cstdint>
#include <memory>

#include "experiment/plan.h"
#include "model_api/model.h"

namespace attn {

// eval.N, or 0 when the test set has the task's own length.
int64_t eval_length(const RunConfig& config);

// True when a test set of shape `test` is read by the model trained at `train` itself.
inline bool eval_same_length(const TaskShape& train, const TaskShape& test) {
  return train.T == test.T && train.T_out == test.T_out;
}

// UserError, one line naming eval.N, the task or the model and the reason, when the run cannot
// be evaluated at eval.N; nothing when it can or eval.N is not set. `train` and `test` are the
// shapes of the task and of the test set's task (eval_task_params). When they differ, builds
// the model twice (at the task's N and at eval.N, seed 0, untrained).
void eval_length_check(const RunConfig& config, const TaskShape& train, const TaskShape& test);

// The trained model's copy at the test set's shapes (test_shape, drawn at eval.N): made by the
// registry for test_shape with the run's seed, holding `trained`'s parameters. Null when the test
// shapes are the training shapes (the trained model predicts them itself).
std::unique_ptr<Model> eval_length_model(const Model& trained, const RunConfig& config,
                                         const TaskShape& train_shape, const TaskShape& test_shape,
                                         uint64_t seed);

}  // namespace attn
