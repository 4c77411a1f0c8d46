// Ridge's band-form λ path (train/ridge_band.h) against the eigendecomposition: the same
// chosen λ, validation errors, predictions and test path (λ → 0⁺ included) to rounding,
// primal, dual, kernel, several outputs, refit, recomputed dual features and shared spectra;
// the fall-back to the eigen path, bit for bit, where the band form cannot give the
// minimum-norm point; the form's own pieces against direct solves.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>

#include "core/rng.h"
#include "models/rf_kernels.h"
#include "models/rfa_features.h"
#include "tasks/task.h"
#include "train/ridge.h"
#include "train/ridge_band.h"
#include "train/ridge_share.h"

namespace attn {
namespace {

// The shipped grid (experiments/fu2023: 1e-8 … 1e7 by decades).
std::vector<double> shipped_grid() {
  std::vector<double> g;
  for (int e = -8; e <= 7; ++e) g.push_back(std::pow(10.0, e));
  return g;
}

// Random Fourier features cos(<w_j, x> + b_j)·√2, P of them: a full-rank Gram or kernel
// (the band form applies).
class CosFeatures final : public FeatureMap {
 public:
  CosFeatures(int64_t x_size, int64_t P) : x_size_(x_size), P_(P), W_(P * x_size), b_(P) {
    Rng rng(5, "test.ridge_band.w", 0);
    for (double& w : W_) w = rng.gaussian() / std::sqrt(static_cast<double>(x_size));
    for (double& b : b_) b = 6.283185307179586 * rng.uniform();
  }
  int64_t dim() const override { return P_; }
  void features(const double* X, int64_t count, double* Phi) const override {
    for (int64_t s = 0; s < count; ++s)
      for (int64_t j = 0; j < P_; ++j) {
        double z = b_[j];
        for (int64_t k = 0; k < x_size_; ++k) z += W_[j * x_size_ + k] * X[s * x_size_ + k];
        Phi[s * P_ + j] = std::sqrt(2.0) * std::cos(z);
      }
  }

 private:
  int64_t x_size_, P_;
  std::vector<double> W_, b_;
};

// n samples, T = 2 tokens × d = 3, K outputs: smooth functions of x plus noise.
Batch cos_batch(int64_t n, int64_t K, uint64_t seed) {
  Batch b;
  b.n = n;
  b.shape.T = 2;
  b.shape.d_in = 3;
  b.shape.T_out = 1;
  b.shape.d_out = K;
  b.X.resize(static_cast<size_t>(n * 6));
  b.Y.resize(static_cast<size_t>(n * K));
  Rng rng(seed, "test.ridge_band.data", 0);
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int k = 0; k < 6; ++k) {
      b.X[static_cast<size_t>(i * 6 + k)] = rng.gaussian();
      s += (k + 1) * b.X[static_cast<size_t>(i * 6 + k)];
    }
    for (int64_t k = 0; k < K; ++k)
      b.Y[static_cast<size_t>(i * K + k)] =
          std::sin(s / (3.0 + static_cast<double>(k))) + 0.1 * rng.gaussian();
  }
  return b;
}

// What a fit and evaluate() report, for comparison.
struct Outcome {
  std::map<std::string, double> scalars;
  std::map<std::string, std::vector<double>> series;
  std::vector<double> pred;
};

Outcome run(std::unique_ptr<RidgeSolver> m, const Batch& train, const Batch& test) {
  Outcome o;
  FitLog log;
  m->fit(train, log);
  o.pred = m->predict(test);
  m->evaluate(test, log);
  for (const auto& [name, v] : log.scalars) o.scalars[name] = v;
  for (const auto& p : log.points) {
    auto& s = o.series[p.series];
    if (s.size() <= static_cast<size_t>(p.step)) s.resize(static_cast<size_t>(p.step) + 1, NAN);
    s[static_cast<size_t>(p.step)] = p.value;
  }
  return o;
}

double rel(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-300); }

// Largest |a − b| over the largest |b|.
double max_rel(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, scale = 1e-300;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return diff / scale;
}

// The band path's outcome equals the eigen path's to `tol` relative (every scalar, every
// point of every series, the predictions); returns whether any value differs at all.
bool expect_equal_to_rounding(const Outcome& band, const Outcome& eigen, double tol,
                              const std::string& what) {
  bool differs = false;
  EXPECT_EQ(band.scalars.size(), eigen.scalars.size()) << what;
  for (const auto& [name, v] : eigen.scalars) {
    if (!band.scalars.count(name)) {
      ADD_FAILURE() << what << ": no " << name;
      continue;
    }
    const double b = band.scalars.at(name);
    if (name == "lambda_index" || name == "lambda" || name == "lambdas_below_floor")
      EXPECT_EQ(b, v) << what << ": " << name;
    else
      EXPECT_LE(rel(b, v), tol) << what << ": " << name << " " << b << " vs " << v;
    differs = differs || b != v;
  }
  EXPECT_EQ(band.series.size(), eigen.series.size()) << what;
  for (const auto& [name, s] : eigen.series) {
    if (!band.series.count(name) || band.series.at(name).size() != s.size()) {
      ADD_FAILURE() << what << ": series " << name << " missing or of another length";
      continue;
    }
    const auto& b = band.series.at(name);
    for (size_t l = 0; l < s.size(); ++l) {
      EXPECT_LE(rel(b[l], s[l]), tol)
          << what << ": " << name << "[" << l << "] " << b[l] << " vs " << s[l];
      differs = differs || b[l] != s[l];
    }
  }
  if (band.pred.size() != eigen.pred.size()) {
    ADD_FAILURE() << what << ": " << band.pred.size() << " vs " << eigen.pred.size()
                  << " predictions";
    return true;
  }
  EXPECT_LE(max_rel(band.pred, eigen.pred), tol) << what;
  for (size_t i = 0; i < band.pred.size(); ++i) differs = differs || band.pred[i] != eigen.pred[i];
  return differs;
}

RidgeOptions grid_options(const std::string& path, const std::string& solver) {
  RidgeOptions o;
  o.lambdas = shipped_grid();
  o.solver = choice_parse(solver, kRidgeForms, "train.solver");
  o.path = choice_parse(path, kRidgePaths, "path");
  o.block = 64;
  return o;
}

TEST(RidgeBand, FeatureFitsEqualTheEigenPathToRounding) {
  // Primal (P = 120 < n_fit = 240) and dual (P = 300 > n_fit = 160), one and three outputs,
  // with and without refit, stored and recomputed dual features.
  struct Case {
    const char* solver;
    int64_t P, n, K;
    bool refit;
    const char* dual_features;
  };
  const Case cases[] = {{"primal", 120, 300, 1, false, "auto"},
                        {"primal", 120, 300, 3, true, "auto"},
                        {"dual", 300, 200, 1, false, "store"},
                        {"dual", 300, 200, 3, true, "store"},
                        {"dual", 300, 200, 2, false, "recompute"}};
  for (const Case& c : cases) {
    const std::string what = std::string(c.solver) + " P=" + std::to_string(c.P) + " K=" +
                             std::to_string(c.K) + (c.refit ? " refit " : " ") + c.dual_features;
    const Batch train = cos_batch(c.n, c.K, 1), test = cos_batch(150, c.K, 2);
    auto fit = [&](const char* path) {
      RidgeOptions o = grid_options(path, c.solver);
      o.refit = c.refit;
      o.dual_features = choice_parse(c.dual_features, kDualFeatures, "train.dual_features");
      o.dual_tile = 48;
      return run(std::make_unique<RidgeSolver>(std::make_unique<CosFeatures>(6, c.P), o), train,
                 test);
    };
    const Outcome eigen = fit("eigen");
    for (const char* path : {"tridiagonal", "band"}) {
      const Outcome reduced = fit(path);
      EXPECT_EQ(reduced.scalars.at("ridge_primal"), std::string(c.solver) == "primal" ? 1 : 0);
      ASSERT_EQ(reduced.series.at("val_mse").size(), 16u) << what;
      ASSERT_EQ(reduced.series.at("test_nmse_path").size(), 16u) << what;
      ASSERT_TRUE(reduced.scalars.count("test_nmse_minnorm")) << what;
      // A different computation ran (its last bits differ), and agrees to rounding.
      EXPECT_TRUE(expect_equal_to_rounding(reduced, eigen, 1e-9, what + " " + path));
    }
  }
}

TEST(RidgeBand, KernelAndRfaFitsEqualTheEigenPathToRounding) {
  // The fu2023 models at small size: RFA features (primal and dual) and the RFA kernel.
  Params p = task_default_params("rf_target");
  p.set("N", int64_t{4});
  p.set("d", int64_t{4});
  const auto task = task_make("rf_target", p);
  const Batch train = task_generate(*task, 3, 0, 250), test = task_generate(*task, 3, 1000, 100);
  for (const char* path : {"tridiagonal", "band"}) {
    for (const char* solver : {"primal", "dual"}) {
      RfaConfig config;
      config.heads = std::string(solver) == "primal" ? 30 : 60;  // P = 150 < n_fit = 200 < 300
      Outcome out[2];
      for (const int reduced : {0, 1})
        out[reduced] =
            run(std::make_unique<RidgeSolver>(
                    std::make_unique<RfaFeatures>(config, task->shape().T, task->shape().d_in, 7),
                    grid_options(reduced ? path : "eigen", solver)),
                train, test);
      EXPECT_TRUE(expect_equal_to_rounding(out[1], out[0], 1e-9,
                                           std::string("rfa ") + solver + " " + path));
    }
    Outcome out[2];
    for (const int reduced : {0, 1})
      out[reduced] = run(
          std::make_unique<RidgeSolver>(
              std::make_unique<RfaKernel>(RfaKernelConfig{}, task->shape().T, task->shape().d_in),
              grid_options(reduced ? path : "eigen", "auto")),
          train, test);
    EXPECT_TRUE(expect_equal_to_rounding(out[1], out[0], 1e-9, std::string("rfa_kernel ") + path));
  }
}

TEST(RidgeBand, RankDeficientSystemKeepsTheEigenPathBitForBit) {
  // The dual of P = 20 features on n_fit = 160 samples: the kernel has 140 eigenvalues at the
  // floor, so λ → 0⁺ (and the λ below the floor) need the pseudo-inverse: the band form is
  // refused and the fit is the eigen path's, bit for bit.
  const Batch train = cos_batch(200, 2, 3), test = cos_batch(80, 2, 4);
  auto fit = [&](const char* path) {
    return run(std::make_unique<RidgeSolver>(std::make_unique<CosFeatures>(6, 20),
                                            grid_options(path, "dual")),
               train, test);
  };
  const Outcome eigen = fit("eigen");
  EXPECT_EQ(eigen.scalars.at("ridge_primal"), 0);
  for (const char* path : {"tridiagonal", "band"})
    EXPECT_FALSE(
        expect_equal_to_rounding(fit(path), eigen, 0.0, std::string("rank-deficient ") + path));
}

TEST(RidgeBand, SharedBandSpectraEqualUnsharedFitsBitForBit) {
  // A run group's targets share the band form as they share a spectrum (train/ridge_share.h).
  Params p = task_default_params("rf_target");
  p.set("N", int64_t{4});
  p.set("d", int64_t{4});
  RfaConfig config;
  config.heads = 30;
  for (const char* solver : {"primal", "dual"}) {
    RidgeOptions o = grid_options(std::string(solver) == "primal" ? "band" : "tridiagonal", solver);
    o.refit = true;
    std::vector<double> out[2];
    int64_t hits = 0;
    for (const bool share : {false, true}) {
      ridge_share_enable(share);
      const int64_t before = ridge_share_hits();
      for (const char* target : {"pair_power", "keys_power", "query_power"}) {
        p.set("target", std::string(target));
        const auto task = task_make("rf_target", p);
        const Batch train = task_generate(*task, 3, 0, 250),
                    test = task_generate(*task, 3, 1000, 60);
        const Outcome r = run(
            std::make_unique<RidgeSolver>(
                std::make_unique<RfaFeatures>(config, task->shape().T, task->shape().d_in, 7), o),
            train, test);
        out[share].insert(out[share].end(), r.pred.begin(), r.pred.end());
        for (const auto& [name, v] : r.scalars) out[share].push_back(v);
        for (const auto& [name, s] : r.series)
          out[share].insert(out[share].end(), s.begin(), s.end());
      }
      if (share) hits = ridge_share_hits() - before;
    }
    ridge_share_enable(false);
    EXPECT_GE(hits, 2) << solver;
    ASSERT_EQ(out[0].size(), out[1].size());
    EXPECT_EQ(std::memcmp(out[0].data(), out[1].data(), out[0].size() * sizeof(double)), 0)
        << solver;
  }
}

TEST(RidgeBand, FormSolvesEveryShiftAndRefusesWhatItCannotSolve) {
  // A = M Mᵀ/m + c I (D = 200, positive definite): the band form's solutions Q (B + λI)⁻¹ Qᵀ R
  // against a direct LLT solve, at kept and new shifts, tridiagonal and banded; then the
  // refusals.
  const int64_t D = 200;
  Rng rng(9, "test.ridge_band.form", 0);
  Eigen::MatrixXd M(D, 150), R(D, 2);
  for (int64_t i = 0; i < M.size(); ++i) M.data()[i] = rng.gaussian();
  for (int64_t i = 0; i < R.size(); ++i) R.data()[i] = rng.gaussian();
  const Eigen::MatrixXd PD = M * M.transpose() / 150.0 + 0.05 * Eigen::MatrixXd::Identity(D, D);
  const Eigen::VectorXd eig = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(PD).eigenvalues();
  const std::vector<double> lambdas = {1e-3, 1.0};
  for (const int64_t kd : {1, 16}) {
    Eigen::MatrixXd A = PD;
    RidgeBand band;
    ASSERT_TRUE(ridge_band_make(A, lambdas, kd, band)) << kd;
    EXPECT_EQ(A.size(), 0);  // consumed
    EXPECT_EQ(band.size(), D);
    EXPECT_EQ(band.kd, kd);
    EXPECT_EQ(band.tau.size(), D - kd);  // a real reduction, with reflectors
    EXPECT_EQ(band.shifts.size(), 3u);   // 0, 1e-3, 1
    EXPECT_LE(rel(band.eig_max, eig.maxCoeff()), 1e-13) << kd;
    const double floor = ridge_floor(band.eig_max, D);
    const std::vector<double> ask = {0.0, 1e-3, 0.5, 1.0};  // 0.5 is not a kept shift
    const Eigen::MatrixXd X = ridge_band_path(band, band.qt_times(R), floor, ask);
    ASSERT_EQ(X.cols(), 8);
    for (size_t l = 0; l < ask.size(); ++l) {
      const Eigen::MatrixXd S = PD + ask[l] * Eigen::MatrixXd::Identity(D, D);
      const Eigen::MatrixXd direct = S.llt().solve(R);
      EXPECT_LE((X.middleCols(static_cast<int64_t>(2 * l), 2) - direct).norm() / direct.norm(),
                1e-12)
          << "kd " << kd << ", λ = " << ask[l];
    }
    // λ at or below the floor is the solve at 0, as the eigen path's pseudo-inverse (here a
    // floor of 0.6 puts 1e-3 and 0.5 below it).
    const Eigen::MatrixXd Xf = ridge_band_path(band, band.qt_times(R), 0.6, ask);
    const Eigen::MatrixXd at0 = PD.llt().solve(R);
    for (int64_t l : {0, 1, 2})
      EXPECT_LE((Xf.middleCols(2 * l, 2) - at0).norm() / at0.norm(), 1e-12)
          << "kd " << kd << ", " << l;
    EXPECT_GT((Xf.middleCols(6, 2) - at0).norm() / at0.norm(), 1e-3) << kd;  // λ = 1 > floor
    // Q is orthogonal: Q Qᵀ R = R.
    EXPECT_LE((band.q_times(band.qt_times(R)) - R).norm() / R.norm(), 1e-13) << kd;

    // Refused, A left exactly as given: rank-deficient (eigenvalues at the floor), indefinite,
    // and non-finite.
    Eigen::MatrixXd low = M.leftCols(50) * M.leftCols(50).transpose() / 50.0;
    Eigen::MatrixXd indefinite = PD - 1.5 * eig.minCoeff() * Eigen::MatrixXd::Identity(D, D);
    Eigen::MatrixXd bad = PD;
    bad(7, 3) = std::numeric_limits<double>::quiet_NaN();
    for (Eigen::MatrixXd* m : {&low, &indefinite, &bad}) {
      const Eigen::MatrixXd before = *m;
      RidgeBand refused;
      EXPECT_FALSE(ridge_band_make(*m, lambdas, kd, refused)) << kd;
      ASSERT_EQ(m->size(), before.size());
      EXPECT_EQ(std::memcmp(m->data(), before.data(),
                            static_cast<size_t>(before.size()) * sizeof(double)),
                0);
      EXPECT_TRUE(refused.empty());
    }
  }
}

TEST(RidgeBand, AutoPicksTheFormBySize) {
  EXPECT_EQ(ridge_band_width(RidgePath::automatic, 511), 0);  // the eigendecomposition
  EXPECT_EQ(ridge_band_width(RidgePath::automatic, 512), 1);  // tridiagonal
  EXPECT_EQ(ridge_band_width(RidgePath::automatic, 2047), 1);
  EXPECT_EQ(ridge_band_width(RidgePath::automatic, 2048), 64);
  EXPECT_EQ(ridge_band_width(RidgePath::automatic, 4608), 128);
  EXPECT_EQ(ridge_band_width(RidgePath::eigen, 4608), 0);
  EXPECT_EQ(ridge_band_width(RidgePath::band, 120), 30);  // at most D/4
  EXPECT_EQ(ridge_band_width(RidgePath::band, 7), 0);
  EXPECT_EQ(ridge_band_width(RidgePath::tridiagonal, 3), 1);
  EXPECT_EQ(RidgeOptions().path, RidgePath::automatic);
}

}  // namespace
}  // namespace attn
