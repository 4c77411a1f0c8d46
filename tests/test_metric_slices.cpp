// Metric positions apart from the loss (the named array metric_mask) and per-slice metrics
// (metrics_compute_slices, slice labels such as hop's k), on hand-made batches counted by hand;
// the run stores the slices as test_*_by_<label> series beside the fit's own.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "experiment/run_point.h"
#include "tasks/batch.h"
#include "tasks/named_arrays.h"
#include "train/metrics.h"

namespace attn {
namespace {

// n samples of T_out positions over C classes: class[j][t] (−1: an ignored, all-zero row),
// optional metric_mask[j][t] and slice label k[j]. The prediction puts 1 on guess[j][t].
struct Case {
  int64_t C;
  std::vector<std::vector<int64_t>> cls, mask, guess;
  std::vector<int64_t> k;
};

Batch case_batch(const Case& c) {
  Batch b;
  b.n = static_cast<int64_t>(c.cls.size());
  const int64_t T = static_cast<int64_t>(c.cls[0].size());
  b.shape.T = T;
  b.shape.d_in = 1;
  b.shape.T_out = T;
  b.shape.d_out = c.C;
  b.shape.target = TargetKind::categorical;
  b.X.assign(static_cast<size_t>(b.n * T), 0.0);
  b.Y.assign(static_cast<size_t>(b.n * T * c.C), 0.0);
  for (int64_t j = 0; j < b.n; ++j)
    for (int64_t t = 0; t < T; ++t)
      if (c.cls[j][t] >= 0) b.Y[(j * T + t) * c.C + c.cls[j][t]] = 1.0;
  if (!c.mask.empty()) {
    RawArray r{named_array_spec(NamedArray::metric_mask, {T}, T), {}, {}};
    for (const auto& row : c.mask) r.i64.insert(r.i64.end(), row.begin(), row.end());
    b.shape.raw.push_back(r.spec);
    b.raw.push_back(r);
  }
  if (!c.k.empty()) {
    RawArray r{named_array_spec(NamedArray::k, {}, T), {}, c.k};
    b.shape.raw.push_back(r.spec);
    b.raw.push_back(r);
  }
  return b;
}

std::vector<double> case_prediction(const Case& c) {
  const int64_t n = static_cast<int64_t>(c.guess.size()),
                T = static_cast<int64_t>(c.guess[0].size());
  std::vector<double> f(static_cast<size_t>(n * T * c.C), 0.0);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t t = 0; t < T; ++t) f[(j * T + t) * c.C + c.guess[j][t]] = 1.0;
  return f;
}

std::map<std::string, double> as_map(const std::vector<std::pair<std::string, double>>& m) {
  return {m.begin(), m.end()};
}

// hop-like: classes 0, 1 symbols, 2 blank, 3 none. Sample 0: targets (2, 3, 1, 0), counted at
// positions 2, 3; the guesses get the blank and none wrong and position 2 wrong: 1 of 2 counted
// wrong. Sample 1: targets (2, 0, 1, 3), counted 1, 2, both right; its none is guessed wrong.
Case hop_like() {
  return Case{4,
              {{2, 3, 1, 0}, {2, 0, 1, 3}},
              {{0, 0, 1, 1}, {0, 1, 1, 0}},
              {{0, 0, 0, 0}, {2, 0, 1, 0}},
              {}};
}

TEST(MetricMask, CountsOnlyTheMarkedPositions) {
  const Case c = hop_like();
  std::vector<std::pair<std::string, double>> se;
  const auto m = as_map(metrics_compute(case_batch(c), case_prediction(c), &se));
  EXPECT_DOUBLE_EQ(m.at("token_error"), 1.0 / 4.0);  // 1 wrong of 4 counted
  EXPECT_DOUBLE_EQ(m.at("token_accuracy"), 3.0 / 4.0);
  EXPECT_DOUBLE_EQ(m.at("exact_match"), 1.0 / 2.0);  // sample 1's counted positions all right
  // Per-entry metrics over the counted rows only: 4 rows × 4 entries, one wrong row (error 2).
  EXPECT_DOUBLE_EQ(m.at("mse"), 2.0 / 16.0);
  // Ratio estimator: wrong (1, 0), counted (2, 2): sd of (1/2, 0) / sqrt(2) = 1/4.
  EXPECT_DOUBLE_EQ(as_map(se).at("token_error_se"), 0.25);

  // Without the mask every labelled position counts: 4 wrong of 8 (blank, none and position 2
  // of sample 0; the none of sample 1).
  Case all = c;
  all.mask.clear();
  const auto m2 = as_map(metrics_compute(case_batch(all), case_prediction(all)));
  EXPECT_DOUBLE_EQ(m2.at("token_error"), 4.0 / 8.0);
}

TEST(MetricMask, BadMasksAreUserErrors) {
  Case c = hop_like();
  c.mask[0][1] = 2;
  EXPECT_THROW(metrics_compute(case_batch(c), case_prediction(c)), UserError);
  c = hop_like();
  c.mask = {{0, 0, 0, 0}, {0, 0, 0, 0}};
  try {
    metrics_compute(case_batch(c), case_prediction(c));
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("metric_mask"), std::string::npos) << e.what();
  }
  // Not categorical: the mask is refused rather than silently ignored.
  c = hop_like();
  Batch b = case_batch(c);
  b.shape.target = TargetKind::real;
  EXPECT_THROW(metrics_compute(b, case_prediction(c)), UserError);
}

// Three slices counted by hand. k = 0: samples 0, 2 with counted (2, 2), wrong (1, 0); k = 2:
// sample 1, counted 2, wrong 2; k = 3: sample 3, nothing counted (absent).
TEST(MetricSlices, TokenErrorByKAndItsStandardError) {
  Case c{4,
         {{2, 3, 1, 0}, {2, 0, 1, 3}, {2, 1, 1, 3}, {2, 3, 3, 3}},
         {{0, 0, 1, 1}, {0, 1, 1, 0}, {0, 1, 1, 0}, {0, 0, 0, 0}},
         {{0, 0, 0, 0}, {2, 1, 0, 0}, {2, 1, 1, 0}, {0, 0, 0, 0}},
         {0, 2, 0, 3}};
  const auto points = metrics_compute_slices(case_batch(c), case_prediction(c));
  std::map<std::string, std::map<int64_t, double>> s;
  for (const auto& p : points) s[p.series][p.step] = p.value;
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s["token_error_by_k"], (std::map<int64_t, double>{{0, 0.25}, {2, 1.0}}));
  // k = 0: per-sequence fractions (1/2, 0) with equal counts: sd / sqrt(2) = 1/4. k = 2: one
  // sequence, se 0.
  EXPECT_EQ(s["token_error_se_by_k"], (std::map<int64_t, double>{{0, 0.25}, {2, 0.0}}));
  // Steps come in increasing order, each series' point beside its se.
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].series, "token_error_by_k");
  EXPECT_EQ(points[0].step, 0);
  EXPECT_EQ(points[2].step, 2);
}

TEST(MetricSlices, NoSliceLabelNoSeries) {
  const Case c = hop_like();
  EXPECT_TRUE(metrics_compute_slices(case_batch(c), case_prediction(c)).empty());
}

// Every slice label is a per-sample int64 scalar (what metrics_compute_slices reads).
TEST(MetricSlices, SliceLabelsArePerSampleIntegerScalars) {
  int labels = 0;
  for (const NamedArrayInfo& info : named_array_table()) {
    if (!info.slice_label) continue;
    ++labels;
    EXPECT_TRUE(info.per_sample && info.integer && info.rank == 0) << info.name;
  }
  EXPECT_GE(labels, 1);
}

// A run stores the slices as test_ series and keeps the fit's own series after them.
TEST(MetricSlices, ARunStoresThemAsTestSeries) {
  Case c = hop_like();
  c.k = {1, 1};
  const Batch b = case_batch(c);
  RunOutcome out;
  run_outcome_add_test(b, case_prediction(c), out);
  FitLog log;
  log.point("val_loss", 0, 0.5);
  run_outcome_add_fit({}, log, 0.1, out);
  ASSERT_EQ(out.series.size(), 3u);
  EXPECT_EQ(out.series[0].series, "test_token_error_by_k");
  EXPECT_EQ(out.series[0].step, 1);
  EXPECT_DOUBLE_EQ(out.series[0].value, 0.25);
  EXPECT_EQ(out.series[1].series, "test_token_error_se_by_k");
  EXPECT_EQ(out.series[2].series, "val_loss");
}

}  // namespace
}  // namespace attn
