// models/fit_arrays.h, the fit behind `attnlab fit` and Python's Model.fit(X, Y): train.n
// takes the first n samples (the same model as a fit on those alone), an absent train.n is
// every sample, the record gets the data's shape, and each refusal is a UserError naming
// the source.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "models/fit_arrays.h"
#include "tasks/task.h"

namespace attn {
namespace {

// rf_target with N = 4 keys, d = 3 and label noise: X (n, 5, 3) (the query row first),
// Y (n, 1, 1), the raw array f_star (n).
Batch rf_data(int64_t n) {
  Params p = task_default_params("rf_target");
  p.set_text("N", "4");
  p.set_text("d", "3");
  p.set_text("label_noise_std", "0.1");
  return task_generate(*task_make("rf_target", p), 1, 0, n);
}

const FitArraysSource kNames{"train.npz", "the file"};

TEST(FitArrays, TrainNTakesTheFirstSamples) {
  ModelRecord record = model_record_make("linear", 0, TaskShape{});
  record.train_params.set_text("n", "10");
  Batch data = rf_data(30);
  FitLog log;
  const auto model = model_fit_arrays(record, data, true, log, kNames);
  EXPECT_EQ(data.n, 10);
  EXPECT_EQ(data.X.size(), 10u * 15u);
  EXPECT_TRUE(data.raw.empty());
  EXPECT_EQ(record.shape.T, 5);
  EXPECT_EQ(record.shape.d_in, 3);
  EXPECT_EQ(record.shape.T_out, 1);
  EXPECT_EQ(record.shape.d_out, 1);
  EXPECT_TRUE(record.shape.constants.empty());

  Batch first = rf_data(10);
  ModelRecord alone = model_record_make("linear", 0, first.shape);
  alone.train_params.set_text("n", "10");
  auto reference = model_make(alone);
  FitLog reference_log;
  reference->fit(first, reference_log);
  const Batch test = rf_data(50);
  EXPECT_EQ(model->predict(test), reference->predict(test));
}

TEST(FitArrays, WithoutTrainNEverySampleIsUsed) {
  ModelRecord record = model_record_make("mean", 0, TaskShape{});
  Batch data = rf_data(30);
  FitLog log;
  model_fit_arrays(record, data, false, log, kNames);
  EXPECT_EQ(record.train_params.get_int("n"), 30);
  EXPECT_EQ(data.n, 30);
  EXPECT_FALSE(data.raw.empty());
}

std::string refusal(Batch data, const std::string& n) {
  ModelRecord record = model_record_make("linear", 0, TaskShape{});
  if (!n.empty()) record.train_params.set_text("n", n);
  FitLog log;
  try {
    model_fit_arrays(record, data, !n.empty(), log, kNames);
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(FitArrays, RefusalsNameTheSource) {
  EXPECT_EQ(refusal(rf_data(30), "31"),
            "train.n = 31 but the file holds 30 samples; lower train.n");
  EXPECT_NE(refusal(rf_data(30), "0").find("train.n = 0 (fresh samples every step) needs a task"),
            std::string::npos);
  EXPECT_EQ(refusal(Batch{}, ""), "the file has no samples; give at least one");
  Batch flat = rf_data(3);
  flat.shape.d_out = 0;
  flat.Y.clear();
  EXPECT_EQ(refusal(flat, ""),
            "train.npz: X (3, 5, 3) and Y (3, 1, 0) must have no empty dimension");
  Batch nan = rf_data(3);
  nan.X[4] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(refusal(nan, "").find("train.npz: X holds NaN"), std::string::npos);
}

}  // namespace
}  // namespace attn
