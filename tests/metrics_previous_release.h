// The previous release's metrics_compute (src/train/metrics.cpp before the metric table),
// kept verbatim as old_metrics_compute so tests/test_metrics.cpp can check that the table
// gives bit-identical names, values and standard errors for real and binary targets.
// It infers "binary" from the data (every target 0 or 1), as the previous release did. Only
// the input checks are left out (the tests give valid inputs).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "tasks/batch.h"

namespace attn::previous_release {

inline bool has_array(const Batch& data, const std::string& name) {
  for (const auto& r : data.raw)
    if (r.spec.name == name) return true;
  for (const auto& c : data.constants)
    if (c.spec.name == name) return true;
  return false;
}
inline double disj_accuracy(const Batch& data, const double* f) {
  ATTN_CHECK(has_array(data, "query_position") && has_array(data, "disj_threshold"),
             "metrics: a batch with the raw array 'disjoint' needs the constants "
             "query_position and disj_threshold (qsa with task.instances = disj)");
  const RawArray& disjoint = data.find("disjoint");
  const RawArray& query_array = data.find("query_position");
  const RawArray& threshold_array = data.find("disj_threshold");
  ATTN_CHECK(static_cast<int64_t>(disjoint.i64.size()) == data.n && query_array.i64.size() == 1 &&
                 threshold_array.f64.size() == 1,
             "metrics: 'disjoint' must be n int64 values, query_position one int64 and "
             "disj_threshold one float64 (qsa with task.instances = disj)");
  const int64_t query = query_array.i64[0];
  const double threshold = threshold_array.f64[0];
  const int64_t K = data.shape.T_out * data.shape.d_out;
  ATTN_CHECK(query >= 0 && query < data.shape.T_out,
             "metrics: query_position " + std::to_string(query) + " is not an output position");
  int64_t right = 0;
  for (int64_t j = 0; j < data.n; ++j) {
    const bool says_disjoint = f[j * K + query * data.shape.d_out] < threshold;
    right += says_disjoint == (disjoint.i64[static_cast<size_t>(j)] == 1);
  }
  return static_cast<double>(right) / static_cast<double>(data.n);
}

inline std::vector<std::pair<std::string, double>> old_metrics_compute(
    const Batch& data, const std::vector<double>& prediction,
    std::vector<std::pair<std::string, double>>* standard_errors) {
  const int64_t n = data.n, T_out = data.shape.T_out, d_out = data.shape.d_out;
  const int64_t K = T_out * d_out, total = n * K;
  // (The input checks are left out: the tests give valid batches and predictions.)
  const double* y = data.Y.data();
  const double* f = prediction.data();

  bool binary = true;
  long double y_sum = 0;
  for (int64_t e = 0; e < total; ++e) {
    binary = binary && (y[e] == 0.0 || y[e] == 1.0);
    y_sum += y[e];
  }
  const long double y_mean = y_sum / static_cast<long double>(total);

  double threshold = -1;  // success_threshold constant, if the task defines one
  for (const auto& c : data.constants)
    if (c.spec.name == "success_threshold" && !c.f64.empty()) threshold = c.f64[0];

  long double se_sum = 0, var_sum = 0, pos_err_sum = 0;
  double max_abs = 0, max_pos = 0;
  int64_t correct = 0, positives = 0, true_pos = 0, true_neg = 0, exact = 0, successes = 0;
  // Sums of squares of the per-sample values, for the standard errors.
  long double sample_se_sq = 0, pos_err_sq = 0, correct_sq = 0;
  for (int64_t j = 0; j < n; ++j) {
    double sample_max = 0;  // max over positions of the ℓ2 error of the d_out-vector
    bool sample_exact = true;
    long double sample_se = 0;
    int64_t sample_correct = 0;
    for (int64_t i = 0; i < T_out; ++i) {
      long double pos_se = 0;
      for (int64_t k = 0; k < d_out; ++k) {
        const int64_t e = j * K + i * d_out + k;
        const long double diff = static_cast<long double>(f[e]) - y[e];
        pos_se += diff * diff;
        max_abs = std::max(max_abs, static_cast<double>(std::fabs(diff)));
        const long double centred = y[e] - y_mean;
        var_sum += centred * centred;
        if (binary) {
          const bool right = (f[e] >= 0.5) == (y[e] == 1.0);
          correct += right;
          sample_correct += right;
          sample_exact = sample_exact && right;
          positives += y[e] == 1.0;
          true_pos += right && y[e] == 1.0;
          true_neg += right && y[e] == 0.0;
        }
      }
      se_sum += pos_se;
      sample_se += pos_se;
      sample_max = std::max(sample_max, static_cast<double>(std::sqrt(pos_se)));
    }
    pos_err_sum += sample_max;
    max_pos = std::max(max_pos, sample_max);
    exact += sample_exact;
    successes += sample_max <= threshold;
    const long double sample_mse = sample_se / K,
                      sample_acc = static_cast<long double>(sample_correct) / K;
    sample_se_sq += sample_mse * sample_mse;
    pos_err_sq += static_cast<long double>(sample_max) * sample_max;
    correct_sq += sample_acc * sample_acc;
  }

  const double mse = static_cast<double>(se_sum / total);
  const double var = static_cast<double>(var_sum / total);
  double nmse = mse;
  if (var > 0) {
    const double ratio = mse / var;
    if (std::isfinite(ratio)) nmse = ratio;
  }
  std::vector<std::pair<std::string, double>> out = {
      {"mse", mse},
      {"nmse", nmse},
      {"max_abs_err", max_abs},
      {"mean_max_pos_err", static_cast<double>(pos_err_sum / n)},
      {"max_pos_err", max_pos},
  };
  if (threshold >= 0)
    out.emplace_back("success_rate", static_cast<double>(successes) / static_cast<double>(n));
  if (binary) {
    const double accuracy = static_cast<double>(correct) / static_cast<double>(total);
    out.emplace_back("accuracy", accuracy);
    const int64_t negatives = total - positives;
    out.emplace_back("balanced_accuracy",
                     positives == 0 || negatives == 0
                         ? accuracy
                         : 0.5 * (static_cast<double>(true_pos) / static_cast<double>(positives) +
                                  static_cast<double>(true_neg) / static_cast<double>(negatives)));
    out.emplace_back("exact_match", static_cast<double>(exact) / static_cast<double>(n));
  }
  if (has_array(data, "disjoint")) out.emplace_back("disj_accuracy", disj_accuracy(data, f));
  if (standard_errors) {
    // sd / sqrt(n) of per-sample values with mean `mean` and sum of squares `sq`.
    auto se = [n](long double mean, long double sq) {
      if (n < 2) return 0.0;
      const long double var = std::max(0.0L, (sq - n * mean * mean) / (n - 1));
      return static_cast<double>(std::sqrt(var / n));
    };
    auto rate_se = [&](int64_t count) {  // a 0/1 per-sample value
      const long double p = static_cast<long double>(count) / n;
      return se(p, static_cast<long double>(count));
    };
    const double mse_se = se(se_sum / total, sample_se_sq);
    standard_errors->clear();
    standard_errors->emplace_back("mse_se", mse_se);
    standard_errors->emplace_back("nmse_se", nmse == mse ? mse_se : mse_se / var);
    standard_errors->emplace_back("mean_max_pos_err_se", se(pos_err_sum / n, pos_err_sq));
    if (threshold >= 0) standard_errors->emplace_back("success_rate_se", rate_se(successes));
    if (binary) {
      standard_errors->emplace_back("accuracy_se",
                                    se(static_cast<long double>(correct) / total, correct_sq));
      standard_errors->emplace_back("exact_match_se", rate_se(exact));
    }
  }
  return out;
}

}  // namespace attn::previous_release
