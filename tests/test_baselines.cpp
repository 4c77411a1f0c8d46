// Baseline models: the registry, the mean model against a hand computation, and the ridge
// (linear) model against a second solver (Householder QR of the augmented least-squares
// problem in long double), primal against dual, planted solutions, the λ = 0 minimum-norm
// interpolant, user errors, and real task data (rf_target keys_power p = 1, qsa).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "models/baselines.h"
#include "models/model_registry.h"
#include "tasks/task.h"
#include "train/metrics.h"

namespace attn {
namespace {

using Sets = std::vector<std::pair<std::string, std::string>>;

Batch batch_random(int64_t n, int64_t T, int64_t d_in, int64_t T_out, int64_t d_out,
                   uint64_t seed) {
  Batch b;
  b.n = n;
  b.shape.T = T;
  b.shape.d_in = d_in;
  b.shape.T_out = T_out;
  b.shape.d_out = d_out;
  b.X.resize(static_cast<size_t>(n * T * d_in));
  b.Y.resize(static_cast<size_t>(n * T_out * d_out));
  for (int64_t j = 0; j < n; ++j) {
    Rng rng(seed, "test.baselines", static_cast<uint64_t>(j));
    rng_gaussian(rng, b.x(j), b.shape.x_size());
    rng_gaussian(rng, b.y(j), b.shape.y_size());
    for (int64_t k = 0; k < b.shape.x_size(); ++k) b.x(j)[k] += 0.3;  // a non-zero mean
  }
  return b;
}

// Targets y = x A + c exactly (x the flattened input), A P × K and c K with fixed entries.
void plant_linear(Batch& b) {
  const int64_t P = b.shape.x_size(), K = b.shape.y_size();
  for (int64_t j = 0; j < b.n; ++j)
    for (int64_t k = 0; k < K; ++k) {
      double s = 0.5 - 0.25 * static_cast<double>(k);
      for (int64_t p = 0; p < P; ++p) s += b.x(j)[p] * std::sin(1.0 + 0.7 * p + 1.3 * k);
      b.y(j)[k] = s;
    }
}

struct Fitted {
  std::unique_ptr<Model> model;
  FitLog log;
};

Fitted fit_model(const std::string& name, const Sets& sets, const Batch& train) {
  const ModelInfo& info = model_find(name);
  Params model("model", info.schema());
  for (const auto& [k, v] : sets) model.set_text(k, v);
  std::vector<ParamSpec> train_schema = {param_int("n", 1, "training samples", 1)};
  for (auto& spec : info.train_schema()) train_schema.push_back(spec);
  Params train_params("train", train_schema);
  train_params.set("n", train.n);
  const ModelContext context{model, train_params, train.shape, 7};
  Fitted out;
  out.model = info.make(context);
  out.model->fit(train, out.log);
  return out;
}

std::vector<double> fit_predict(const std::string& name, const Sets& sets, const Batch& train,
                                const Batch& test) {
  return fit_model(name, sets, train).model->predict(test);
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t k = 0; k < a.size(); ++k) m = std::max(m, std::abs(a[k] - b[k]));
  return m;
}

double max_abs(const std::vector<double>& a) {
  double m = 0;
  for (double v : a) m = std::max(m, std::abs(v));
  return m;
}

std::map<std::string, double> metrics(const Batch& data, const std::vector<double>& f) {
  const auto m = metrics_compute(data, f);
  return {m.begin(), m.end()};
}

// Second solver: ridge predictions on `test` from the minimiser of
// ‖Yc − Xc W‖² + nλ‖W‖² (the model's objective times n), by Householder QR of the
// augmented problem [Xc; √(nλ) I] W = [Yc; 0], all in long double. Needs full column rank
// (λ > 0, or n > P with generic data).
std::vector<double> ridge_reference(const Batch& train, const Batch& test, double lambda) {
  using LD = long double;
  const int64_t n = train.n, P = train.shape.x_size(), K = train.shape.y_size(), m = n + P;
  std::vector<LD> x_mean(P, 0), y_mean(K, 0);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t p = 0; p < P; ++p) x_mean[p] += train.x(j)[p];
    for (int64_t k = 0; k < K; ++k) y_mean[k] += train.y(j)[k];
  }
  for (auto& v : x_mean) v /= n;
  for (auto& v : y_mean) v /= n;
  std::vector<LD> A(m * P, 0), B(m * K, 0);  // row-major
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t p = 0; p < P; ++p) A[j * P + p] = train.x(j)[p] - x_mean[p];
    for (int64_t k = 0; k < K; ++k) B[j * K + k] = train.y(j)[k] - y_mean[k];
  }
  const LD root = std::sqrt(static_cast<LD>(n) * lambda);
  for (int64_t p = 0; p < P; ++p) A[(n + p) * P + p] = root;
  std::vector<LD> v(m);
  for (int64_t c = 0; c < P; ++c) {
    LD norm2 = 0;
    for (int64_t i = c; i < m; ++i) norm2 += A[i * P + c] * A[i * P + c];
    const LD norm = std::sqrt(norm2);
    const LD alpha = A[c * P + c] > 0 ? -norm : norm;
    LD v2 = 0;
    for (int64_t i = c; i < m; ++i) {
      v[i] = A[i * P + c] - (i == c ? alpha : 0);
      v2 += v[i] * v[i];
    }
    if (v2 == 0) continue;
    auto reflect = [&](std::vector<LD>& M, int64_t cols, int64_t col) {
      LD s = 0;
      for (int64_t i = c; i < m; ++i) s += v[i] * M[i * cols + col];
      s = 2 * s / v2;
      for (int64_t i = c; i < m; ++i) M[i * cols + col] -= s * v[i];
    };
    for (int64_t col = c; col < P; ++col) reflect(A, P, col);
    for (int64_t col = 0; col < K; ++col) reflect(B, K, col);
  }
  std::vector<LD> W(P * K);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t r = P - 1; r >= 0; --r) {
      LD s = B[r * K + k];
      for (int64_t c = r + 1; c < P; ++c) s -= A[r * P + c] * W[c * K + k];
      W[r * K + k] = s / A[r * P + r];
    }
  std::vector<double> out(static_cast<size_t>(test.n * K));
  for (int64_t j = 0; j < test.n; ++j)
    for (int64_t k = 0; k < K; ++k) {
      LD s = y_mean[k];
      for (int64_t p = 0; p < P; ++p) s += (test.x(j)[p] - x_mean[p]) * W[p * K + k];
      out[j * K + k] = static_cast<double>(s);
    }
  return out;
}

// ---------------------------------------------------------------- registry and mean

TEST(Baseline, RegistryHasMeanAndLinear) {
  std::vector<std::string> names;
  for (const auto& info : model_registry()) {
    names.push_back(info.name);
    EXPECT_FALSE(info.description.empty()) << info.name;
    EXPECT_NE(info.schema, nullptr);
    EXPECT_NE(info.train_schema, nullptr);
    EXPECT_NE(info.make, nullptr);
  }
  ASSERT_GE(names.size(), 2u);
  EXPECT_EQ(names[0], "mean");
  EXPECT_EQ(names[1], "linear");
  EXPECT_EQ(&model_find("linear"), &model_registry()[1]);
  EXPECT_TRUE(model_find("mean").schema().empty());
  EXPECT_TRUE(model_find("mean").train_schema().empty());
  EXPECT_TRUE(model_find("linear").train_schema().empty());
}

TEST(Baseline, UnknownModelSuggestsAndLists) {
  try {
    model_find("lineer");
    FAIL() << "no error";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("unknown model 'lineer'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("did you mean 'linear'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("mean, linear"), std::string::npos) << msg;
  }
}

TEST(Baseline, MeanModelPredictsTheTrainingMeans) {
  Batch train = batch_random(3, 2, 1, 2, 2, 1);
  train.Y = {1, 2, 3, 4, /**/ 0, 0, 0, 10, /**/ -1, 1, 6, 1};
  const Batch test = batch_random(2, 2, 1, 2, 2, 2);
  Fitted fitted = fit_model("mean", {}, train);
  const std::vector<double> expected = {0, 1, 3, 5, /**/ 0, 1, 3, 5};
  EXPECT_EQ(fitted.model->predict(test), expected);
  ASSERT_EQ(fitted.log.scalars.size(), 2u);
  EXPECT_EQ(fitted.log.scalars[0].first, "param_count");
  EXPECT_EQ(fitted.log.scalars[0].second, 4.0);
  EXPECT_EQ(fitted.log.scalars[1], (std::pair<std::string, double>{"n_params", 4.0}));
}

TEST(Baseline, PredictBeforeFitOrOnOtherShapesIsAUserError) {
  const Batch train = batch_random(5, 2, 3, 1, 2, 3);
  const Batch other = batch_random(5, 2, 3, 1, 3, 4);
  for (const char* name : {"mean", "linear"}) {
    const ModelInfo& info = model_find(name);
    const Params model("model", info.schema()), train_params("train", info.train_schema());
    const auto fresh = info.make({model, train_params, train.shape, 1});
    EXPECT_THROW(fresh->predict(train), UserError) << name;
    const Fitted fitted = fit_model(name, {}, train);
    EXPECT_THROW(fitted.model->predict(other), UserError) << name;
  }
}

// ---------------------------------------------------------------- linear (ridge)

TEST(LinearModel, MatchesTheAugmentedQrReference) {
  struct Case {
    int64_t n, T, d_in;
  };
  for (const Case c : {Case{60, 2, 5}, Case{20, 3, 10}}) {  // n > P and n < P
    const Batch train = batch_random(c.n, c.T, c.d_in, 2, 2, 10);
    const Batch test = batch_random(15, c.T, c.d_in, 2, 2, 11);
    for (const char* lambda : {"1e-3", "0.5"}) {
      const std::vector<double> ref = ridge_reference(train, test, std::stod(lambda));
      for (const char* solver : {"auto", "primal", "dual"}) {
        const auto f = fit_predict("linear", {{"lambda", lambda}, {"solver", solver}}, train, test);
        EXPECT_LT(max_abs_diff(f, ref), 1e-10 * std::max(1.0, max_abs(ref)))
            << "n=" << c.n << " P=" << c.T * c.d_in << " lambda=" << lambda << " " << solver;
      }
    }
  }
}

TEST(LinearModel, PrimalAndDualAgree) {
  struct Case {
    int64_t n, T, d_in;
  };
  for (const Case c : {Case{30, 4, 20}, Case{120, 3, 8}}) {  // n < P = 80, n > P = 24
    const Batch train = batch_random(c.n, c.T, c.d_in, 3, 1, 20);
    const Batch test = batch_random(25, c.T, c.d_in, 3, 1, 21);
    for (const char* lambda : {"0", "1e-8", "1e-3", "0.1", "10"}) {
      const auto primal =
          fit_predict("linear", {{"lambda", lambda}, {"solver", "primal"}}, train, test);
      const auto dual =
          fit_predict("linear", {{"lambda", lambda}, {"solver", "dual"}}, train, test);
      // The larger of the two systems is singular up to λ, so it loses about eps/λ digits;
      // λ = 0 takes the minimum-norm (pseudo-inverse) path in both forms.
      const double l = std::stod(lambda);
      const double tol = l > 0 ? 1e-9 + 2e-14 / l : 1e-8;
      EXPECT_LT(max_abs_diff(primal, dual), tol * std::max(1.0, max_abs(primal)))
          << "n=" << c.n << " P=" << c.T * c.d_in << " lambda=" << lambda;
    }
  }
}

TEST(LinearModel, RecoversAPlantedLinearTargetAsLambdaGoesToZero) {
  Batch train = batch_random(200, 3, 4, 2, 3, 30);  // P = 12, K = 6
  Batch test = batch_random(50, 3, 4, 2, 3, 31);
  plant_linear(train);
  plant_linear(test);
  for (const char* lambda : {"0", "1e-13"}) {
    for (const char* solver : {"auto", "primal", "dual"}) {
      const auto f = fit_predict("linear", {{"lambda", lambda}, {"solver", solver}}, train, test);
      EXPECT_LT(max_abs_diff(f, test.Y), 1e-10 * max_abs(test.Y)) << lambda << " " << solver;
    }
  }
  // The default λ = 1e-3 shrinks a little, but not much.
  const auto f = fit_predict("linear", {}, train, test);
  EXPECT_LT(metrics(test, f).at("nmse"), 1e-4);
}

TEST(LinearModel, ZeroLambdaWithFewSamplesIsTheMinimumNormInterpolant) {
  const int64_t n = 25, T = 3, d_in = 20, P = T * d_in;  // n < P
  const Batch train = batch_random(n, T, d_in, 1, 3, 40);
  // Test inputs x̄ + v with v orthogonal to every centred training input: the minimum-norm
  // solution W lies in the span of the centred inputs, so it predicts ȳ there exactly.
  std::vector<std::vector<long double>> basis;
  std::vector<long double> x_mean(P, 0), y_mean(3, 0);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t p = 0; p < P; ++p) x_mean[p] += train.x(j)[p] / static_cast<long double>(n);
    for (int64_t k = 0; k < 3; ++k) y_mean[k] += train.y(j)[k] / static_cast<long double>(n);
  }
  auto orthogonalise = [&](std::vector<long double>& v) {
    for (int pass = 0; pass < 2; ++pass)
      for (const auto& q : basis) {
        long double dot = 0;
        for (int64_t p = 0; p < P; ++p) dot += q[p] * v[p];
        for (int64_t p = 0; p < P; ++p) v[p] -= dot * q[p];
      }
  };
  for (int64_t j = 0; j < n; ++j) {
    std::vector<long double> v(P);
    for (int64_t p = 0; p < P; ++p) v[p] = train.x(j)[p] - x_mean[p];
    orthogonalise(v);
    long double norm = 0;
    for (auto e : v) norm += e * e;
    norm = std::sqrt(norm);
    if (norm < 1e-9L) continue;  // the centred inputs span n - 1 dimensions
    for (auto& e : v) e /= norm;
    basis.push_back(v);
  }
  Batch off = batch_random(10, T, d_in, 1, 3, 41);
  for (int64_t j = 0; j < off.n; ++j) {
    std::vector<long double> v(off.x(j), off.x(j) + P);
    orthogonalise(v);
    for (int64_t p = 0; p < P; ++p) off.x(j)[p] = static_cast<double>(x_mean[p] + v[p]);
  }
  const Batch test = batch_random(10, T, d_in, 1, 3, 42);
  const std::vector<double> ridge_limit = ridge_reference(train, test, 1e-12);

  for (const char* solver : {"auto", "primal", "dual"}) {
    Fitted fitted = fit_model("linear", {{"lambda", "0"}, {"solver", solver}}, train);
    EXPECT_LT(max_abs_diff(fitted.model->predict(train), train.Y), 1e-9) << solver;
    const auto f_off = fitted.model->predict(off);
    for (int64_t j = 0; j < off.n; ++j)
      for (int64_t k = 0; k < 3; ++k)
        EXPECT_NEAR(f_off[j * 3 + k], static_cast<double>(y_mean[k]), 1e-9) << solver;
    // ... and it is the λ -> 0 limit of ridge.
    EXPECT_LT(max_abs_diff(fitted.model->predict(test), ridge_limit), 1e-7) << solver;
  }
}

TEST(LinearModel, InvalidLambdaOrSolverIsAUserError) {
  Params model("model", linear_schema());
  try {
    model.set_text("lambda", "-1");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("model.lambda"), std::string::npos) << e.what();
  }
  EXPECT_THROW(model.set_text("lambda", "nan"), UserError);
  EXPECT_THROW(model.set_text("lambda", "inf"), UserError);
  EXPECT_THROW(model.set_text("lambda", "abc"), UserError);
  EXPECT_THROW(model.set_text("solver", "qr"), UserError);
  EXPECT_NO_THROW(model.set_text("lambda", "0"));
  EXPECT_DOUBLE_EQ(Params("model", linear_schema()).get_real("lambda"), 1e-3);
}

TEST(LinearModel, LogsTheParameterCount) {
  const Batch train = batch_random(10, 3, 4, 2, 5, 50);  // P = 12, K = 10
  const Fitted fitted = fit_model("linear", {}, train);
  ASSERT_EQ(fitted.log.scalars.size(), 2u);
  EXPECT_EQ(fitted.log.scalars[0].first, "param_count");
  EXPECT_EQ(fitted.log.scalars[0].second, 12.0 * 10.0 + 10.0);
  // n_params, every model's count under one name (the selection's budget): the same here.
  EXPECT_EQ(fitted.log.scalars[1],
            (std::pair<std::string, double>{"n_params", 12.0 * 10.0 + 10.0}));
}

TEST(LinearModel, ImpossibleSizeIsAUserErrorBeforeAllocating) {
  // n = P = 2^22: the Gram alone would take 3 · 2^44 · 8 bytes.
  TaskShape shape;
  shape.T = 1 << 11;
  shape.d_in = 1 << 11;
  shape.T_out = shape.d_out = 1;
  Params model("model", linear_schema());
  Params train("train", {param_int("n", 1, "training samples", 1)});
  train.set("n", int64_t{1} << 22);
  try {
    linear_make({model, train, shape, 1});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("train.n"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------- on task data

Batch task_batch(const std::string& task, const Sets& sets, int64_t first, int64_t n) {
  Params p = task_default_params(task);
  for (const auto& [k, v] : sets) p.set_text(k, v);
  return task_generate(*task_make(task, p), 5, first, n);
}

TEST(LinearModel, BeatsMeanWidelyOnALinearRfTarget) {
  // keys_power with p = 1: y = (1/N) Σ_i √d <β, x_i>, exactly linear in the keys.
  const Sets sets = {{"target", "keys_power"}, {"p", "1"}};
  const Batch train = task_batch("rf_target", sets, 0, 400);
  const Batch test = task_batch("rf_target", sets, 400, 300);
  const auto linear = metrics(test, fit_predict("linear", {}, train, test));
  const auto mean = metrics(test, fit_predict("mean", {}, train, test));
  EXPECT_GT(mean.at("nmse"), 0.9);
  EXPECT_LT(linear.at("nmse"), 1e-2);
  EXPECT_LT(linear.at("mse"), 1e-2 * mean.at("mse"));
}

TEST(LinearModel, IsClearlyImperfectOnQsa) {
  // qSA is bilinear in (z, set indicators): no linear map of the sequence computes it.
  const Batch train = task_batch("qsa", {}, 0, 400);
  const Batch test = task_batch("qsa", {}, 400, 200);
  const auto linear = metrics(test, fit_predict("linear", {}, train, test));
  const auto mean = metrics(test, fit_predict("mean", {}, train, test));
  EXPECT_GT(linear.at("nmse"), 0.5);
  EXPECT_GT(linear.at("mean_max_pos_err"), 0.5);
  EXPECT_GT(mean.at("nmse"), 0.9);
}

}  // namespace
}  // namespace attn
