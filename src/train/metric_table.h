// The metric table: one row per metric (name, the target kinds and named arrays it needs, its
// formula, whether it has a standard error and how). metrics_compute (train/metrics.h) runs
// the rows that apply to a batch, in table order; the definitions are in metrics.h.
//
// Shapes: MetricInput::f holds the prediction in Y's layout, n × T_out × d_out (K = T_out·d_out
// values per sample, total = n·K), every value finite (checked before any row runs), and Y is
// valid for `kind` (binary: 0/1; categorical: each position's row one-hot or all zero).
//
// To add a metric: write its formula (a metric_*.cpp file of this folder), add its row to
// metric_table() in metrics.cpp, document it in metrics.h and docs/models.md, and test its
// value in tests/test_metrics.cpp (the table test there checks every row is well formed).
#pragma once

#include <cstdint>
#include <vector>

#include "tasks/batch.h"
#include "tasks/named_arrays.h"
#include "tasks/target_kind.h"

namespace attn {

struct MetricInput {
  const Batch& data;
  const double* f;  // the prediction
  TargetKind kind;
  int64_t n, T_out, d_out, K, total;
};

// How a row's standard error NAME_se is computed (claims use it to judge a single seed).
enum class MetricSe {
  none,               // no NAME_se
  sample_mean,        // a mean over samples: sd(per-sample values) / sqrt(n)
  sample_fraction,    // the fraction of samples with a 0/1 outcome: the same sd / sqrt(n);
                      // metric_is_sample_fraction is true (claims floor it, claim_stats.h)
  position_fraction,  // a fraction of positions pooled over samples (ratio estimator with
                      // samples as clusters); metric_is_sample_fraction is true (conservative:
                      // the claims floor counts samples, not positions)
};

struct MetricValue {
  double value = 0;
  double se = 0;  // read only when the row's se is not MetricSe::none
};

constexpr unsigned metric_kind_bit(TargetKind kind) { return 1u << static_cast<unsigned>(kind); }
inline constexpr unsigned kMetricAllKinds = (1u << kTargetKindCount) - 1;

struct MetricRow {
  const char* name;
  unsigned kinds;                 // metric_kind_bit of each target kind it applies to
  std::vector<NamedArray> needs;  // applies when the batch has needs[0]; the rest are then required
  MetricSe se;
  MetricValue (*formula)(const MetricInput& in);
};

// Every metric, in output order. Names are unique among the rows of each target kind.
const std::vector<MetricRow>& metric_table();

// sd / sqrt(n) of n per-sample values with mean `mean` and sum of squares `sq` (0 when n < 2).
double metric_sample_mean_se(int64_t n, long double mean, long double sq);

// The formulas (metric_entries.cpp: every kind; metric_labels.cpp: binary, categorical, qsa).
MetricValue metric_mse(const MetricInput& in);
MetricValue metric_nmse(const MetricInput& in);
MetricValue metric_max_abs_err(const MetricInput& in);
MetricValue metric_mean_max_pos_err(const MetricInput& in);
MetricValue metric_max_pos_err(const MetricInput& in);
MetricValue metric_success_rate(const MetricInput& in);
MetricValue metric_accuracy(const MetricInput& in);
MetricValue metric_balanced_accuracy(const MetricInput& in);
MetricValue metric_exact_match_binary(const MetricInput& in);
MetricValue metric_token_accuracy(const MetricInput& in);
MetricValue metric_token_error(const MetricInput& in);
MetricValue metric_exact_match_categorical(const MetricInput& in);
MetricValue metric_disj_accuracy(const MetricInput& in);

}  // namespace attn
