// Evaluation at another length than training (eval_length.h): the refusal before a run and the
// trained model's copy at the test set's shapes.
#include "experiment/eval_length.h"

#include <string>
#include <utility>

#include "core/error.h"
#include "core/shape_text.h"
#include "models/model_registry.h"
#include "tasks/task.h"

namespace attn {
namespace {

std::unique_ptr<Model> model_at(const RunConfig& c, const TaskShape& shape, uint64_t seed) {
  return model_find(c.model).make(ModelContext{c.model_params, c.train_params, shape, seed});
}

// The first parameter whose presence or shape differs between the two builds ("" if none).
std::string tensors_differ(const ModelTensors& a, const ModelTensors& b, int64_t N,
                           int64_t N_eval) {
  const std::string at = " at N = " + std::to_string(N),
                    at_eval = " at N = " + std::to_string(N_eval);
  for (const ModelTensor& t : a.tensors) {
    const ModelTensor* u = b.find(t.name);
    if (u == nullptr) return "it has a parameter '" + t.name + "'" + at + " and none" + at_eval;
    if (u->shape != t.shape)
      return "its parameter '" + t.name + "' has shape " + shape_text(t.shape) + at + " and " +
             shape_text(u->shape) + at_eval + " (its parameters depend on N)";
  }
  for (const ModelTensor& u : b.tensors)
    if (a.find(u.name) == nullptr)
      return "it has a parameter '" + u.name + "'" + at_eval + " and none" + at;
  return "";
}

}  // namespace

int64_t eval_length(const RunConfig& c) { return c.eval_params.get_int("N"); }

void eval_length_check(const RunConfig& c, const TaskShape& a, const TaskShape& b) {
  const int64_t N_eval = eval_length(c);
  if (N_eval == 0) return;
  const std::string key = "eval.N = " + std::to_string(N_eval) + ": ";
  const int64_t N = c.task_params.get_int("N");
  const std::string lengths =
      " (task.N = " + std::to_string(N) + ", eval.N = " + std::to_string(N_eval) + ")";
  auto widths = [](const TaskShape& s) {
    return "d_in " + std::to_string(s.d_in) + ", d_out " + std::to_string(s.d_out);
  };
  if (a.d_in != b.d_in || a.d_out != b.d_out)
    throw UserError(key + "task " + c.task + "'s token widths change with N (" + widths(a) +
                    " at task.N = " + std::to_string(N) + ", " + widths(b) +
                    " at eval.N = " + std::to_string(N_eval) +
                    "), so no model trained at one length reads the other; remove eval.N");
  if (eval_same_length(a, b)) return;
  const std::string refused = key + "model " + c.model +
                              " cannot be evaluated at another length than training" + lengths +
                              ": ";
  const std::string fix =
      "; remove eval.N, or use a model whose parameters do not depend on N "
      "(e.g. model.positions not learned)";
  ModelTensors at_train, at_test;
  at_train.model = at_test.model = c.model;
  at_train.shape = a;
  at_test.shape = b;
  // A model that cannot be built for the task at all fails here with its own message, as the
  // run would.
  const std::unique_ptr<Model> train_model = model_at(c, a, 0);
  std::unique_ptr<Model> test_model;
  try {
    train_model->save(at_train);
  } catch (const UserError& e) {
    throw UserError(refused +
                    "its parameters exist only after a fit, so they cannot be checked "
                    "before the run (" +
                    e.what() + ")" + fix);
  }
  try {
    test_model = model_at(c, b, 0);
    test_model->save(at_test);
  } catch (const UserError& e) {
    throw UserError(refused + "it cannot be built at N = " + std::to_string(N_eval) + " (" +
                    e.what() + ")" + fix);
  }
  if (const std::string differ = tensors_differ(at_train, at_test, N, N_eval); !differ.empty())
    throw UserError(refused + differ + fix);
  at_train.shape = b;
  try {
    test_model->load(at_train);
  } catch (const UserError& e) {
    throw UserError(refused + "built at N = " + std::to_string(N_eval) +
                    ", it refuses the parameters built at N = " + std::to_string(N) + " (" +
                    e.what() + ")" + fix);
  }
}

std::unique_ptr<Model> eval_length_model(const Model& trained, const RunConfig& c,
                                         const TaskShape& train_shape, const TaskShape& test_shape,
                                         uint64_t seed) {
  if (eval_same_length(train_shape, test_shape)) return nullptr;
  ModelTensors tensors;
  tensors.model = c.model;
  tensors.shape = train_shape;
  trained.save(tensors);
  tensors.shape = test_shape;
  std::unique_ptr<Model> copy = model_at(c, test_shape, seed);
  copy->load(tensors);
  return copy;
}

}  // namespace attn
