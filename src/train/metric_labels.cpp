// Metric formulas on labels (definitions in metrics.h): binary targets (accuracy,
// balanced_accuracy, exact_match), categorical targets (token_accuracy, token_error,
// exact_match over labelled positions) and qsa's DISJ instances (disj_accuracy).
//
// Shapes: Y and the prediction f are n × T_out × d_out (K = T_out·d_out per sample). Binary:
// an entry is right when (f >= 0.5) equals its 0/1 target. Categorical: position i of sample j
// is labelled unless its target row is all zero, and right when the first argmax of f's row
// is the target's class.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "train/metric_table.h"

namespace attn {
namespace {

bool binary_right(const MetricInput& in, int64_t e) {
  return (in.f[e] >= 0.5) == (in.data.Y[e] == 1.0);
}

// Per sample: labelled positions and right ones (categorical).
struct TokenCounts {
  std::vector<int64_t> labelled, right;
  int64_t total_labelled = 0, total_right = 0;
};

TokenCounts token_counts(const MetricInput& in) {
  TokenCounts c;
  c.labelled.assign(static_cast<size_t>(in.n), 0);
  c.right.assign(static_cast<size_t>(in.n), 0);
  for (int64_t j = 0; j < in.n; ++j)
    for (int64_t i = 0; i < in.T_out; ++i) {
      if (!metric_position_counted(in, j, i)) continue;
      const double* y = in.data.Y.data() + j * in.K + i * in.d_out;
      const double* f = in.f + j * in.K + i * in.d_out;
      const int64_t target = std::max_element(y, y + in.d_out) - y;
      const int64_t guess = std::max_element(f, f + in.d_out) - f;
      ++c.labelled[j];
      c.right[j] += guess == target;
    }
  for (int64_t j = 0; j < in.n; ++j) {
    c.total_labelled += c.labelled[j];
    c.total_right += c.right[j];
  }
  ATTN_ASSERT(c.total_labelled > 0, "metrics_compute checks that some position is labelled");
  return c;
}

// The standard error of the pooled fraction Σ a_j / Σ m_j (metric_ratio_se).
double pooled_fraction_se(const std::vector<int64_t>& a, const std::vector<int64_t>& m,
                          int64_t a_total, int64_t m_total) {
  return metric_ratio_se(std::vector<long double>(a.begin(), a.end()), m, a_total, m_total);
}

}  // namespace

MetricValue metric_accuracy(const MetricInput& in) {
  int64_t correct = 0;
  long double correct_sq = 0;
  for (int64_t j = 0; j < in.n; ++j) {
    int64_t sample_correct = 0;
    for (int64_t e = j * in.K; e < (j + 1) * in.K; ++e) sample_correct += binary_right(in, e);
    correct += sample_correct;
    const long double sample_acc = static_cast<long double>(sample_correct) / in.K;
    correct_sq += sample_acc * sample_acc;
  }
  return {static_cast<double>(correct) / static_cast<double>(in.total),
          metric_sample_mean_se(in.n, static_cast<long double>(correct) / in.total, correct_sq)};
}

MetricValue metric_balanced_accuracy(const MetricInput& in) {
  int64_t correct = 0, positives = 0, true_pos = 0, true_neg = 0;
  for (int64_t e = 0; e < in.total; ++e) {
    const bool right = binary_right(in, e), positive = in.data.Y[e] == 1.0;
    correct += right;
    positives += positive;
    true_pos += right && positive;
    true_neg += right && !positive;
  }
  const int64_t negatives = in.total - positives;
  if (positives == 0 || negatives == 0)
    return {static_cast<double>(correct) / static_cast<double>(in.total), 0};
  return {0.5 * (static_cast<double>(true_pos) / static_cast<double>(positives) +
                 static_cast<double>(true_neg) / static_cast<double>(negatives)),
          0};
}

MetricValue metric_exact_match_binary(const MetricInput& in) {
  int64_t exact = 0;
  for (int64_t j = 0; j < in.n; ++j) {
    bool sample_exact = true;
    for (int64_t e = j * in.K; e < (j + 1) * in.K; ++e)
      sample_exact = sample_exact && binary_right(in, e);
    exact += sample_exact;
  }
  const long double p = static_cast<long double>(exact) / in.n;
  return {static_cast<double>(exact) / static_cast<double>(in.n),
          metric_sample_mean_se(in.n, p, static_cast<long double>(exact))};
}

MetricValue metric_token_accuracy(const MetricInput& in) {
  const TokenCounts c = token_counts(in);
  return {static_cast<double>(c.total_right) / static_cast<double>(c.total_labelled),
          pooled_fraction_se(c.right, c.labelled, c.total_right, c.total_labelled)};
}

MetricValue metric_token_error(const MetricInput& in) {
  const TokenCounts c = token_counts(in);
  std::vector<int64_t> wrong(c.right.size());
  for (size_t j = 0; j < wrong.size(); ++j) wrong[j] = c.labelled[j] - c.right[j];
  const int64_t total_wrong = c.total_labelled - c.total_right;
  return {static_cast<double>(total_wrong) / static_cast<double>(c.total_labelled),
          pooled_fraction_se(wrong, c.labelled, total_wrong, c.total_labelled)};
}

MetricValue metric_exact_match_categorical(const MetricInput& in) {
  const TokenCounts c = token_counts(in);
  int64_t exact = 0;
  for (size_t j = 0; j < c.right.size(); ++j) exact += c.right[j] == c.labelled[j];
  const long double p = static_cast<long double>(exact) / in.n;
  return {static_cast<double>(exact) / static_cast<double>(in.n),
          metric_sample_mean_se(in.n, p, static_cast<long double>(exact))};
}

// qsa's DISJ instances: the fraction of samples where ⟨f_{2q}, e₁⟩ < −1 + 1/q (the output
// is nearer −e₁ than −e₁ + (2/q)e₁) says "disjoint" exactly when a ∧ b = 0.
MetricValue metric_disj_accuracy(const MetricInput& in) {
  const RawArray* disjoint = named_array_find(in.data, NamedArray::disjoint);
  const RawArray* query_array = named_array_find(in.data, NamedArray::query_position);
  const RawArray* threshold_array = named_array_find(in.data, NamedArray::disj_threshold);
  ATTN_ASSERT(disjoint && query_array && threshold_array);
  const int64_t query = query_array->i64[0];
  const double threshold = threshold_array->f64[0];
  ATTN_CHECK(query >= 0 && query < in.T_out,
             "metrics: query_position " + std::to_string(query) + " is not an output position");
  int64_t right = 0;
  for (int64_t j = 0; j < in.n; ++j) {
    const bool says_disjoint = in.f[j * in.K + query * in.d_out] < threshold;
    right += says_disjoint == (disjoint->i64[static_cast<size_t>(j)] == 1);
  }
  return {static_cast<double>(right) / static_cast<double>(in.n), 0};
}

}  // namespace attn
