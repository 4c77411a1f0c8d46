// metrics_compute on hand-made arrays with hand-computed values, and its error paths; the
// metric table's rows; bit-identity with the previous release's formulas on random data;
// categorical targets (token metrics, exact match, their standard errors).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <tuple>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "experiment/run_point.h"
#include "metrics_previous_release.h"
#include "tasks/batch.h"
#include "tasks/named_arrays.h"
#include "train/metric_table.h"
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
  for (double bad :
       {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
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

// ---------------------------------------------------------------- the table

TEST(MetricTable, RowsAreWellFormedAndNamesUniquePerKind) {
  for (int k = 0; k < kTargetKindCount; ++k) {
    const TargetKind kind = static_cast<TargetKind>(k);
    std::set<std::string> names;
    int rows = 0;
    for (const MetricRow& row : metric_table()) {
      ASSERT_NE(row.formula, nullptr) << row.name;
      ASSERT_NE(row.kinds, 0u) << row.name;
      EXPECT_EQ(row.kinds & ~kMetricAllKinds, 0u) << row.name;
      if (!(row.kinds & metric_kind_bit(kind))) continue;
      ++rows;
      EXPECT_TRUE(names.insert(row.name).second) << row.name << " twice for kind " << k;
    }
    EXPECT_GE(rows, 5) << "kind " << k;
  }
  for (const char* name : {"success_rate", "exact_match", "token_accuracy", "token_error"})
    EXPECT_TRUE(metric_is_sample_fraction(name)) << name;
  for (const char* name : {"mse", "accuracy", "disj_accuracy", "no_such_metric"})
    EXPECT_FALSE(metric_is_sample_fraction(name)) << name;
}

// metric_is_sample_fraction and metric_is_summary look rows up by name alone, so rows sharing a
// name (one per kind: mse, nmse, exact_match) must agree on both; the summary metrics are the
// train_* columns of earlier results (mse, nmse, accuracy) plus token_accuracy.
TEST(MetricTable, RowsSharingANameAgreeOnWhatIsLookedUpByName) {
  auto fraction = [](const MetricRow& r) {
    return r.se == MetricSe::sample_fraction || r.se == MetricSe::position_fraction;
  };
  std::set<std::string> summary;
  for (const MetricRow& a : metric_table()) {
    if (a.summary == MetricSummary::yes) summary.insert(a.name);
    for (const MetricRow& b : metric_table()) {
      if (std::string(a.name) != b.name) continue;
      EXPECT_EQ(fraction(a), fraction(b)) << a.name;
      EXPECT_EQ(a.summary, b.summary) << a.name;
    }
  }
  EXPECT_EQ(summary, (std::set<std::string>{"mse", "nmse", "accuracy", "token_accuracy"}));
  for (const char* name : {"mse", "nmse", "accuracy", "token_accuracy"})
    EXPECT_TRUE(metric_is_summary(name)) << name;
  for (const char* name : {"token_error", "exact_match", "max_abs_err", "no_such_metric"})
    EXPECT_FALSE(metric_is_summary(name)) << name;
}

// Random batches with the named arrays of qsa (success_threshold; disjoint, query_position,
// disj_threshold) and binary or real targets, declared or not.
Batch random_batch(int64_t n, int64_t T_out, int64_t d_out, bool binary, uint64_t seed) {
  Rng rng(seed, "test.metrics", 0);
  Batch b = targets(n, T_out, d_out, {});
  b.Y.resize(static_cast<size_t>(n * T_out * d_out));
  for (double& y : b.Y) y = binary ? (rng.uniform() < 0.4 ? 1.0 : 0.0) : 3 * rng.uniform() - 1;
  b.shape.constants.push_back(named_array_spec(NamedArray::success_threshold, {}, 1));
  b.constants.push_back({b.shape.constants.back(), {0.9 * std::sqrt(double(d_out))}, {}});
  b.shape.raw.push_back(named_array_spec(NamedArray::disjoint, {}, 1));
  RawArray disjoint{b.shape.raw.back(), {}, {}};
  for (int64_t j = 0; j < n; ++j) disjoint.i64.push_back(rng.uniform() < 0.5 ? 1 : 0);
  b.raw.push_back(disjoint);
  b.shape.constants.push_back(named_array_spec(NamedArray::query_position, {}, 1));
  b.constants.push_back({b.shape.constants.back(), {}, {T_out - 1}});
  b.shape.constants.push_back(named_array_spec(NamedArray::disj_threshold, {}, 1));
  b.constants.push_back({b.shape.constants.back(), {0.3}, {}});
  return b;
}

TEST(MetricTable, BitIdenticalToThePreviousReleaseOnRandomData) {
  int compared = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed)
    for (bool binary : {false, true})
      for (bool declared : {false, true})
        for (const auto& [n, T_out, d_out] : {std::tuple<int64_t, int64_t, int64_t>{1, 3, 2},
                                               {2, 1, 1}, {37, 5, 3}, {200, 4, 1}}) {
          Batch b = random_batch(n, T_out, d_out, binary, seed);
          if (declared) b.shape.target = binary ? TargetKind::binary : TargetKind::real;
          Rng rng(seed, "test.metrics.prediction", 0);
          std::vector<double> f(b.Y.size());
          for (size_t e = 0; e < f.size(); ++e)
            f[e] = seed % 3 == 0 ? b.Y[e] : b.Y[e] + (2 * rng.uniform() - 1) * 0.8;
          std::vector<std::pair<std::string, double>> se_new, se_old;
          const auto now = metrics_compute(b, f, &se_new);
          const auto old = previous_release::old_metrics_compute(b, f, &se_old);
          SCOPED_TRACE("seed " + std::to_string(seed) + " binary " + std::to_string(binary) +
                       " n " + std::to_string(n));
          ASSERT_EQ(now.size(), old.size());
          for (size_t k = 0; k < old.size(); ++k) {
            EXPECT_EQ(now[k].first, old[k].first);
            EXPECT_EQ(std::memcmp(&now[k].second, &old[k].second, sizeof(double)), 0)
                << old[k].first << ": " << now[k].second << " vs " << old[k].second;
          }
          ASSERT_EQ(se_new.size(), se_old.size());
          for (size_t k = 0; k < se_old.size(); ++k) {
            EXPECT_EQ(se_new[k].first, se_old[k].first);
            EXPECT_EQ(std::memcmp(&se_new[k].second, &se_old[k].second, sizeof(double)), 0)
                << se_old[k].first << ": " << se_new[k].second << " vs " << se_old[k].second;
          }
          ++compared;
        }
  EXPECT_EQ(compared, 12 * 2 * 2 * 4);
}

// ---------------------------------------------------------------- categorical targets

// Two samples, three positions, three classes: sample 0 labels (0, 2, ignored), sample 1
// labels (1, 1, 0).
Batch categorical_batch() {
  Batch b = targets(2, 3, 3, {1, 0, 0, /**/ 0, 0, 1, /**/ 0, 0, 0,
                              /**/ 0, 1, 0, /**/ 0, 1, 0, /**/ 1, 0, 0});
  b.shape.target = TargetKind::categorical;
  return b;
}

TEST(MetricsCategorical, TokenMetricsOverLabelledPositions) {
  const Batch b = categorical_batch();
  // Sample 0: right, wrong (argmax 0, not 2), ignored row; sample 1: right, right, right.
  const std::vector<double> f = {0.7, 0.2, 0.1, /**/ 0.5, 0.4, 0.1, /**/ 0, 0, 9,
                                 /**/ 0, 1, 0, /**/ 0.2, 0.5, 0.3, /**/ 0.9, 0, 0.1};
  std::vector<std::pair<std::string, double>> se;
  const auto m = metrics_compute(b, f, &se);
  std::vector<std::string> names;
  for (const auto& [k, v] : m) names.push_back(k);
  EXPECT_EQ(names, (std::vector<std::string>{"mse", "nmse", "max_abs_err", "mean_max_pos_err",
                                             "max_pos_err", "token_accuracy", "token_error",
                                             "exact_match"}));
  const auto mm = as_map(m), ss = as_map(se);
  EXPECT_DOUBLE_EQ(mm.at("token_accuracy"), 4.0 / 5.0);
  EXPECT_DOUBLE_EQ(mm.at("token_error"), 1.0 / 5.0);
  EXPECT_DOUBLE_EQ(mm.at("exact_match"), 0.5);
  // Ratio estimator: r = 0.8, a − r·m = (1 − 1.6, 3 − 2.4) = (−0.6, 0.6):
  // sqrt(0.72 / (2 · 1)) / 2.5 = 0.24, the same for the error.
  EXPECT_NEAR(ss.at("token_accuracy_se"), 0.24, 1e-15);
  EXPECT_NEAR(ss.at("token_error_se"), 0.24, 1e-15);
  EXPECT_NEAR(ss.at("exact_match_se"), 0.5, 1e-15);  // sd of (0, 1) / sqrt(2)
  EXPECT_EQ(mm.count("accuracy"), 0u);
}

// The per-entry metrics of categorical targets run over the labelled positions: the ignored row
// of sample 0 (prediction (0, 0, 9)) changes none of them. Over every entry, as before, mse
// would be (1.76 + 81) / 18 and max_abs_err 9.
TEST(MetricsCategorical, PerEntryMetricsSkipIgnoredPositions) {
  const Batch b = categorical_batch();
  const std::vector<double> f = {0.7,    0.2, 0.1, /**/ 0.5, 0.4, 0.1, /**/ 0,   0, 9,
                                 /**/ 0, 1,   0,   /**/ 0.2, 0.5, 0.3, /**/ 0.9, 0, 0.1};
  std::vector<std::pair<std::string, double>> se;
  const auto m = as_map(metrics_compute(b, f, &se));
  const auto ss = as_map(se);
  // Squared errors of the labelled positions: sample 0 0.14, 1.22; sample 1 0, 0.38, 0.02;
  // 6 + 9 labelled entries.
  const double mse = 1.76 / 15;
  EXPECT_NEAR(m.at("mse"), mse, 1e-15);
  // 15 labelled targets, 5 ones: variance 1/3 · 2/3.
  EXPECT_NEAR(m.at("nmse"), mse / (2.0 / 9.0), 1e-14);
  EXPECT_NEAR(m.at("max_abs_err"), 0.9, 1e-15);
  EXPECT_NEAR(m.at("max_pos_err"), std::sqrt(1.22), 1e-15);
  EXPECT_NEAR(m.at("mean_max_pos_err"), (std::sqrt(1.22) + std::sqrt(0.38)) / 2, 1e-15);
  // Ratio estimator: a = (1.36, 0.40), m = (6, 9), r = 1.76 / 15: a − r·m = (0.656, −0.656),
  // sqrt(2 · 0.656² / 2) / 7.5.
  EXPECT_NEAR(ss.at("mse_se"), 0.656 / 7.5, 1e-14);
  EXPECT_NEAR(ss.at("nmse_se"), 0.656 / 7.5 / (2.0 / 9.0), 1e-13);
  EXPECT_NEAR(ss.at("mean_max_pos_err_se"), std::fabs(std::sqrt(1.22) - std::sqrt(0.38)) / 2,
              1e-15);
}

// A sample whose every position is ignored counts as error 0 in the per-sample metrics, as
// exact_match counts it right; the pooled metrics do not see it.
TEST(MetricsCategorical, ASampleWithNoLabelledPositionHasNoError) {
  Batch b = targets(2, 1, 2, {1, 0, /**/ 0, 0});
  b.shape.target = TargetKind::categorical;
  const auto m = as_map(metrics_compute(b, {0.5, 0.5, /**/ 0.3, 0.7}));
  EXPECT_DOUBLE_EQ(m.at("mse"), 0.25);
  EXPECT_DOUBLE_EQ(m.at("max_pos_err"), std::sqrt(0.5));
  EXPECT_DOUBLE_EQ(m.at("mean_max_pos_err"), std::sqrt(0.5) / 2);
  EXPECT_DOUBLE_EQ(m.at("exact_match"), 1.0);  // argmax 0 of (0.5, 0.5) is the class
}

// A run stores the training set's summary metrics as train_*: mse, nmse and accuracy as before
// (binary), and for categorical targets token_accuracy (token_error is its complement).
TEST(MetricsCategorical, ARunStoresTheTrainingSetsTokenAccuracy) {
  const Batch cat = categorical_batch(), bin = targets(1, 2, 1, {0, 1});
  for (const Batch* b : {&cat, &bin}) {
    RunOutcome out;
    run_outcome_add_fit(metrics_compute(*b, b->Y), FitLog{}, 0.5, out);
    std::vector<std::string> names;
    for (const auto& [name, value] : out.metrics) names.push_back(name);
    if (b == &cat)
      EXPECT_EQ(names, (std::vector<std::string>{"train_mse", "train_nmse", "train_token_accuracy",
                                                 "fit_seconds"}));
    else
      EXPECT_EQ(names, (std::vector<std::string>{"train_mse", "train_nmse", "train_accuracy",
                                                 "fit_seconds"}));
  }
}

TEST(MetricsCategorical, EqualLabelCountsGiveThePerSampleStandardError) {
  // Every sample has 2 labelled positions: the se is sd(per-sample accuracy) / sqrt(n).
  Batch b = targets(3, 2, 2, {1, 0, 0, 1, /**/ 1, 0, 1, 0, /**/ 0, 1, 0, 1});
  b.shape.target = TargetKind::categorical;
  const std::vector<double> f = {1, 0, 0, 1, /**/ 1, 0, 0, 1, /**/ 1, 0, 1, 0};  // 2, 1, 0 right
  std::vector<std::pair<std::string, double>> se;
  const auto m = as_map(metrics_compute(b, f, &se));
  EXPECT_DOUBLE_EQ(m.at("token_accuracy"), 0.5);
  EXPECT_DOUBLE_EQ(m.at("exact_match"), 1.0 / 3.0);
  // Per-sample accuracies 1, 0.5, 0: sd 0.5, se 0.5 / sqrt(3).
  EXPECT_NEAR(as_map(se).at("token_accuracy_se"), 0.5 / std::sqrt(3.0), 1e-15);
}

TEST(MetricsCategorical, TargetsThatBreakTheirKindAreUserErrors) {
  Batch two_ones = categorical_batch();
  two_ones.Y[1] = 1;  // sample 0, position 0: classes 0 and 1
  EXPECT_THROW(metrics_compute(two_ones, two_ones.Y), UserError);
  Batch ignored = categorical_batch();
  std::fill(ignored.Y.begin(), ignored.Y.end(), 0.0);
  try {
    metrics_compute(ignored, ignored.Y);
    FAIL() << "no error for a batch with no labelled position";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("every output position of the batch is ignored"),
              std::string::npos) << e.what();
  }
  Batch binary = targets(1, 2, 1, {0, 0.5});
  binary.shape.target = TargetKind::binary;
  EXPECT_THROW(metrics_compute(binary, {0, 0}), UserError);
}

TEST(MetricsNamedArrays, AnArrayThatBreaksTheContractIsAUserError) {
  Batch b = targets(2, 1, 1, {0.1, 0.2});
  b.shape.raw.push_back({"disjoint", {}, false});  // float64, the contract says int64
  b.raw.push_back({b.shape.raw.back(), {1.0, 0.0}, {}});
  try {
    metrics_compute(b, {0.0, 0.0});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("array 'disjoint' must be a per-sample array of int64"),
              std::string::npos) << e.what();
  }
}

TEST(Metrics, WrongPredictionSizeIsAUserError) {
  const Batch b = targets(2, 1, 1, {0.1, 0.2});
  EXPECT_THROW(metrics_compute(b, {0.0}), UserError);
  EXPECT_THROW(metrics_compute(b, {0.0, 0.0, 0.0}), UserError);
}

}  // namespace
}  // namespace attn
