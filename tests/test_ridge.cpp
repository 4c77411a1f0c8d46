// Ridge over a λ grid: primal against dual, against a direct solve in long double, planted
// solutions, validation choice against brute force, minimum norm, kernels, refit.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/error.h"
#include "core/rng.h"
#include "mpi/comm.h"
#include "thread_comm.h"
#include "train/metrics.h"
#include "train/ridge.h"
#include "train/ridge_state.h"

namespace attn {
namespace {

using LMat = Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic>;

// Features: the flattened sample itself, then its squares (P = 2·x_size).
class TestFeatures final : public FeatureMap {
 public:
  explicit TestFeatures(int64_t x_size) : x_size_(x_size) {}
  int64_t dim() const override { return 2 * x_size_; }
  void features(const double* X, int64_t count, double* Phi) const override {
    for (int64_t s = 0; s < count; ++s)
      for (int64_t k = 0; k < x_size_; ++k) {
        const double v = X[s * x_size_ + k];
        Phi[s * dim() + k] = v;
        Phi[s * dim() + x_size_ + k] = v * v;
      }
  }

 private:
  int64_t x_size_;
};

// The kernel of TestFeatures: k(x, x') = <φ(x), φ(x')>.
class TestKernel final : public KernelFunction {
 public:
  explicit TestKernel(int64_t x_size) : f_(x_size), x_size_(x_size) {}
  void kernel(const double* Xa, int64_t na, const double* Xb, int64_t nb,
              double* K) const override {
    std::vector<double> a(na * f_.dim()), b(nb * f_.dim());
    f_.features(Xa, na, a.data());
    f_.features(Xb, nb, b.data());
    for (int64_t i = 0; i < na; ++i)
      for (int64_t j = 0; j < nb; ++j) {
        double s = 0;
        for (int64_t k = 0; k < f_.dim(); ++k) s += a[i * f_.dim() + k] * b[j * f_.dim() + k];
        K[i * nb + j] = s;
      }
  }

 private:
  TestFeatures f_;
  int64_t x_size_;
};

// n samples of T = 2 tokens × d = 3; targets y = <v*, φ(x)> + noise, one output.
Batch make_batch(int64_t n, uint64_t seed, double noise, const std::vector<double>& v_star) {
  TaskShape shape;
  shape.T = 2;
  shape.d_in = 3;
  shape.T_out = 1;
  shape.d_out = 1;
  Batch b;
  b.n = n;
  b.shape = shape;
  b.X.resize(n * 6);
  b.Y.resize(n);
  Rng rng(seed, "test.ridge", 0);
  TestFeatures f(6);
  std::vector<double> phi(12);
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < 6; ++k) b.X[i * 6 + k] = rng.gaussian();
    f.features(b.x(i), 1, phi.data());
    double y = 0.3;
    for (int k = 0; k < 12; ++k) y += v_star[k] * phi[k];
    b.Y[i] = y + noise * rng.gaussian();
  }
  return b;
}

std::vector<double> planted() {
  return {1.0, -0.5, 0.2, 0.0, 0.7, -1.2, 0.1, 0.0, -0.3, 0.4, 0.05, 0.6};
}

RidgeOptions one_lambda(double lambda, const std::string& solver = "auto") {
  RidgeOptions o;
  o.lambdas = {lambda};
  o.val_fraction = 0;
  o.solver = choice_parse(solver, kRidgeForms, "train.solver");
  o.block = 7;  // blocks that do not divide n
  return o;
}

// Direct solve of the definition in long double: V = (ΦᵀΦ/n + λI)⁻¹ Φᵀ(y − ȳ)/n.
std::vector<double> direct_predictions(const Batch& train, const Batch& test, double lambda) {
  TestFeatures f(6);
  const int64_t n = train.n, P = f.dim();
  std::vector<double> phi(n * P);
  f.features(train.x(0), n, phi.data());
  long double ybar = 0;
  for (int64_t i = 0; i < n; ++i) ybar += train.Y[i] / n;
  LMat G = LMat::Zero(P, P), b = LMat::Zero(P, 1);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t a = 0; a < P; ++a) {
      b(a, 0) += phi[i * P + a] * (train.Y[i] - ybar) / n;
      for (int64_t c = 0; c < P; ++c) G(a, c) += phi[i * P + a] * phi[i * P + c] / n;
    }
  for (int64_t a = 0; a < P; ++a) G(a, a) += lambda;
  const LMat V = G.fullPivLu().solve(b);
  std::vector<double> out(test.n), tphi(P);
  for (int64_t i = 0; i < test.n; ++i) {
    f.features(test.x(i), 1, tphi.data());
    long double p = ybar;
    for (int64_t a = 0; a < P; ++a) p += V(a, 0) * tphi[a];
    out[i] = static_cast<double>(p);
  }
  return out;
}

double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double scale = 1e-300, diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    scale = std::max(scale, std::abs(b[i]));
    diff = std::max(diff, std::abs(a[i] - b[i]));
  }
  return diff / scale;
}

TEST(Ridge, PrimalDualAndDirectSolveAgree) {
  for (int64_t n : {8, 40}) {  // n < P = 12 and n > P
    const Batch train = make_batch(n, 1, 0.1, planted()), test = make_batch(30, 2, 0.1, planted());
    for (double lambda : {1e-3, 0.1, 3.0}) {
      const auto direct = direct_predictions(train, test, lambda);
      for (const char* solver : {"primal", "dual"}) {
        RidgeSolver m(std::make_unique<TestFeatures>(6), one_lambda(lambda, solver));
        FitLog log;
        m.fit(train, log);
        EXPECT_LT(max_rel_diff(m.predict(test), direct), 1e-9)
            << "n=" << n << " λ=" << lambda << " " << solver;
      }
      RidgeSolver k(std::make_unique<TestKernel>(6), one_lambda(lambda));
      FitLog log;
      k.fit(train, log);
      EXPECT_LT(max_rel_diff(k.predict(test), direct), 1e-9) << "kernel n=" << n << " λ=" << lambda;
    }
  }
}

TEST(Ridge, DualWithRecomputedFeaturesEqualsStoredFeatures) {
  // train.dual_features = recompute keeps no n × P feature matrix: the kernel is built from
  // tiles (7 samples, not dividing n, feature blocks of 3; and tiles sized from the memory
  // budget, with the default block of 512 samples above n) and the read-outs from one more pass.
  // Same predictions, validation losses, test path and refit as storing Φ, to rounding.
  const Batch train = make_batch(50, 21, 0.3, planted()), test = make_batch(30, 22, 0.3, planted());
  for (bool refit : {false, true}) {
    std::vector<std::vector<double>> preds;
    std::vector<std::map<std::string, double>> scalars;
    std::vector<std::vector<double>> paths;
    for (const std::string how : {"store", "recompute", "recompute_auto_tile"}) {
      RidgeOptions o;
      o.lambdas = {1e-6, 1e-3, 0.1, 3.0};
      o.solver = RidgeForm::dual;
      o.block = how == "recompute_auto_tile" ? 512 : 3;
      o.refit = refit;
      o.dual_features = how == "store" ? DualFeatures::store : DualFeatures::recompute;
      o.dual_tile = how == "recompute" ? 7 : 0;
      RidgeSolver m(std::make_unique<TestFeatures>(6), o);
      FitLog log;
      m.fit(train, log);
      m.evaluate(test, log);
      preds.push_back(m.predict(test));
      scalars.emplace_back(log.scalars.begin(), log.scalars.end());
      std::vector<double> path;
      for (const auto& p : log.points)
        if (p.series == "val_mse" || p.series == "test_nmse_path") path.push_back(p.value);
      paths.push_back(path);
    }
    ASSERT_EQ(paths[0].size(), 8u);
    EXPECT_EQ(scalars[0].at("dual_features_recomputed"), 0);
    for (size_t k = 1; k < 3; ++k) {
      EXPECT_LT(max_rel_diff(preds[k], preds[0]), 1e-9) << "refit " << refit << " variant " << k;
      EXPECT_LT(max_rel_diff(paths[k], paths[0]), 1e-9) << "refit " << refit << " variant " << k;
      EXPECT_EQ(scalars[k].at("dual_features_recomputed"), 1);
      EXPECT_EQ(scalars[k].at("lambda"), scalars[0].at("lambda"));
      EXPECT_NEAR(scalars[k].at("test_nmse_minnorm"), scalars[0].at("test_nmse_minnorm"),
                  1e-9 * scalars[0].at("test_nmse_minnorm"));
    }
  }
}

TEST(Ridge, DualTileRowsFollowTheMemoryBudget) {
  // Two tiles of 500 rows in a quarter of the budget; at least one block; at most n (or one
  // block when n is smaller); at most 4096.
  EXPECT_EQ(ridge_dual_tile_rows(10000, 1000, 64, 4 * 16ull * 1000 * 500), 500);
  EXPECT_EQ(ridge_dual_tile_rows(10000, 1000, 64, 0), 64);
  EXPECT_EQ(ridge_dual_tile_rows(300, 1000, 64, 1ull << 40), 300);
  EXPECT_EQ(ridge_dual_tile_rows(40, 1000, 512, 1ull << 40), 512);
  EXPECT_EQ(ridge_dual_tile_rows(100000, 10, 64, 1ull << 40), 4096);
}

TEST(Ridge, PlantedSolutionIsRecovered) {
  // Labels are centred but features are not (the spec's intercept): a planted read-out is
  // recovered exactly when the features have zero mean too. Samples in ± pairs make the
  // linear features' mean exactly 0; the planted target uses only those.
  std::vector<double> v = planted();
  for (int k = 6; k < 12; ++k) v[k] = 0.0;
  Batch train = make_batch(100, 3, 0.0, v);
  const Batch test = make_batch(50, 4, 0.0, v);
  const int64_t half = train.n;
  train.n = 2 * half;
  train.X.resize(2 * half * 6);
  train.Y.resize(2 * half);
  for (int64_t i = 0; i < half; ++i) {
    for (int k = 0; k < 6; ++k) train.X[(half + i) * 6 + k] = -train.X[i * 6 + k];
    train.Y[half + i] = 0.6 - train.Y[i];  // y = 0.3 + <v, x>: the mirror has 0.3 - <v, x>
  }
  RidgeSolver m(std::make_unique<TestFeatures>(6), one_lambda(1e-12));
  FitLog log;
  m.fit(train, log);
  const auto pred = m.predict(test);
  EXPECT_LT(max_rel_diff(pred, test.Y), 1e-8);
  const auto V = m.readout();
  ASSERT_EQ(V.size(), 12u);
  for (int k = 0; k < 12; ++k) EXPECT_NEAR(V[k], v[k], 1e-7) << k;
}

TEST(Ridge, ValidationPicksTheBestLambdaOfTheGrid) {
  const Batch train = make_batch(100, 5, 1.0, planted());
  RidgeOptions o;
  o.lambdas = {1e-6, 1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0};
  o.val_fraction = 0.3;
  RidgeSolver m(std::make_unique<TestFeatures>(6), o);
  FitLog log;
  m.fit(train, log);
  // Brute force: fit on the first 70 samples at each λ, score on the last 30.
  Batch fit = train, val = train;
  fit.n = 70;
  fit.X.resize(70 * 6);
  fit.Y.resize(70);
  val.n = 30;
  val.X.assign(train.X.begin() + 70 * 6, train.X.end());
  val.Y.assign(train.Y.begin() + 70, train.Y.end());
  double best = 1e300;
  double best_lambda = 0;
  for (double lambda : o.lambdas) {
    const auto pred = direct_predictions(fit, val, lambda);
    double mse = 0;
    for (int i = 0; i < 30; ++i) mse += (pred[i] - val.Y[i]) * (pred[i] - val.Y[i]) / 30;
    if (mse < best) {
      best = mse;
      best_lambda = lambda;
    }
  }
  EXPECT_EQ(m.chosen_lambda(), best_lambda);
  double logged = NAN;
  for (const auto& [name, v] : log.scalars)
    if (name == "val_mse") logged = v;
  EXPECT_NEAR(logged, best, 1e-9 * best);
}

TEST(Ridge, ZeroLambdaIsTheMinimumNormInterpolant) {
  const Batch train = make_batch(8, 6, 0.5, planted());  // n = 8 < P = 12
  for (const char* solver : {"primal", "dual"}) {
    RidgeSolver m(std::make_unique<TestFeatures>(6), one_lambda(0.0, solver));
    FitLog log;
    m.fit(train, log);
    const auto pred = m.predict(train);
    EXPECT_LT(max_rel_diff(pred, train.Y), 1e-8) << solver;  // interpolates
    for (double v : m.readout()) EXPECT_TRUE(std::isfinite(v));
  }
  // The minimum-norm read-out equals the λ → 0 limit of ridge.
  RidgeSolver zero(std::make_unique<TestFeatures>(6), one_lambda(0.0, "dual"));
  RidgeSolver tiny(std::make_unique<TestFeatures>(6), one_lambda(1e-9, "dual"));
  FitLog log;
  zero.fit(train, log);
  tiny.fit(train, log);
  EXPECT_LT(max_rel_diff(zero.readout(), tiny.readout()), 1e-5);
}

TEST(Ridge, LambdaBelowTheFloorIsReportedNotNaN) {
  const Batch train = make_batch(40, 7, 0.1, planted()), test = make_batch(20, 8, 0.1, planted());
  RidgeOptions o;
  o.lambdas = {1e-300, 1e-3};
  o.val_fraction = 0.25;
  RidgeSolver m(std::make_unique<TestFeatures>(6), o);
  FitLog log;
  m.fit(train, log);
  double below = -1;
  for (const auto& [name, v] : log.scalars)
    if (name == "lambdas_below_floor") below = v;
  EXPECT_EQ(below, 1);
  for (double p : m.predict(test)) EXPECT_TRUE(std::isfinite(p));
  m.evaluate(test, log);
  bool has_oracle = false;
  for (const auto& [name, v] : log.scalars) {
    has_oracle = has_oracle || name == "test_nmse_oracle";
    EXPECT_TRUE(std::isfinite(v)) << name;
  }
  EXPECT_TRUE(has_oracle);
}

TEST(Ridge, RefitSolvesOnTheWholeTrainingSet) {
  const Batch train = make_batch(60, 9, 0.3, planted()), test = make_batch(20, 10, 0.3, planted());
  RidgeOptions o;
  o.lambdas = {0.05};
  o.val_fraction = 0.25;
  o.refit = true;
  const auto direct = direct_predictions(train, test, 0.05);
  for (const char* solver : {"primal", "dual"}) {
    o.solver = choice_parse(solver, kRidgeForms, "train.solver");
    RidgeSolver m(std::make_unique<TestFeatures>(6), o);
    FitLog log;
    m.fit(train, log);
    EXPECT_LT(max_rel_diff(m.predict(test), direct), 1e-9) << solver;
  }
  RidgeSolver k(std::make_unique<TestKernel>(6), o);
  FitLog log;
  k.fit(train, log);
  EXPECT_LT(max_rel_diff(k.predict(test), direct), 1e-9);
}

TEST(Ridge, RefitBelowTheFloorRaisesLambdaToTheFloorAndSaysSo) {
  // λ = 1e-300 is below any Gram's floor: the refit solves at the floor, logs refit_lambda and
  // prints the raise; a λ above the floor is used as given.
  const Batch train = make_batch(60, 9, 0.3, planted());
  RidgeOptions o;
  o.val_fraction = 0.25;
  o.refit = true;
  auto refit_lambda = [&](double lambda, std::string* err) {
    o.lambdas = {lambda};
    RidgeSolver m(std::make_unique<TestFeatures>(6), o);
    FitLog log;
    testing::internal::CaptureStderr();
    m.fit(train, log);
    *err = testing::internal::GetCapturedStderr();
    for (const auto& [name, v] : log.scalars)
      if (name == "refit_lambda") return v;
    return std::numeric_limits<double>::quiet_NaN();
  };
  for (const char* solver : {"primal", "dual"})
    for (const char* features : {"store", "recompute"}) {
      o.solver = choice_parse(solver, kRidgeForms, "train.solver");
      o.dual_features = choice_parse(features, kDualFeatures, "train.dual_features");
      std::string err;
      const double raised = refit_lambda(1e-300, &err);
      EXPECT_GT(raised, 1e-300) << solver << " " << features;
      EXPECT_LT(raised, 1e-10) << solver << " " << features;
      EXPECT_NE(err.find("train.refit"), std::string::npos) << err;
      EXPECT_EQ(refit_lambda(0.05, &err), 0.05);
      EXPECT_EQ(err.find("train.refit"), std::string::npos) << err;
    }
}

TEST(Ridge, RefitLeavesTheFitSplitPathAlone) {
  // evaluate() scores the fit split's models along the λ path, with the fit split's label mean,
  // whether or not the final read-out was refit on all n samples (with a shifted label mean).
  Batch train = make_batch(60, 31, 0.3, planted());
  for (int64_t i = 45; i < 60; ++i) train.Y[i] += 2.0;  // the validation part's labels shift
  const Batch test = make_batch(40, 32, 0.3, planted());
  for (const char* how : {"store", "recompute"}) {
    std::vector<std::vector<double>> paths;
    for (bool refit : {false, true}) {
      RidgeOptions o;
      o.lambdas = {1e-3, 0.1};
      o.val_fraction = 0.25;
      o.solver = RidgeForm::dual;
      o.dual_features = choice_parse(how, kDualFeatures, "train.dual_features");
      o.refit = refit;
      RidgeSolver m(std::make_unique<TestFeatures>(6), o);
      FitLog log;
      m.fit(train, log);
      m.evaluate(test, log);
      std::vector<double> path;
      for (const auto& p : log.points)
        if (p.series == "test_nmse_path") path.push_back(p.value);
      paths.push_back(path);
    }
    ASSERT_EQ(paths[0].size(), 2u);
    EXPECT_LT(max_rel_diff(paths[1], paths[0]), 1e-12) << how;
  }
}

TEST(Ridge, TestPathIsOneDirectFitPerLambdaOnTheFitSplit) {
  // evaluate() reports the test NMSE of the fit split's model at every λ of the grid
  // (test_nmse_path), their minimum as the oracle, and λ → 0⁺. Each path point must equal an
  // independent long-double solve on the fit split (the first 80 % of the training samples)
  // at that λ, scored with metrics_compute; the oracle must be the smallest of them and the
  // λ → 0⁺ point the tiny-λ limit of the same solves.
  const Batch train = make_batch(80, 11, 0.8, planted()),
              test = make_batch(200, 12, 0.8, planted());
  RidgeOptions o;
  o.lambdas = {1e-6, 1e-2, 1.0, 100.0};
  RidgeSolver m(std::make_unique<TestFeatures>(6), o);
  FitLog log;
  m.fit(train, log);
  m.evaluate(test, log);
  Batch fit_split = train;
  fit_split.n = 64;  // n_val = round(0.2 · 80) = 16 held out at the end
  fit_split.X.resize(64 * 6);
  fit_split.Y.resize(64);
  auto nmse_of = [&](const std::vector<double>& pred) {
    for (const auto& [name, value] : metrics_compute(test, pred))
      if (name == "nmse") return value;
    return std::numeric_limits<double>::quiet_NaN();
  };
  std::vector<double> expected;
  for (double lambda : o.lambdas)
    expected.push_back(nmse_of(direct_predictions(fit_split, test, lambda)));
  std::vector<double> path(o.lambdas.size(), NAN);
  for (const auto& p : log.points)
    if (p.series == "test_nmse_path") path.at(static_cast<size_t>(p.step)) = p.value;
  double oracle = NAN, minnorm = NAN;
  for (const auto& [name, v] : log.scalars) {
    if (name == "test_nmse_oracle") oracle = v;
    if (name == "test_nmse_minnorm") minnorm = v;
  }
  for (size_t l = 0; l < expected.size(); ++l)
    EXPECT_NEAR(path[l], expected[l], 1e-9 * expected[l]) << "lambda " << o.lambdas[l];
  // The grid spans regimes (the planted map is learned at small λ, not at λ = 100).
  EXPECT_GT(expected.back(), 2 * expected.front());
  EXPECT_EQ(oracle, *std::min_element(path.begin(), path.end()));
  EXPECT_NEAR(minnorm, nmse_of(direct_predictions(fit_split, test, 1e-12)), 1e-6);
}

TEST(Ridge, NonFiniteFeaturesAreAClearErrorNotNaNResults) {
  // An inf in one training sample's inputs (so in its features): primal, dual and kernel fits
  // stop with the eigendecomposition's message instead of returning NaN read-outs.
  Batch train = make_batch(40, 3, 0.0, planted());
  train.X[5] = std::numeric_limits<double>::infinity();
  for (const char* solver : {"primal", "dual"}) {
    RidgeSolver m(std::make_unique<TestFeatures>(6), one_lambda(1e-3, solver));
    FitLog log;
    try {
      m.fit(train, log);
      ADD_FAILURE() << solver << ": no error";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("NaN or inf"), std::string::npos) << e.what();
    }
  }
  RidgeSolver k(std::make_unique<TestKernel>(6), one_lambda(1e-3));
  FitLog log;
  EXPECT_THROW(k.fit(train, log), UserError);
}

TEST(Ridge, BadOptionsAreUserErrors) {
  Params p("train", ridge_train_schema());
  p.set_text("val_fraction", "0");
  EXPECT_THROW(ridge_options(p), UserError);  // several λ, nothing to choose on
  EXPECT_THROW(RidgeSolver(std::make_unique<TestKernel>(6), one_lambda(1.0, "primal")), UserError);
  RidgeSolver m(std::make_unique<TestFeatures>(6), one_lambda(1.0));
  EXPECT_THROW(m.predict(make_batch(3, 1, 0, planted())), UserError);
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// The local fit is the distributed fit on one rank (ridge_stages.h): fit() and
// fit_distributed() on comm_self() give the same predictions, logs and λ path bit for bit, for
// every ridge form (primal, dual with stored and recomputed features, kernel), with λ chosen on
// validation, with and without refit.
TEST(Ridge, LocalFitIsTheDistributedFitOnOneRank) {
  const Batch train = make_batch(50, 31, 0.3, planted()), test = make_batch(30, 32, 0.3, planted());
  struct Form {
    const char* solver;
    const char* dual_features;
    bool kernel;
  };
  for (const Form f : {Form{"primal", "store", false}, Form{"dual", "store", false},
                       Form{"dual", "recompute", false}, Form{"dual", "store", true}}) {
    for (bool refit : {false, true}) {
      RidgeOptions o;
      o.lambdas = {1e-6, 1e-3, 0.1, 3.0};
      o.solver = choice_parse(f.solver, kRidgeForms, "train.solver");
      o.dual_features = choice_parse(f.dual_features, kDualFeatures, "train.dual_features");
      o.dual_tile = 7;
      o.block = 3;
      o.refit = refit;
      std::vector<double> preds[2];
      FitLog logs[2];
      for (int k = 0; k < 2; ++k) {
        auto m = f.kernel ? std::make_unique<RidgeSolver>(std::make_unique<TestKernel>(6), o)
                          : std::make_unique<RidgeSolver>(std::make_unique<TestFeatures>(6), o);
        if (k == 0)
          m->fit(train, logs[k]);
        else
          m->fit_distributed(train, 0, train.n, comm_self(), logs[k]);
        preds[k] = m->predict(test);
        m->evaluate(test, logs[k]);
      }
      const std::string what = std::string(f.solver) + " " + f.dual_features +
                               (f.kernel ? " kernel" : "") + (refit ? " refit" : "");
      EXPECT_EQ(preds[0], preds[1]) << what;
      ASSERT_EQ(logs[0].scalars, logs[1].scalars) << what;
      ASSERT_EQ(logs[0].points.size(), logs[1].points.size()) << what;
      for (size_t p = 0; p < logs[0].points.size(); ++p) {
        EXPECT_EQ(logs[0].points[p].series, logs[1].points[p].series) << what;
        EXPECT_EQ(logs[0].points[p].value, logs[1].points[p].value) << what;
      }
      EXPECT_FALSE(logs[0].points.empty()) << what;
    }
  }
}

// Samples [lo, hi) of b.
Batch batch_rows(const Batch& b, int64_t lo, int64_t hi) {
  Batch out;
  out.n = hi - lo;
  out.shape = b.shape;
  out.X.assign(b.X.begin() + lo * b.shape.x_size(), b.X.begin() + hi * b.shape.x_size());
  out.Y.assign(b.Y.begin() + lo * b.shape.y_size(), b.Y.begin() + hi * b.shape.y_size());
  return out;
}

// The multi-rank paths of the ridge stages, on ranks that are threads (tests/thread_comm.h):
// every form, with λ chosen on validation and with refit, on 2 and 3 ranks (3 ranks of 50
// samples put the fit/validation boundary inside a rank's block), equals the local fit to
// 1e-10 with the same chosen λ; every rank predicts alike; rank 0 logs fit_ranks. The grid
// stays at λ ≥ 1e-3: the dual kernel here (n_fit = 40 > P = 12) is rank-deficient, and at a λ
// far below its spectrum the rounding of the sums (another order on each rank count) is
// amplified by about 1/λ along its null space (λ = 1e-6 differs by 1e-9 relative).
TEST(Ridge, DistributedFitOverThreadRanksEqualsTheLocalFit) {
  const Batch train = make_batch(50, 41, 0.3, planted()), test = make_batch(30, 42, 0.3, planted());
  struct Form {
    const char* solver;
    bool kernel;
  };
  for (const Form f : {Form{"primal", false}, Form{"dual", false}, Form{"dual", true}}) {
    for (bool refit : {false, true}) {
      RidgeOptions o;
      o.lambdas = {1e-3, 0.03, 0.1, 3.0};  // see above
      o.solver = choice_parse(f.solver, kRidgeForms, "train.solver");
      o.block = 3;
      o.refit = refit;
      auto make = [&] {
        return f.kernel ? std::make_unique<RidgeSolver>(std::make_unique<TestKernel>(6), o)
                        : std::make_unique<RidgeSolver>(std::make_unique<TestFeatures>(6), o);
      };
      auto local = make();
      FitLog local_log;
      local->fit(train, local_log);
      const std::vector<double> local_pred = local->predict(test);
      local->evaluate(test, local_log);
      for (int ranks : {2, 3}) {
        const std::string what = std::string(f.solver) + (f.kernel ? " kernel" : "") +
                                 (refit ? " refit" : "") + ", " + std::to_string(ranks) + " ranks";
        std::vector<std::vector<double>> preds(ranks);
        FitLog root_log;
        test::thread_comm_run(ranks, [&](const Comm& comm) {
          int64_t lo, hi;
          comm_block(train.n, comm.rank(), comm.size(), &lo, &hi);
          auto m = make();
          FitLog log;
          m->fit_distributed(batch_rows(train, lo, hi), lo, train.n, comm, log);
          preds[comm.rank()] = m->predict(test);
          if (comm.is_root()) {
            m->evaluate(test, log);
            root_log = log;
          }
        });
        EXPECT_LT(max_rel_diff(preds[0], local_pred), 1e-10) << what;
        for (int r = 1; r < ranks; ++r) EXPECT_EQ(preds[r], preds[0]) << what;
        std::map<std::string, double> a(local_log.scalars.begin(), local_log.scalars.end()),
            b(root_log.scalars.begin(), root_log.scalars.end());
        EXPECT_EQ(b.at("fit_ranks"), ranks) << what;
        EXPECT_EQ(b.at("lambda_index"), a.at("lambda_index")) << what;
        for (const char* key : {"val_mse", "test_nmse_minnorm", "test_nmse_oracle"})
          EXPECT_NEAR(b.at(key), a.at(key), 1e-10 * std::abs(a.at(key))) << what << " " << key;
        ASSERT_EQ(root_log.points.size(), local_log.points.size()) << what;
        for (size_t p = 0; p < local_log.points.size(); ++p)
          EXPECT_NEAR(root_log.points[p].value, local_log.points[p].value,
                      1e-10 * std::abs(local_log.points[p].value))
              << what << " " << local_log.points[p].series;
      }
    }
  }
}

}  // namespace
}  // namespace attn
