// The metric table: one row per metric (name, the target kinds and named arrays it needs, its
// formula, whether it has a standard error and how, whether it is a summary metric).
// metrics_compute (train/metrics.h) runs the rows that apply to a batch, in table order; the
// definitions are in metrics.h.
//
// Shapes: MetricInput::f holds the prediction in Y's layout, n × T_out × d_out (K = T_out·d_out
// values per sample, total = n·K), every value finite (checked before any row runs), and Y is
// valid for `kind` (binary: 0/1; categorical: each position's row one-hot or all zero, and at
// least one position counted).
//
// Which metrics apply to which kind. The per-entry errors (mse, nmse, max_abs_err,
// mean_max_pos_err, max_pos_err, success_rate) apply to every kind, but for categorical targets
// they run over the labelled positions only (metric_position_counted): an ignored position's
// all-zero row is no target, and a prediction there (a softmax row sums to 1) would add an error
// of at least 1/C per ignored row that says nothing about the model and grows with the share of
// ignored positions. They are kept rather than left out because they stay meaningful on the
// labelled rows (mse is the Brier score / C of a probability prediction, the error that ridge and
// mse-trained models minimise) and because ridge's λ path reads nmse for every kind. For real
// and binary targets every position is labelled and the formulas are the previous release's
// to the bit. Per-sample metrics count a sample with no labelled position as error 0 (as
// exact_match counts it right); mse's and nmse's standard errors for categorical targets are
// the ratio estimator with samples as clusters (MetricSe::position_mean), since samples hold
// different numbers of labelled entries. Labels: accuracy, balanced_accuracy and exact_match
// for binary targets; token_accuracy, token_error and exact_match for categorical ones.
//
// Metric positions apart from the loss: a categorical task may carry the named array
// metric_mask (n × T_out int64, 0/1; tasks/named_arrays.h). A position counts for every
// metric only when it is labelled and its mask is 1; "labelled" below then reads "counted".
// The loss (which sees every labelled position) is unchanged: hop's blank and "does not exist"
// classes are trained on but not scored. Without the array every labelled position counts.
//
// To add a metric (5 files, docs/architecture.md): write its formula (metric_entries.cpp or
// metric_labels.cpp), declare it below, add its row to metric_table() in metrics.cpp, document
// it in metrics.h and docs/models.md §7, and test its value in tests/test_metrics.cpp (the table
// test there checks every row is well formed). A row missing a field, or a new MetricSe or
// MetricSummary value that a switch of metrics.cpp does not handle, does not compile.
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
  // The batch's metric_mask (n × T_out, 1 = the position counts), or null: every labelled
  // position counts (categorical targets only; metrics_compute refuses it for other kinds).
  const int64_t* counted;
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
  position_mean,      // a mean over labelled entries pooled over samples (the same ratio
                      // estimator); not a fraction
};

// Whether a row is also reported per slice (metrics_compute_slices, train/metrics.h): the
// series NAME_by_<label> and, when it has a standard error, NAME_se_by_<label>.
enum class MetricSliced { no, yes };

// Whether a row is a summary metric: stored for the training set too (train_NAME in a run's
// results) and printed by `attnlab fit` / `predict` without --all.
enum class MetricSummary { no, yes };

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
  MetricSummary summary;
  MetricSliced sliced;
  MetricValue (*formula)(const MetricInput& in);
};

// Every metric, in output order. Names are unique among the rows of each target kind.
const std::vector<MetricRow>& metric_table();

// The rows' input after metrics_compute's checks (UserError as metrics.h says).
MetricInput metric_input_make(const Batch& data, const std::vector<double>& prediction);
// Whether `row` applies to the batch: its kind, and its first needed array present (the rest
// are then required: UserError).
bool metric_row_applies(const MetricRow& row, const Batch& data, TargetKind kind);

// sd / sqrt(n) of n per-sample values with mean `mean` and sum of squares `sq` (0 when n < 2).
double metric_sample_mean_se(int64_t n, long double mean, long double sq);
// Standard error of the pooled ratio r = Σ a_j / Σ m_j over n = a.size() samples (clusters):
// sqrt(Σ (a_j − r m_j)² / (n (n − 1))) / (Σ m_j / n); sd / sqrt(n) of the per-sample ratios when
// every m_j is equal. 0 when n < 2. Needs Σ m_j > 0.
double metric_ratio_se(const std::vector<long double>& a, const std::vector<int64_t>& m,
                       long double a_total, int64_t m_total);
// Whether output position i of sample j counts: always for real and binary targets; for
// categorical ones unless its target row is ignored (all zero) or the task's metric_mask
// (tasks/named_arrays.h) says 0 there.
bool metric_position_counted(const MetricInput& in, int64_t j, int64_t i);

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
