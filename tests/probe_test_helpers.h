// What the probe tests share: a model fitted for a few steps on a task's own samples, with the
// record, the model and a held-out test batch (samples 1000 … 1007 of seed 0).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/model_io.h"
#include "tasks/task.h"

namespace attn::test {

struct FittedModel {
  ModelRecord record;
  std::unique_ptr<Model> model;
  Batch test;
};

// `model` with `sets` ("model.K=V", "train.K=V") fitted for 30 steps on 64 samples of `task`.
inline FittedModel fit_for_probe(const std::string& task_name, const Params& task_params,
                                 const std::string& model, const std::vector<std::string>& sets) {
  const auto task = task_make(task_name, task_params);
  Batch train = task_generate(*task, 0, 0, 64);
  FittedModel f;
  f.record = model_record_make(model, 3, train.shape);
  for (const auto& item : sets)
    model_set_apply(item, f.record.model_params, &f.record.train_params);
  f.record.train_params.set_text("steps", "30");
  f.record.train_params.set_text("n", "64");
  f.model = model_make(f.record);
  FitLog log;
  f.model->fit(train, log);
  f.test = task_generate(*task, 0, 1000, 8);
  return f;
}

}  // namespace attn::test
