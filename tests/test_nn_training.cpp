// The gradient-training stack: optimisers against their closed-form steps, schedules, the
// training loop on a planted regression, the neural models end to end (loss falls,
// determinism, divergence is a clear error, save/load), categorical targets (cross-entropy
// chosen by the task's kind, softmax predictions, the loss as a mean over labelled positions
// whatever the chunking), and the model gradient-check rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>

#include "core/error.h"
#include "core/rng.h"
#include "core/step_meter.h"
#include "core/threads.h"
#include "models/model_registry.h"
#include "models/neural_models.h"
#include "nn/mlp_block.h"
#include "ops/loss.h"
#include "models/gradcheck_table.h"
#include "tasks/task.h"
#include "train/lr_schedule.h"
#include "train/optimizer.h"
#include "train/metrics.h"
#include "train/trainer.h"

namespace attn {
namespace {

TEST(Optimizer, AdamFirstStepIsLrTimesSignOfGradient) {
  // After one step m̂ = g and v̂ = g², so θ moves by lr·g/(|g| + ε) whatever β₁, β₂.
  OptimizerConfig c;
  Optimizer<double> opt(c, 3);
  std::vector<double> theta{1.0, -2.0, 0.5}, g{0.3, -4.0, 1e-3};
  opt.step(theta.data(), g.data(), 0.1);
  for (int i = 0; i < 3; ++i) {
    const double expected =
        std::vector<double>{1.0, -2.0, 0.5}[i] - 0.1 * g[i] / (std::abs(g[i]) + 1e-8);
    EXPECT_NEAR(theta[i], expected, 1e-15);
  }
}

TEST(Optimizer, AdamWithZeroBetasAndEpsIsSignDescent) {
  OptimizerConfig c;
  c.beta1 = 0;
  c.beta2 = 0;
  c.eps = 0;
  Optimizer<double> opt(c, 2);
  std::vector<double> theta{0, 0};
  for (int t = 0; t < 5; ++t) {
    std::vector<double> g{2.0 * (t + 1), -0.5};
    opt.step(theta.data(), g.data(), 0.25);
  }
  EXPECT_DOUBLE_EQ(theta[0], -1.25);
  EXPECT_DOUBLE_EQ(theta[1], 1.25);
}

TEST(Optimizer, AdamSecondStepMatchesTheFormula) {
  OptimizerConfig c;
  Optimizer<double> opt(c, 1);
  double theta = 1.0;
  const double g1 = 0.5, g2 = -0.25, lr = 0.01;
  opt.step(&theta, &g1, lr);
  opt.step(&theta, &g2, lr);
  const double m = 0.9 * (0.1 * g1) + 0.1 * g2, v = 0.999 * (0.001 * g1 * g1) + 0.001 * g2 * g2;
  const double mhat = m / (1 - 0.81), vhat = v / (1 - 0.999 * 0.999);
  const double after1 = 1.0 - lr * g1 / (std::abs(g1) + 1e-8);
  EXPECT_NEAR(theta, after1 - lr * mhat / (std::sqrt(vhat) + 1e-8), 1e-15);
}

TEST(Optimizer, AdamWDecaysDecoupledAndAdamAddsL2ToTheGradient) {
  OptimizerConfig c;
  c.kind = OptimizerKind::adamw;
  c.weight_decay = 0.1;
  Optimizer<double> adamw(c, 1);
  double theta = 2.0;
  const double g = 1.0;
  adamw.step(&theta, &g, 0.5);
  EXPECT_NEAR(theta, 2.0 * (1 - 0.5 * 0.1) - 0.5 * 1.0 / (1.0 + 1e-8), 1e-15);
  c.kind = OptimizerKind::adam;
  Optimizer<double> adam(c, 1);
  theta = 2.0;
  const double g_neg = -0.1;  // g + λθ = 0.1 > 0: the step goes down
  adam.step(&theta, &g_neg, 0.5);
  EXPECT_NEAR(theta, 2.0 - 0.5 * 0.1 / (0.1 + 1e-8), 1e-12);
}

TEST(Optimizer, SgdWithMomentumAccumulates) {
  OptimizerConfig c;
  c.kind = OptimizerKind::sgd;
  c.momentum = 0.5;
  Optimizer<double> opt(c, 1);
  double theta = 0;
  const double g1 = 1.0, g2 = 2.0;
  opt.step(&theta, &g1, 0.1);  // b = 1
  opt.step(&theta, &g2, 0.1);  // b = 0.5 + 2 = 2.5
  EXPECT_DOUBLE_EQ(theta, -0.1 - 0.25);
}

TEST(Optimizer, UnknownKindIsAUserErrorListingTheChoices) {
  try {
    choice_parse("adagrad", kOptimizerKinds, "train.optimizer");
    FAIL() << "adagrad was accepted";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "unknown train.optimizer 'adagrad'; choices: adam, adamw, sgd");
  }
  EXPECT_EQ(choice_parse("adamw", kOptimizerKinds, "train.optimizer"), OptimizerKind::adamw);
  EXPECT_STREQ(choice_name(OptimizerKind::sgd, kOptimizerKinds), "sgd");
}

TEST(LrSchedule, WarmupThenCosineToTheFloor) {
  LrSchedule s{LrScheduleKind::cosine, 10, 0.1};
  EXPECT_DOUBLE_EQ(lr_schedule_factor(s, 1, 110), 0.1);
  EXPECT_DOUBLE_EQ(lr_schedule_factor(s, 10, 110), 1.0);
  EXPECT_NEAR(lr_schedule_factor(s, 60, 110), 0.55, 1e-12);
  EXPECT_NEAR(lr_schedule_factor(s, 110, 110), 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(lr_schedule_factor(LrSchedule{}, 7, 100), 1.0);
}

// A linear network y = x·W + b (one MlpBlock layer), for the planted regression.
class LinearNet : public Net<double> {
 public:
  LinearNet(int64_t d, int64_t k) {
    block_.declare(params_, "lin", {d, k}, Activation::identity);
    params_.allocate();
  }
  void forward(const double* x, int64_t B, double* y) override { block_.forward(params_, x, B, y); }
  void backward(const double* dy) override { block_.backward(params_, dy, nullptr); }
  void init(uint64_t seed) override { block_.init(params_, seed, "linear.init"); }

 private:
  MlpBlock<double> block_;
};

// n samples x ~ N(0, I_d) with labels sign·(x W) for a fixed W ~ 3·N(0, 1) (d × k).
TrainSet<double> linear_set(int64_t n, int64_t d, int64_t k, double sign, uint64_t seed) {
  Rng wr(1, "test.linear_set.W", 0), xr(seed, "test.linear_set.x", 0);
  std::vector<double> W(d * k);
  for (double& w : W) w = 3 * wr.gaussian();
  TrainSet<double> s{n, d, k, std::vector<double>(n * d), std::vector<double>(n * k, 0.0)};
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) s.X[i * d + j] = xr.gaussian();
    for (int64_t j = 0; j < d; ++j)
      for (int64_t c = 0; c < k; ++c) s.Y[i * k + c] += sign * s.X[i * d + j] * W[j * k + c];
  }
  return s;
}

// Every step sees the whole set (full-batch gradient descent).
BatchSource<double> whole_set(const TrainSet<double>& s) {
  return [&s](int64_t, int64_t batch, double* x, double* y) {
    ASSERT_EQ(batch, s.n);
    std::copy(s.X.begin(), s.X.end(), x);
    std::copy(s.Y.begin(), s.Y.end(), y);
  };
}

TEST(Trainer, ClipNormScalesTheStepToTheCap) {
  // One plain SGD step with lr 1 moves the parameters by −g. With clip_norm = 0.1·|g| the move
  // is −0.1·g exactly; with clip_norm above |g| it is −g unchanged.
  const TrainSet<double> data = linear_set(64, 4, 2, 1.0, 7);
  auto step_delta = [&](double clip) {
    LinearNet net(4, 2);
    net.init(3);
    const std::vector<double> before = net.params().values();
    TrainerConfig c;
    c.optimizer.kind = OptimizerKind::sgd;
    c.lr = 1.0;
    c.steps = 1;
    c.batch = data.n;
    c.clip_norm = clip;
    c.restore_best = false;
    FitLog log;
    trainer_run<double>(net, c, whole_set(data), data, log);
    std::vector<double> delta(before.size());
    for (size_t i = 0; i < before.size(); ++i) delta[i] = net.params().values()[i] - before[i];
    return delta;
  };
  const std::vector<double> free = step_delta(0);
  double g = 0;
  for (double v : free) g += v * v;
  g = std::sqrt(g);
  ASSERT_GT(g, 1.0);
  const std::vector<double> clipped = step_delta(0.1 * g), loose = step_delta(2 * g);
  for (size_t i = 0; i < free.size(); ++i) {
    EXPECT_NEAR(clipped[i], 0.1 * free[i], 1e-12 * g) << i;
    EXPECT_EQ(loose[i], free[i]) << i;
  }
}

TEST(Trainer, ANetworkOfTwoToTheSeventeenParametersTakesItsBatchAsOneChunk) {
  // One plain SGD step (lr 1) of a linear map with 512 × 256 + 256 = 131 328 parameters on 256
  // samples moves the parameters by −g, g the gradient of one backward over the whole batch, bit
  // for bit (in 8 chunks of 32 rows the gradient sums would round differently). Smaller networks
  // keep batch / 32 chunks.
  EXPECT_EQ(trainer_chunks(256, kTrainerOneChunkParams - 1), 8);
  EXPECT_EQ(trainer_chunks(256, kTrainerOneChunkParams), 1);
  EXPECT_EQ(trainer_chunks(96, 100), 3);
  EXPECT_EQ(trainer_chunks(4096, 100), 8);
  EXPECT_EQ(trainer_chunks(16, 100), 1);
  const int64_t n = 256, d = 512, k = 256;
  const TrainSet<double> data = linear_set(n, d, k, 1.0, 7);
  LinearNet net(d, k), direct(d, k);
  net.init(3);
  direct.init(3);
  ASSERT_GE(net.params().size(), kTrainerOneChunkParams);
  const std::vector<double> before = net.params().values();
  TrainerConfig c;
  c.optimizer.kind = OptimizerKind::sgd;
  c.lr = 1.0;
  c.steps = 1;
  c.batch = n;
  c.restore_best = false;
  FitLog log;
  trainer_run<double>(net, c, whole_set(data), data, log);
  std::vector<double> pred(n * k), dpred(n * k, 0.0);
  direct.forward(data.X.data(), n, pred.data());
  direct.params().zero_grad();
  loss_backward(LossSpec(Loss::mse), dpred.data(), pred.data(), data.Y.data(), n * k, 1.0);
  direct.backward(dpred.data());
  size_t differ = 0;
  for (size_t i = 0; i < before.size(); ++i)
    differ += net.params().values()[i] != before[i] - direct.params().grads()[i];
  EXPECT_EQ(differ, 0u) << "of " << before.size() << " parameters";
}

// Training towards W while validating against −W: the validation loss rises from the first
// evaluation on (|W_net + W|² grows while the small initial W_net moves to W).
struct DivergingValidation {
  TrainSet<double> train = linear_set(64, 4, 2, 1.0, 7), val = linear_set(64, 4, 2, -1.0, 8);
  TrainerConfig config(int64_t patience, bool restore_best) const {
    TrainerConfig c;
    c.optimizer.kind = OptimizerKind::sgd;
    c.lr = 0.02;
    c.steps = 30;
    c.batch = train.n;
    c.eval_every = 1;
    c.patience = patience;
    c.restore_best = restore_best;
    return c;
  }
};

TEST(Trainer, PatienceStopsAfterThatManyEvaluationsWithoutImprovement) {
  const DivergingValidation v;
  LinearNet net(4, 2);
  net.init(3);
  FitLog log;
  const TrainReport r = trainer_run<double>(net, v.config(3, true), whole_set(v.train), v.val, log);
  EXPECT_TRUE(r.stopped_early);
  EXPECT_EQ(r.best_step, 1);
  EXPECT_EQ(r.steps_run, 4);  // evaluations at steps 2, 3, 4 do not improve on step 1
  LinearNet full(4, 2);
  full.init(3);
  const TrainReport all =
      trainer_run<double>(full, v.config(0, true), whole_set(v.train), v.val, log);
  EXPECT_FALSE(all.stopped_early);
  EXPECT_EQ(all.steps_run, 30);
}

TEST(Trainer, ReportsEachStepToThisThreadsMeterUpToWhereItStopped) {
  const DivergingValidation v;
  std::vector<std::pair<int64_t, int64_t>> seen;
  StepMeterScope meter([&seen](int64_t done, int64_t total) { seen.emplace_back(done, total); });
  LinearNet net(4, 2);
  net.init(3);
  FitLog log;
  const TrainReport r = trainer_run<double>(net, v.config(3, true), whole_set(v.train), v.val, log);
  ASSERT_EQ(r.steps_run, 4);  // early stopping: the meter ends below the total
  EXPECT_EQ(seen, (std::vector<std::pair<int64_t, int64_t>>{{1, 30}, {2, 30}, {3, 30}, {4, 30}}));
  // A fit on another thread reports to that thread's meter (none), not to this one.
  seen.clear();
  std::thread other([&] {
    LinearNet n2(4, 2);
    n2.init(3);
    FitLog l2;
    trainer_run<double>(n2, v.config(0, true), whole_set(v.train), v.val, l2);
  });
  other.join();
  EXPECT_TRUE(seen.empty());
}

TEST(Trainer, AMeterThatThrowsStopsTheFit) {
  const DivergingValidation v;
  int64_t calls = 0;
  StepMeterScope meter([&calls](int64_t done, int64_t) {
    ++calls;
    if (done == 2) throw std::runtime_error("stop at 2");
  });
  LinearNet net(4, 2);
  net.init(3);
  FitLog log;
  EXPECT_THROW(trainer_run<double>(net, v.config(0, true), whole_set(v.train), v.val, log),
               std::runtime_error);
  EXPECT_EQ(calls, 2);
}

TEST(StepMeter, ScopesNestAndRestoreThePreviousMeter) {
  std::vector<int> who;
  step_meter_report(1, 2);  // no meter: nothing happens
  {
    StepMeterScope outer([&who](int64_t, int64_t) { who.push_back(1); });
    step_meter_report(1, 2);
    {
      StepMeterScope inner([&who](int64_t, int64_t) { who.push_back(2); });
      step_meter_report(1, 2);
      StepMeterScope none(StepMeter{});  // an empty meter hides the outer ones
      step_meter_report(1, 2);
    }
    step_meter_report(2, 2);
  }
  step_meter_report(2, 2);
  EXPECT_EQ(who, (std::vector<int>{1, 2, 1}));
}

// The stopping rule applied by hand to a whole recorded curve: the step it stops at
// (0: never) for this patience and min_delta.
int64_t stop_step_of_curve(const std::vector<double>& val_losses, int64_t patience,
                           double min_delta) {
  double reference = INFINITY;
  int64_t since = 0;
  for (size_t i = 0; i < val_losses.size(); ++i) {
    if (val_losses[i] < reference - min_delta) {
      reference = val_losses[i];
      since = 0;
    } else if (++since >= patience) {
      return static_cast<int64_t>(i) + 1;
    }
  }
  return 0;
}

TEST(Trainer, MinDeltaStopsWhereTheRuleAppliedToTheWholeCurveSays) {
  // Plain SGD towards a planted linear map, evaluated every step: the validation loss falls
  // by shrinking amounts, so a min_delta between the first and the last decrease stops it
  // part-way. The step is predicted from the curve of the same run trained to the end.
  const TrainSet<double> train = linear_set(64, 4, 2, 1.0, 7), val = linear_set(64, 4, 2, 1.0, 8);
  TrainerConfig c;
  c.optimizer.kind = OptimizerKind::sgd;
  c.lr = 0.02;
  c.steps = 60;
  c.batch = train.n;
  c.eval_every = 1;
  auto run = [&](int64_t patience, double min_delta, FitLog& log) {
    LinearNet net(4, 2);
    net.init(3);
    TrainerConfig cc = c;
    cc.patience = patience;
    cc.min_delta = min_delta;
    return trainer_run<double>(net, cc, whole_set(train), val, log);
  };
  FitLog full_log;
  const TrainReport full = run(0, 0, full_log);
  ASSERT_FALSE(full.stopped_early);
  std::vector<double> curve;
  for (const auto& p : full_log.points)
    if (p.series == "val_loss") curve.push_back(p.value);
  ASSERT_EQ(curve.size(), 60u);
  const double first_drop = curve[0] - curve[1], last_drop = curve[58] - curve[59];
  ASSERT_GT(last_drop, 0);
  ASSERT_GT(first_drop, 4 * last_drop);
  int stopped_part_way = 0;
  for (double min_delta :
       {last_drop / 2, std::sqrt(first_drop * last_drop), first_drop / 2, 10 * first_drop})
    for (int64_t patience : {1, 3}) {
      const int64_t expected = stop_step_of_curve(curve, patience, min_delta);
      FitLog log;
      const TrainReport r = run(patience, min_delta, log);
      EXPECT_EQ(r.stopped_early, expected != 0) << min_delta << " " << patience;
      EXPECT_EQ(r.steps_run, expected != 0 ? expected : 60) << min_delta << " " << patience;
      // The best parameters still follow the lowest loss seen (the curve falls: the last step).
      EXPECT_EQ(r.best_step, r.steps_run);
      EXPECT_EQ(r.best_val_loss, curve[r.steps_run - 1]);
      stopped_part_way += expected > 1 && expected < 60;
    }
  EXPECT_GE(stopped_part_way, 2);  // the cases do cover a stop in the middle of the curve
}

TEST(Trainer, RestoreBestEndsWithTheBestValidationParameters) {
  const DivergingValidation v;
  auto final_val_loss = [&](bool restore, TrainReport* r) {
    LinearNet net(4, 2);
    net.init(3);
    FitLog log;
    *r = trainer_run<double>(net, v.config(0, restore), whole_set(v.train), v.val, log);
    return trainer_loss<double>(net, Loss::mse, v.val, 1024);
  };
  TrainReport kept, last;
  const double restored = final_val_loss(true, &kept), not_restored = final_val_loss(false, &last);
  EXPECT_EQ(kept.best_step, 1);
  EXPECT_EQ(restored, kept.best_val_loss);
  EXPECT_GT(not_restored, 2 * kept.best_val_loss);
}

TEST(Trainer, RecoversAPlantedLinearMap) {
  const int64_t d = 5, k = 2, n = 512;
  Rng rng(3, "test.planted", 0);
  std::vector<double> W(d * k), b{0.3, -0.7};
  for (double& w : W) w = rng.gaussian();
  TrainSet<double> data{n, d, k, std::vector<double>(n * d), std::vector<double>(n * k)};
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) data.X[i * d + j] = rng.gaussian();
    for (int64_t c = 0; c < k; ++c) {
      double s = b[c];
      for (int64_t j = 0; j < d; ++j) s += data.X[i * d + j] * W[j * k + c];
      data.Y[i * k + c] = s;
    }
  }
  LinearNet net(d, k);
  net.init(1);
  TrainerConfig c;
  c.lr = 0.05;
  c.steps = 3000;
  c.batch = 64;
  c.eval_every = 500;
  c.schedule = LrSchedule{LrScheduleKind::cosine, 0, 0.0};
  int64_t next = 0;
  BatchSource<double> source = [&](int64_t, int64_t batch, double* x, double* y) {
    for (int64_t r = 0; r < batch; ++r, next = (next + 1) % n) {
      std::copy_n(data.X.data() + next * d, d, x + r * d);
      std::copy_n(data.Y.data() + next * k, k, y + r * k);
    }
  };
  FitLog log;
  const TrainReport r = trainer_run<double>(net, c, source, data, log);
  EXPECT_LT(r.best_val_loss, 1e-8);
  const double* w = net.params().value(0);
  const double* bias = net.params().value(1);
  for (int64_t i = 0; i < d * k; ++i) EXPECT_NEAR(w[i], W[i], 1e-4);
  for (int64_t c2 = 0; c2 < k; ++c2) EXPECT_NEAR(bias[c2], b[c2], 1e-4);
  // Learning curves: one train/val point per evaluation.
  int val_points = 0;
  for (const auto& p : log.points) val_points += p.series == "val_loss";
  EXPECT_EQ(val_points, 6);
}

// A neural model from the registry on a task, as `attnlab run` builds it.
struct NeuralRun {
  Params task_params, model_params, train_params;
  std::unique_ptr<Task> task;
  std::unique_ptr<Model> model;
  NeuralRun(const std::string& task_name, const std::string& model_name,
            const std::vector<std::pair<std::string, std::string>>& sets, uint64_t seed = 5) {
    task_params = task_default_params(task_name);
    model_params = Params("model", model_find(model_name).schema());
    std::vector<ParamSpec> train = {param_int("n", 0, "", 0, 1e12)};
    for (auto& p : model_find(model_name).train_schema()) train.push_back(p);
    train_params = Params("train", train);
    for (const auto& [k, v] : sets) {
      const std::string section = k.substr(0, k.find('.')), key = k.substr(k.find('.') + 1);
      (section == "task" ? task_params : section == "model" ? model_params : train_params)
          .set_text(key, v);
    }
    task = task_make(task_name, task_params);
    model = model_find(model_name).make(ModelContext{model_params, train_params, task->shape(),
                                                      seed, task.get(), 1000000000});
  }
};

double last_point(const FitLog& log, const std::string& series) {
  double v = NAN;
  for (const auto& p : log.points)
    if (p.series == series) v = p.value;
  return v;
}

double first_point(const FitLog& log, const std::string& series) {
  for (const auto& p : log.points)
    if (p.series == series) return p.value;
  return NAN;
}

TEST(NeuralModel, AttentionLossFallsOnFreshQsaSamples) {
  NeuralRun run("qsa", "attention",
                {{"task.N", "6"}, {"task.q", "1"}, {"task.d_out", "2"}, {"model.m", "8"},
                 {"model.phi_width", "32"}, {"train.steps", "1500"}, {"train.batch", "32"},
                 {"train.eval_every", "250"}, {"train.val_n", "128"}, {"train.lr", "3e-3"}});
  FitLog log;
  run.model->fit(Batch{}, log);
  const double first = first_point(log, "val_loss"), last = last_point(log, "val_loss");
  EXPECT_LT(last, 0.5 * first) << "first " << first << " last " << last;
  bool has_params = false;
  for (const auto& [k, v] : log.scalars) has_params = has_params || (k == "params" && v > 0);
  EXPECT_TRUE(has_params);
}

TEST(NeuralModel, SameSeedGivesIdenticalPredictions) {
  auto fit_predict = [] {
    NeuralRun run("qsa", "lstm",
                  {{"task.N", "5"}, {"task.q", "1"}, {"task.d_out", "2"}, {"model.hidden", "8"},
                   {"train.steps", "20"}, {"train.batch", "16"}, {"train.val_n", "32"}});
    FitLog log;
    run.model->fit(Batch{}, log);
    const Batch test = task_generate(*run.task, 5, 1000000000, 16);
    return run.model->predict(test);
  };
  EXPECT_EQ(fit_predict(), fit_predict());
}

TEST(NeuralModel, LstmGradientsDoNotDependOnEarlierSteps) {
  // The LSTM keeps buffers between steps (the final read-out's state gradient rows, the
  // layers' outputs, the sparse-input rows): a backward after other batches, of other sizes,
  // gives the same gradients as on a fresh network. Dense and one-hot inputs.
  TaskShape shape;
  shape.T = 5;
  shape.d_in = 9;
  shape.T_out = 5;
  shape.d_out = 2;
  const std::vector<std::vector<std::pair<std::string, std::string>>> configs = {
      {{"hidden", "4"}},
      {{"hidden", "4"}, {"layers", "3"}},
      {{"hidden", "3"}, {"layers", "2"}, {"bidirectional", "true"}, {"head_width", "5"}},
      {{"hidden", "3"}, {"bidirectional", "true"}, {"readout", "per_position"}}};
  auto batch = [&](int64_t B, uint64_t seed, bool one_hot) {
    Rng rng(seed, "test.lstm_steps", 0);
    std::vector<double> x(static_cast<size_t>(B * shape.T * shape.d_in), 0.0);
    std::vector<double> dy(static_cast<size_t>(B * shape.T * shape.d_out));
    for (int64_t r = 0; r < B * shape.T; ++r) {
      const auto hot = static_cast<int64_t>(rng.uniform() * static_cast<double>(shape.d_in));
      for (int64_t k = 0; k < shape.d_in; ++k)
        if (!one_hot || k == hot) x[r * shape.d_in + k] = 2 * rng.uniform() - 1;
    }
    for (auto& v : dy) v = 2 * rng.uniform() - 1;
    return std::make_pair(x, dy);
  };
  for (const auto& set : configs) {
    Params params = neural_default_params("lstm");
    for (const auto& [k, v] : set) params.set_text(k, v);
    SCOPED_TRACE(params.to_json());
    for (bool one_hot : {false, true}) {
      auto grads_after = [&](const std::vector<std::pair<int64_t, uint64_t>>& steps) {
        auto net = neural_net_make<double>("lstm", params, shape);
        net->init(3);
        std::vector<double> y;
        for (const auto& [B, seed] : steps) {
          const auto [x, dy] = batch(B, seed, one_hot);
          y.resize(dy.size());
          net->forward(x.data(), B, y.data());
          net->params().zero_grad();
          net->backward(dy.data());
        }
        return net->params().grads();
      };
      const auto fresh = grads_after({{3, 7}});
      EXPECT_EQ(grads_after({{3, 5}, {2, 6}, {3, 7}}), fresh) << "one-hot " << one_hot;
      EXPECT_EQ(grads_after({{3, 5}, {3, 7}}), fresh) << "one-hot " << one_hot;
      EXPECT_EQ(grads_after({{0, 4}, {3, 7}}), fresh) << "one-hot " << one_hot;  // an empty batch
      const auto empty = grads_after({{3, 5}, {0, 4}});
      EXPECT_EQ(empty, std::vector<double>(empty.size(), 0.0)) << "one-hot " << one_hot;
    }
  }
}

// Everything a fitted neural run reports, as doubles in a fixed order: the fit log's
// scalars and series, the evaluation metrics and series, and the test predictions.
std::vector<double> run_outputs(NeuralRun& run) {
  FitLog log;
  run.model->fit(Batch{}, log);
  const Batch test = task_generate(*run.task, 5, 1000000000, 24);
  run.model->evaluate(test, log);
  std::vector<double> out;
  for (const auto& [k, v] : log.scalars) out.push_back(v);
  for (const auto& p : log.points) {
    out.push_back(static_cast<double>(p.step));
    out.push_back(p.value);
  }
  for (double v : run.model->predict(test)) out.push_back(v);
  return out;
}

TEST(NeuralModel, ThreadCountChangesNoBitOfAnyModel) {
  // Each trained model at 1, 2 and 3 threads: every metric, series value and prediction has
  // the same bits (memcmp). Batches of 96 and 256 are split into 3 and 8 chunks, so 2 and 3
  // threads share them unevenly. The LSTM runs on qsa with N = 16 (multi-hot tokens 4 of
  // 34 non-zero: the sparse input products in every chunk); attention once more at N = 32
  // (tokens 5 of 66 non-zero: φ's first layer on the non-zeros, nn/mlp_block.h).
  using Sets = std::vector<std::pair<std::string, std::string>>;
  const std::vector<std::pair<std::string, Sets>> runs = {
      {"attention", {{"task.N", "5"}, {"task.q", "2"}, {"model.m", "4"}, {"model.phi_width", "8"}}},
      {"attention",
       {{"task.N", "32"}, {"task.q", "2"}, {"model.m", "4"}, {"model.phi_width", "8"}}},
      {"third_order",
       {{"task.N", "5"}, {"task.q", "2"}, {"model.m", "4"}, {"model.phi_width", "8"}}},
      {"transformer",
       {{"task.N", "5"}, {"task.q", "2"}, {"model.m", "8"}, {"model.layers", "1"},
        {"model.phi_width", "8"}, {"model.mlp_width", "8"}}},
      {"mlp", {{"task.N", "5"}, {"task.q", "2"}, {"model.width", "16"}, {"train.batch", "256"}}},
      // 188 k parameters: one chunk (train/trainer.h), replicas idle at 2 and 3 threads.
      {"mlp", {{"task.N", "5"}, {"task.q", "2"}, {"model.width", "400"}, {"train.batch", "256"}}},
      {"lstm", {{"task.N", "16"}, {"task.q", "1"}, {"model.hidden", "6"}}},
      // With a relu head of one hidden layer: the fused head (ops/sparse_relu_head.h).
      {"lstm",
       {{"task.N", "16"}, {"task.q", "1"}, {"model.hidden", "6"}, {"model.head_width", "8"}}}};
  for (const auto& [model, settings] : runs) {
    SCOPED_TRACE(model);
    auto outputs = [&](int threads) {
      Sets all = {{"task.d_out", "2"}, {"train.steps", "200"}, {"train.batch", "96"},
                  {"train.eval_every", "50"}, {"train.val_n", "64"}, {"train.lr", "3e-3"}};
      for (const auto& kv : settings) all.push_back(kv);
      threads_configure(threads);
      NeuralRun run("qsa", model, all);
      auto out = run_outputs(run);
      threads_configure(1);
      return out;
    };
    const auto one = outputs(1);
    for (int threads : {2, 3}) {
      const auto other = outputs(threads);
      ASSERT_EQ(one.size(), other.size()) << threads << " threads";
      size_t differ = 0;
      for (size_t i = 0; i < one.size(); ++i)
        differ += std::memcmp(&one[i], &other[i], sizeof(double)) != 0;
      EXPECT_EQ(differ, 0u) << "of " << one.size() << " values at " << threads << " threads";
    }
  }
}

// An MLP on 200 qsa samples (180 to fit, 3 epochs of batch 50), plain SGD over the rates `lrs`.
NeuralRun sgd_rate_selection(const std::string& lrs) {
  return NeuralRun("qsa", "mlp",
                   {{"task.N", "4"}, {"task.q", "1"}, {"task.d_out", "1"}, {"model.hidden", "[16]"},
                    {"train.n", "200"}, {"train.epochs", "3"}, {"train.batch", "50"},
                    {"train.optimizer", "sgd"}, {"train.lrs", lrs}});
}

TEST(NeuralModel, FixedTrainingSetWithLearningRateSelection) {
  // Three rates for plain SGD: 1e-7 cannot move the weights in 12 steps, 0.1 learns, 1e5
  // diverges. The diverged rate is dropped (not the run), the chosen rate is the argmin of the
  // logged validation losses, and that is 0.1.
  NeuralRun run = sgd_rate_selection("[1e-7, 0.1, 1e5]");
  const Batch train = task_generate(*run.task, 5, 0, 200);
  FitLog log;
  testing::internal::CaptureStderr();
  run.model->fit(train, log);
  const std::string err = testing::internal::GetCapturedStderr();
  double steps = 0, lr = 0, diverged = -1;
  for (const auto& [k, v] : log.scalars) {
    if (k == "steps_run") steps = v;
    if (k == "lr_chosen") lr = v;
    if (k == "lrs_diverged") diverged = v;
  }
  std::map<int64_t, double> val_by_lr;
  for (const auto& p : log.points)
    if (p.series == "val_loss_by_lr") val_by_lr[p.step] = p.value;
  EXPECT_EQ(steps, 3 * 4);  // 180 fitting samples in batches of 50
  EXPECT_EQ(diverged, 1);
  EXPECT_NE(err.find("lr = 100000 dropped"), std::string::npos) << err;
  ASSERT_EQ(val_by_lr.size(), 2u);  // rates 0 and 1; the diverged rate 2 has no loss
  EXPECT_LT(val_by_lr.at(1), val_by_lr.at(0));
  EXPECT_EQ(lr, 0.1);
}

TEST(NeuralModel, EveryLearningRateDivergingFailsTheRun) {
  NeuralRun run = sgd_rate_selection("[1e5, 1e6]");
  const Batch train = task_generate(*run.task, 5, 0, 200);
  FitLog log;
  testing::internal::CaptureStderr();
  try {
    run.model->fit(train, log);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("every learning rate of train.lrs diverged"),
              std::string::npos)
        << e.what();
  }
  testing::internal::GetCapturedStderr();
}

TEST(NeuralModel, DivergenceIsAClearError) {
  NeuralRun run("qsa", "mlp",
                {{"task.N", "4"}, {"task.q", "1"}, {"model.hidden", "[16]"},
                 {"train.optimizer", "sgd"}, {"train.lr", "1e5"}, {"train.steps", "200"},
                 {"train.val_n", "16"}, {"train.batch", "16"}});
  FitLog log;
  try {
    run.model->fit(Batch{}, log);
    FAIL() << "expected the fit to diverge";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("training diverged at step"), std::string::npos)
        << e.what();
  }
}

TEST(NeuralModel, MatchTasksTrainWithCrossEntropyAndPredictProbabilities) {
  NeuralRun run("match2", "attention",
                {{"task.N", "6"}, {"model.m", "4"}, {"model.phi_width", "8"},
                 {"train.steps", "10"}, {"train.batch", "16"}, {"train.val_n", "32"}});
  FitLog log;
  run.model->fit(Batch{}, log);
  double bce = -1;
  for (const auto& [k, v] : log.scalars) {
    if (k == "loss_is_bce") bce = v;
    // The scalars of a bce (or mse) run are the previous release's: no loss_is_<other name>.
    EXPECT_TRUE(k.rfind("loss_is_", 0) != 0 || k == "loss_is_bce") << k;
  }
  EXPECT_EQ(bce, 1.0);
  const Batch test = task_generate(*run.task, 5, 1000000000, 8);
  for (double p : run.model->predict(test)) {
    EXPECT_GT(p, 0.0);
    EXPECT_LT(p, 1.0);
  }
  const auto maps = run.model->attention(test);
  ASSERT_EQ(maps.size(), 1u);
  EXPECT_EQ(maps[0].shape, (std::vector<int64_t>{8, 1, 6, 6}));
  for (int64_t row = 0; row < 8 * 6; ++row) {
    double s = 0;
    for (int64_t j = 0; j < 6; ++j) s += maps[0].data[row * 6 + j];
    EXPECT_NEAR(s, 1.0, 1e-5);
  }
}

// A categorical toy for these tests: tokens over A symbols, X one-hot (N × A); the target at
// position t is token t − 1 (one-hot over A classes) and position 0 is ignored (all-zero row).
class ShiftTask final : public Task {
 public:
  ShiftTask(int64_t N, int64_t A) : A_(A) {
    shape_.T = shape_.T_out = N;
    shape_.d_in = shape_.d_out = A;
    shape_.target = TargetKind::categorical;
    shape_.raw.push_back({"tokens", {N}, true});
  }
  const TaskShape& shape() const override { return shape_; }
  void sample_range(uint64_t seed, int64_t first, int64_t count, Batch& out,
                    int64_t row) const override {
    for (int64_t s = 0; s < count; ++s) {
      Rng rng(seed, "test.shift", static_cast<uint64_t>(first + s));
      int64_t* tokens = out.raw_i64(0, row + s);
      for (int64_t t = 0; t < shape_.T; ++t) {
        tokens[t] = static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(A_)));
        out.x(row + s)[t * A_ + tokens[t]] = 1.0;
        if (t > 0) out.y(row + s)[t * A_ + tokens[t - 1]] = 1.0;
      }
    }
  }

 private:
  int64_t A_;
  TaskShape shape_;
};

TEST(NeuralModel, CategoricalTargetsTrainWithCrossEntropyAndPredictSoftmax) {
  const ShiftTask task(5, 3);
  const Params model_params = [] {
    Params p("model", model_find("mlp").schema());
    p.set_text("hidden", "[32]");
    return p;
  }();
  std::vector<ParamSpec> train = {param_int("n", 0, "", 0, 1e12)};
  for (auto& p : model_find("mlp").train_schema()) train.push_back(p);
  Params train_params("train", train);
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{{"steps", "300"},
                                                                             {"batch", "32"},
                                                                             {"lr", "0.01"},
                                                                             {"val_n", "64"},
                                                                             {"dtype", "float64"}})
    train_params.set_text(k, v);
  auto make = [&] {
    return model_find("mlp").make(
        ModelContext{model_params, train_params, task.shape(), 5, &task, 1000000000});
  };
  auto model = make();
  FitLog log;
  model->fit(Batch{}, log);
  std::map<std::string, double> scalars(log.scalars.begin(), log.scalars.end());
  EXPECT_EQ(scalars.at("loss_is_bce"), 0.0);
  EXPECT_EQ(scalars.at("loss_is_cross_entropy"), 1.0);  // the loss named where 0 was ambiguous
  std::vector<double> val_loss;
  for (const auto& p : log.points)
    if (p.series == "val_loss") val_loss.push_back(p.value);
  ASSERT_GE(val_loss.size(), 1u);
  // An untrained network's cross-entropy over 3 classes is about log 3 ≈ 1.1.
  EXPECT_LT(val_loss.back(), 0.1) << "cross-entropy did not fall";

  const Batch test = task_generate(task, 5, 1000000000, 200);
  const std::vector<double> pred = model->predict(test);
  for (int64_t r = 0; r < test.n * 5; ++r) {  // a probability row per position
    double sum = 0;
    for (int64_t k = 0; k < 3; ++k) {
      EXPECT_GT(pred[r * 3 + k], 0.0);
      sum += pred[r * 3 + k];
    }
    EXPECT_NEAR(sum, 1.0, 1e-12);
  }
  std::vector<std::pair<std::string, double>> se;
  const auto metrics = metrics_compute(test, pred, &se);
  const std::map<std::string, double> m(metrics.begin(), metrics.end());
  EXPECT_GT(m.at("token_accuracy"), 0.95);
  EXPECT_DOUBLE_EQ(m.at("token_error"), 1.0 - m.at("token_accuracy"));
  EXPECT_GT(m.at("exact_match"), 0.8);

  // Saved and loaded: the loss by name, the same probabilities.
  ModelTensors saved;
  saved.model = "mlp";
  model->save(saved);
  EXPECT_NE(saved.find("meta.loss.cross_entropy"), nullptr);
  auto loaded = make();
  loaded->load(saved);
  EXPECT_EQ(loaded->predict(test), pred);
}

TEST(Trainer, CrossEntropyIsAMeanOverLabelledPositionsWhateverTheChunks) {
  // Positions ignored unevenly across samples: weighting chunks by rows would change the mean.
  TaskShape shape;
  shape.T = shape.T_out = 3;
  shape.d_in = shape.d_out = 4;
  auto net = neural_net_make<double>("mlp", neural_default_params("mlp"), shape);
  net->init(2);
  TrainSet<double> data;
  data.n = 9;
  data.x_size = data.y_size = 12;
  Rng rng(4, "test.ce_chunks", 0);
  for (int64_t j = 0; j < data.n; ++j)
    for (int64_t t = 0; t < 3; ++t) {
      const auto c = static_cast<int64_t>(rng.uniform_int(4));
      for (int64_t k = 0; k < 4; ++k) {
        data.X.push_back(rng.uniform());
        data.Y.push_back(k == c && (j % 3 == 0 || t == 0) ? 1.0 : 0.0);  // 1 or 3 labelled
      }
    }
  const LossSpec ce{Loss::cross_entropy, 4};
  std::vector<double> pred(static_cast<size_t>(data.n * 12));
  net->forward(data.X.data(), data.n, pred.data());
  const double whole = loss_forward(ce, pred.data(), data.Y.data(), data.n * 12);
  for (int64_t eval_batch : {1, 2, 4, 9, 100})
    EXPECT_NEAR(trainer_loss(*net, ce, data, eval_batch), whole, 1e-14) << eval_batch;
}

TEST(NeuralModel, SaveThenLoadPredictsTheSame) {
  for (const NeuralKindInfo& kind : neural_kinds()) {  // every gradient-trained model
    const std::string model = kind.name;
    const std::vector<std::pair<std::string, std::string>> sets = {
        {"task.N", "4"}, {"task.q", "1"}, {"task.d_out", "2"}, {"train.steps", "3"},
        {"train.batch", "8"}, {"train.val_n", "8"}};
    NeuralRun a("qsa", model, sets), b("qsa", model, sets, /*seed=*/99);
    FitLog log;
    a.model->fit(Batch{}, log);
    ModelTensors saved;
    saved.model = model;
    a.model->save(saved);
    b.model->load(saved);
    const Batch test = task_generate(*a.task, 5, 1000000000, 6);
    EXPECT_EQ(a.model->predict(test), b.model->predict(test)) << model;
  }
}

TEST(NeuralModel, BadSettingsAreUserErrors) {
  EXPECT_THROW(NeuralRun("qsa", "attention", {{"model.psi", "identity"}}), UserError);
  EXPECT_THROW(NeuralRun("qsa", "mlp", {{"model.hidden", "[2.5]"}}), UserError);
  NeuralRun small("qsa", "mlp", {{"train.n", "1"}});
  FitLog log;
  const Batch one = task_generate(*small.task, 5, 0, 1);
  EXPECT_THROW(small.model->fit(one, log), UserError);
}

TEST(GradcheckTable, EveryNeuralModelHasRows) {
  std::set<std::string> names;
  for (const auto& row : gradcheck_table()) names.insert(row.name.substr(0, row.name.find('/', 6)));
  for (const NeuralKindInfo& kind : neural_kinds())
    EXPECT_TRUE(names.count(std::string("model/") + kind.name)) << kind.name;
  for (const auto& info : model_registry())
    if (info.fresh_samples && !info.no_training) {  // every gradient-trained model
      EXPECT_TRUE(names.count("model/" + info.name)) << info.name;
    }
}

TEST(GradcheckTable, ModelRowsPass) {
  for (const auto& row : gradcheck_table()) {
    if (row.group != "model") continue;
    for (const auto& r : gradcheck_run(row, 1)) {
      EXPECT_TRUE(r.pass) << r.row << " " << r.tensor << ": max error " << r.max_error
                          << ", skipped " << r.skipped << " of " << r.probes + r.skipped;
      EXPECT_GT(r.probes, 0);
    }
  }
}

}  // namespace
}  // namespace attn
