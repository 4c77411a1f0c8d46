// Evaluation at another length than training (eval.N, experiment/eval_length.h): the run's test
// metrics and per-k series equal the trained model's, evaluated by hand on the test set drawn at
// eval.N with the same seed and indices; a causal model's copy at 2N predicts the first N
// positions of a 2N sequence exactly as the trained model predicts its N-prefix; models whose
// parameters depend on N are refused before anything runs with one line naming them; eval.N
// enters the run id only when set; a sweep over eval.N trains once per point and tests each.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "core/error.h"
#include "experiment/eval_length.h"
#include "experiment/plan.h"
#include "experiment/run_point.h"
#include "experiment/store.h"
#include "models/model_registry.h"
#include "spec_test_helpers.h"
#include "tasks/task.h"
#include "train/metrics.h"

namespace attn {
namespace {

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// text with `piece` replaced by `with` (the piece must occur).
std::string replaced(std::string text, const std::string& piece, const std::string& with = "") {
  const size_t at = text.find(piece);
  EXPECT_NE(at, std::string::npos) << piece;
  return at == std::string::npos ? text : text.replace(at, piece.size(), with);
}

// The [model] keys of kHopSpec that only the attention models have.
const char* kAttentionKeys = "m = 16\nlayers = 1\ncausal = true\npositions = \"sinusoidal\"\n";

using EvalLength = test::SpecFileTest;

// hop at N = 8, a causal transformer without learned positions, a fixed training set.
const char* kHopSpec = R"(
[experiment]
name = "evallen"
seeds = [3]
[task]
name = "hop"
N = 8
A = 3
k_max = 2
[model]
name = "transformer"
m = 16
layers = 1
causal = true
positions = "sinusoidal"
[train]
n = 128
steps = 40
batch = 32
[eval]
n = 96
first = 5000
)";

// qsa at N = 8 with `task_keys`, an attention model, evaluated at eval.N = eval_N.
std::string qsa_attention_spec(const std::string& task_keys, int64_t eval_N) {
  return "[task]\nname = \"qsa\"\nN = 8\n" + task_keys +
         "[model]\nname = \"attention\"\n[train]\nn = 0\nsteps = 5\n[eval]\nn = 10\nN = " +
         std::to_string(eval_N) + "\n";
}

// The trained model of a run point, fitted by hand as the run body does.
std::unique_ptr<Model> fit_by_hand(const RunPoint& p, TaskShape* train_shape) {
  const RunConfig& c = p.config;
  const auto task = task_make(c.task, c.task_params);
  *train_shape = task->shape();
  const Batch train = task_generate(*task, p.seed, 0, c.train_params.get_int("n"));
  auto model =
      model_find(c.model).make(ModelContext{c.model_params, c.train_params, task->shape(), p.seed,
                                            task.get(), c.eval_params.get_int("first")});
  FitLog log;
  model->fit(train, log);
  return model;
}

// The test set at N_eval, drawn by hand with the run's seed and indices.
Batch test_set_by_hand(const RunPoint& p, int64_t N_eval) {
  Params params = p.config.task_params;
  params.set("N", N_eval);
  return task_generate(*task_make(p.config.task, params), p.seed,
                       p.config.eval_params.get_int("first"), p.config.eval_params.get_int("n"));
}

// The copy at the test shapes, made by hand: the registry's model at those shapes, loaded with
// the trained parameters.
std::unique_ptr<Model> copy_by_hand(const Model& trained, const RunPoint& p, const TaskShape& from,
                                    const TaskShape& to) {
  ModelTensors tensors;
  tensors.model = p.config.model;
  tensors.shape = from;
  trained.save(tensors);
  tensors.shape = to;
  auto copy = model_find(p.config.model)
                  .make(ModelContext{p.config.model_params, p.config.train_params, to, p.seed});
  copy->load(tensors);
  return copy;
}

TEST_F(EvalLength, RunMetricsEqualTheTrainedModelEvaluatedByHandAtTwiceTheLength) {
  const RunPoint p = plan(std::string(kHopSpec) + "N = 16\n")[0];
  const RunOutcome run = run_point_execute(p);
  ASSERT_TRUE(run.ok) << run.error;
  std::map<std::string, double> metrics(run.metrics.begin(), run.metrics.end());
  EXPECT_EQ(metrics.at("test_samples"), 96);

  TaskShape train_shape;
  const auto trained = fit_by_hand(p, &train_shape);
  const Batch test = test_set_by_hand(p, 16);
  ASSERT_EQ(test.shape.T, 16);
  ASSERT_EQ(train_shape.T, 8);
  const auto copy = copy_by_hand(*trained, p, train_shape, test.shape);
  const std::vector<double> pred = copy->predict(test);
  std::vector<std::pair<std::string, double>> se;
  const auto by_hand = metrics_compute(test, pred, &se);
  ASSERT_FALSE(by_hand.empty());
  for (const auto& [name, value] : by_hand) EXPECT_EQ(metrics.at("test_" + name), value) << name;
  for (const auto& [name, value] : se) EXPECT_EQ(metrics.at("test_" + name), value) << name;
  // The per-k series too (hop's metric slices by k).
  std::map<std::pair<std::string, int64_t>, double> series;
  for (const auto& point : run.series) series[{point.series, point.step}] = point.value;
  const auto slices = metrics_compute_slices(test, pred);
  ASSERT_FALSE(slices.empty());
  for (const auto& s : slices) {
    const auto it = series.find({"test_" + s.series, s.step});
    ASSERT_NE(it, series.end()) << s.series << " " << s.step;
    EXPECT_EQ(it->second, s.value) << s.series << " " << s.step;
  }
  // Not the metrics of the test set at the task's own length.
  const RunOutcome own = run_point_execute(plan(kHopSpec)[0]);
  ASSERT_TRUE(own.ok) << own.error;
  std::map<std::string, double> own_metrics(own.metrics.begin(), own.metrics.end());
  EXPECT_NE(own_metrics.at("test_token_error"), metrics.at("test_token_error"));
  EXPECT_EQ(own_metrics.at("val_loss"), metrics.at("val_loss"));  // the same training
}

// An independent check of the copy: a causal model's outputs at positions < N depend only on the
// first N tokens, so the copy at 2N predicts them as the trained model predicts the N-prefix.
TEST_F(EvalLength, CausalCopyAtTwiceTheLengthAgreesWithTheTrainedModelOnThePrefix) {
  for (const char* positions : {"none", "sinusoidal", "random"})
    for (const char* model : {"transformer", "attention"}) {
      std::string spec = replaced(kHopSpec, "\"sinusoidal\"", std::string("\"") + positions + "\"");
      spec = replaced(replaced(spec, "\"transformer\"", std::string("\"") + model + "\""),
                      "layers = 1\n");
      const RunPoint p = plan(spec + "N = 16\n")[0];
      const std::string at = std::string(model) + " positions=" + positions;
      TaskShape train_shape;
      const auto trained = fit_by_hand(p, &train_shape);
      const Batch test = test_set_by_hand(p, 16);
      const auto copy = copy_by_hand(*trained, p, train_shape, test.shape);
      const std::vector<double> long_pred = copy->predict(test);
      Batch prefix;
      prefix.n = test.n;
      prefix.shape = train_shape;
      const int64_t N = 8, d_in = test.shape.d_in, d_out = test.shape.d_out;
      for (int64_t b = 0; b < test.n; ++b)
        prefix.X.insert(prefix.X.end(), test.x(b), test.x(b) + N * d_in);
      prefix.Y.assign(static_cast<size_t>(test.n * N * d_out), 0.0);
      const std::vector<double> short_pred = trained->predict(prefix);
      double worst = 0;
      for (int64_t b = 0; b < test.n; ++b)
        for (int64_t e = 0; e < N * d_out; ++e)
          worst = std::max(
              worst, std::abs(short_pred[b * N * d_out + e] - long_pred[b * 2 * N * d_out + e]));
      EXPECT_LT(worst, 1e-5) << at;
    }
}

TEST_F(EvalLength, ModelsWhoseParametersDependOnNAreRefusedWithOneLine) {
  const std::string base = std::string(kHopSpec) + "N = 16\n";
  // Learned positions: a table of N rows.
  std::string e = error(base, {"model.positions=learned"});
  EXPECT_TRUE(contains(e, "eval.N = 16") && contains(e, "model transformer") &&
              contains(e, "'pos' has shape (8, 16) at N = 8 and (16, 16) at N = 16"))
      << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  // mlp over the flattened sequence.
  const std::string mlp = replaced(base, kAttentionKeys);
  e = error(mlp, {"model.name=mlp"});
  EXPECT_TRUE(contains(e, "eval.N = 16") && contains(e, "model mlp") &&
              contains(e, "its parameters depend on N"))
      << e;
  // Models whose parameters exist only after a fit: refused too (they cannot be checked).
  const std::string fitted = replaced(mlp, "steps = 40\nbatch = 32\n");
  for (const char* name : {"linear", "mean"}) {
    e = error(fitted, {std::string("model.name=") + name});
    EXPECT_TRUE(contains(e, "eval.N = 16") && contains(e, std::string("model ") + name) &&
                contains(e, "only after a fit"))
        << e;
  }
  // A task whose token width changes with N (qsa's multi-hot positions).
  e = error(qsa_attention_spec("q = 2\n", 16));
  EXPECT_TRUE(contains(e, "eval.N = 16") && contains(e, "task qsa's token widths change with N"))
      << e;
  // The test set's own rules (qsa: q < N), checked at eval.N.
  e = error(qsa_attention_spec("q = 3\nencoding = \"indices\"\n", 3));
  EXPECT_TRUE(contains(e, "eval.N = 3")) << e;
}

TEST_F(EvalLength, ModelsWithoutNSizedParametersAreAccepted) {
  const std::string base = std::string(kHopSpec) + "N = 16\n";
  for (const char* positions : {"none", "sinusoidal", "random", "random_resampled"})
    for (const char* model : {"attention", "third_order", "transformer"})
      EXPECT_EQ(
          error(std::string(model) == "transformer" ? base : replaced(base, "layers = 1\n"),
                {std::string("model.name=") + model, std::string("model.positions=") + positions}),
          "")
          << model << " " << positions;
  EXPECT_EQ(error(replaced(base, kAttentionKeys), {"model.name=lstm"}), "");
  // Shorter than training too.
  EXPECT_EQ(error(std::string(kHopSpec) + "N = 4\n"), "");
}

TEST_F(EvalLength, RunIdsChangeOnlyWhenEvalNIsSet) {
  const RunPoint plain = plan(kHopSpec)[0];
  EXPECT_TRUE(contains(plain.config_json, "\"eval\": {\"n\": 96, \"first\": 5000}"))
      << plain.config_json;
  EXPECT_EQ(eval_length(plain.config), 0);
  EXPECT_EQ(plan(std::string(kHopSpec) + "N = 0\n")[0].run_id, plain.run_id);
  const RunPoint longer = plan(std::string(kHopSpec) + "N = 16\n")[0];
  EXPECT_NE(longer.run_id, plain.run_id);
  EXPECT_TRUE(contains(longer.config_json, "\"eval\": {\"n\": 96, \"first\": 5000, \"N\": 16}"))
      << longer.config_json;
  EXPECT_EQ(eval_task_params(longer.config).get_int("N"), 16);
  EXPECT_EQ(eval_task_params(plain.config).get_int("N"), 8);
  EXPECT_EQ(longer.config.task_params.get_int("N"), 8);  // training stays at the task's N
}

TEST_F(EvalLength, SweepOverTheEvalLengthTrainsAlikeAndTestsAtEachLength) {
  const std::string spec = write(std::string(kHopSpec) + "[sweep]\n\"eval.N\" = [0, 12, 16]\n");
  const auto r = test::cli_run("run " + spec + " --out " + path("out") + " -q");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::map<std::string, std::map<std::string, double>> by_length;
  for (const auto& run : ResultsStore(path("out") + "/results.sqlite").load_runs()) {
    ASSERT_EQ(run.status, "ok") << run.error;
    const std::string length = run.param("eval.N");
    for (const auto& [name, value] : run.metrics) by_length[length][name] = value;
  }
  ASSERT_EQ(by_length.size(), 3u);
  for (const char* length : {"12", "16"}) {
    EXPECT_EQ(by_length.at(length).at("val_loss"), by_length.at("0").at("val_loss")) << length;
    EXPECT_NE(by_length.at(length).at("test_token_error"), by_length.at("0").at("test_token_error"))
        << length;
  }
  EXPECT_TRUE(contains(test::file_read(path("out") + "/results.csv"), "eval.N"));
}

}  // namespace
}  // namespace attn
