// metrics_compute on hand-made arrays with hand-computed values, and its error paths.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "tasks/batch.h"
#include "train/metrics.h"

namespace attn {
namespace {

Batch targets(int64_t n, int64_t T_out, int64_t d_out, std::vector<double> y) {
  Batch b;
  b.n = n;
  b.shape.T = 1;
  b.shape.d_in = 1;
  b.shape.T_out = T_out;
  b.shape.d_out = d_out;
  b.X.assign(static_cast<size_t>(n), 0.0);
  b.Y = std::move(y);
  return b;
}

std::map<std::string, double> as_map(const std::vector<std::pair<std::string, double>>& m) {
  return {m.begin(), m.end()};
}

TEST(Metrics, HandComputedValues) {
  // Sample 0: position errors (0, 0) and (0, -3); sample 1: (3, 4) and (0, 0).
  const Batch b = targets(2, 2, 2, {1, 2, 3, 4, /**/ 0, 0, 2, -2});
  const std::vector<double> f = {1, 2, 3, 1, /**/ 3, 4, 2, -2};
  const auto m = as_map(metrics_compute(b, f));
  EXPECT_DOUBLE_EQ(m.at("mse"), 34.0 / 8.0);
  // Targets: mean 1.25, population variance 25.5 / 8.
  EXPECT_DOUBLE_EQ(m.at("nmse"), (34.0 / 8.0) / (25.5 / 8.0));
  EXPECT_DOUBLE_EQ(m.at("max_abs_err"), 4.0);
  EXPECT_DOUBLE_EQ(m.at("mean_max_pos_err"), (3.0 + 5.0) / 2.0);
  EXPECT_DOUBLE_EQ(m.at("max_pos_err"), 5.0);
  EXPECT_EQ(m.count("accuracy"), 0u) << "targets are not all 0/1";
}

TEST(Metrics, ReturnsTheDocumentedKeysInOrder) {
  const Batch b = targets(1, 2, 1, {0.5, 1.5});
  const auto m = metrics_compute(b, {0.0, 0.0});
  const std::vector<std::string> names = {"mse", "nmse", "max_abs_err", "mean_max_pos_err",
                                          "max_pos_err"};
  ASSERT_EQ(m.size(), names.size());
  for (size_t k = 0; k < names.size(); ++k) EXPECT_EQ(m[k].first, names[k]);
}

TEST(Metrics, AccuracyOnlyForBinaryTargets) {
  const Batch b = targets(1, 4, 1, {0, 1, 1, 0});
  // Thresholded at 0.5 (>= 0.5 counts as 1): 0, 1, 0, 1 -> two of four right.
  const auto m = as_map(metrics_compute(b, {0.2, 0.5, 0.4, 0.9}));
  ASSERT_EQ(m.count("accuracy"), 1u);
  EXPECT_DOUBLE_EQ(m.at("accuracy"), 0.5);
  EXPECT_DOUBLE_EQ(m.at("mse"), (0.04 + 0.25 + 0.36 + 0.81) / 4.0);
  EXPECT_DOUBLE_EQ(m.at("nmse"), (0.04 + 0.25 + 0.36 + 0.81) / 4.0 / 0.25);
  EXPECT_DOUBLE_EQ(m.at("max_abs_err"), 0.9);
  // d_out = 1: the position error is |error|; the worst position of the one sample is 0.9.
  EXPECT_DOUBLE_EQ(m.at("mean_max_pos_err"), 0.9);
  EXPECT_DOUBLE_EQ(m.at("max_pos_err"), 0.9);

  const Batch two = targets(2, 1, 2, {1, 0, 0, 0});  // all-0 sample is still binary
  const auto m2 = as_map(metrics_compute(two, {0.7, -3.0, 0.49, 2.0}));
  EXPECT_DOUBLE_EQ(m2.at("accuracy"), 0.75);  // 1, 0 | 0, 1 against 1, 0 | 0, 0
}

TEST(Metrics, PerfectPredictionIsZero) {
  const Batch b = targets(3, 2, 1, {1, 0, 0, 1, 1, 1});
  const auto m = as_map(metrics_compute(b, b.Y));
  for (const char* key : {"mse", "nmse", "max_abs_err", "mean_max_pos_err", "max_pos_err"})
    EXPECT_EQ(m.at(key), 0.0) << key;
  EXPECT_EQ(m.at("accuracy"), 1.0);
}

TEST(Metrics, ConstantTargetsGiveFiniteNmseEqualToMse) {
  const Batch b = targets(2, 1, 2, {2, 2, 2, 2});
  const auto m = as_map(metrics_compute(b, {3, 3, 3, 1}));
  EXPECT_DOUBLE_EQ(m.at("mse"), 1.0);
  EXPECT_DOUBLE_EQ(m.at("nmse"), 1.0);
  EXPECT_TRUE(std::isfinite(m.at("nmse")));
  // A variance so small that mse / var overflows also falls back to mse.
  const Batch tiny = targets(1, 2, 1, {0.0, 1e-300});
  const auto t = as_map(metrics_compute(tiny, {1e10, 1e10}));
  EXPECT_TRUE(std::isfinite(t.at("nmse")));
  EXPECT_DOUBLE_EQ(t.at("nmse"), t.at("mse"));
}

TEST(Metrics, NanOrInfPredictionIsAUserError) {
  const Batch b = targets(1, 3, 1, {0.1, 0.2, 0.3});
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                     -std::numeric_limits<double>::infinity()}) {
    try {
      metrics_compute(b, {0.0, bad, 0.0});
      FAIL() << "no error for " << bad;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("the model produced NaN/inf predictions"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(Metrics, WrongPredictionSizeIsAUserError) {
  const Batch b = targets(2, 1, 1, {0.1, 0.2});
  EXPECT_THROW(metrics_compute(b, {0.0}), UserError);
  EXPECT_THROW(metrics_compute(b, {0.0, 0.0, 0.0}), UserError);
}

}  // namespace
}  // namespace attn
