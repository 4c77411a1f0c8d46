// Metrics: how far a model's predictions are from a batch's targets.
//
// Shapes: data.Y n × T_out × d_out; prediction the same n·T_out·d_out values, same layout.
// Which metrics a batch gets follows its target kind (tasks/target_kind.h: declared by the
// task, else inferred from Y) and the named arrays it carries (tasks/named_arrays.h); each is
// a row of the metric table (train/metric_table.h), returned in this order (every value finite
// for finite inputs). For categorical targets the per-entry metrics (mse .. success_rate) run
// over the labelled positions only (target row not all zero; metric_table.h says why): read
// "entries" and "positions" below as the labelled ones, a sample with none counting as error 0.
//   mse               (every kind) mean over all n·T_out·d_out entries of (prediction − target)²
//   nmse              (every kind) mse / Var(targets), the population variance of all entries
//                     of data.Y; when that variance is 0 (constant targets, or so small the
//                     ratio would overflow) nmse = mse, so it stays finite and is 0 iff the fit
//                     is exact
//   max_abs_err       (every kind) max over entries of |prediction − target|
//   mean_max_pos_err  (every kind) mean over samples of max over positions i of
//                     ‖f(X)_i − Y_i‖₂ (the d_out-vector error at output position i; Sanford et
//                     al.'s qSA error)
//   max_pos_err       (every kind) max over samples of the same per-sample maximum
//   success_rate      when the batch has the constant success_threshold (qsa: 1/(2q), spec
//                     §2.1): the fraction of samples whose max-position error is at most it
//   accuracy          (binary) the fraction of entries where (prediction >= 0.5) equals the
//                     target
//   balanced_accuracy (binary) the mean of the accuracies on positive and on negative
//                     targets (accuracy itself when one class is absent)
//   exact_match       (binary) the fraction of samples with every entry right
//   token_accuracy    (categorical) over the labelled positions (target row not all zero) of
//                     all samples: the fraction whose prediction row's first argmax is the
//                     target class (UserError when no position is labelled)
//   token_error       (categorical) 1 − token_accuracy, counted as wrong / labelled
//   exact_match       (categorical) the fraction of samples with every labelled position right
//                     (a sample with no labelled position counts as right)
//   disj_accuracy     when the batch has the raw array `disjoint` (qsa DISJ instances,
//                     task.instances = disj): the fraction of samples where the prediction
//                     at the query position 2q decides disjointness right, i.e. says
//                     "disjoint" (⟨f_2q, e₁⟩ < −1 + 1/q, the constant disj_threshold) iff
//                     disjoint = 1
// With standard_errors given, it also receives NAME_se for each metric that has one, in the
// same order: for means over samples (mse, nmse, mean_max_pos_err, success_rate, accuracy,
// exact_match) sd(per-sample values) / sqrt(n) (0 when n = 1), nmse's being mse's divided by
// Var(targets) like nmse itself; for token_accuracy and token_error the ratio estimator's
// with samples as clusters, sqrt(Σ_j (a_j − r m_j)² / (n (n − 1))) / mean(m_j) (a_j right or
// wrong, m_j labelled positions of sample j; sd / sqrt(n) of the per-sample fractions when
// every m_j is equal). For categorical targets mse's se is the same ratio estimator with a_j
// the sample's squared error and m_j its labelled entries, and nmse's is mse's divided by the
// labelled targets' variance. Claims use them to judge a single seed.
// Throws UserError when the prediction has the wrong size, holds NaN/inf (the run is then
// recorded as failed), or the batch is empty, has non-finite targets, or targets that break
// its declared kind (binary not 0/1; categorical rows not one-hot or all zero, or every row
// ignored).
// Metric positions apart from the loss: with the named array metric_mask (categorical targets
// only, n × T_out of 0/1; hop has it) a position counts for every metric above only where it is
// labelled and its mask is 1 — read "labelled" above as "counted". The loss is not affected
// (it sees every labelled position). UserError when no position counts.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tasks/batch.h"

namespace attn {

// Whether the metric NAME (as above, without a test_/val_ prefix) is a fraction whose
// per-sample outcomes can all agree, so that claims floor its standard error with the samples'
// count (claim_stats.h): success_rate and exact_match (0/1 per sample), token_accuracy and
// token_error (pooled over positions; the floor counting samples is conservative). accuracy
// counts entries and is not one.
bool metric_is_sample_fraction(const std::string& name);

// Whether NAME is a summary metric (MetricSummary::yes: mse, nmse, accuracy for binary and
// token_accuracy for categorical targets): a run stores it for the training set as train_NAME,
// and `attnlab fit` and `predict` print it.
bool metric_is_summary(const std::string& name);

std::vector<std::pair<std::string, double>> metrics_compute(
    const Batch& data, const std::vector<double>& prediction,
    std::vector<std::pair<std::string, double>>* standard_errors = nullptr);

// Per-slice metrics. A task may attach per-sample integer slice labels (the named arrays marked
// slice_label in tasks/named_arrays.h: hop's `k`). For each such array LABEL in the batch and
// each of its values v (increasing), every row marked MetricSliced::yes that applies to the
// batch (today token_error) is computed again on the samples whose label is v, exactly as
// metrics_compute would compute it on a batch of those samples alone:
//   NAME_by_LABEL     step v, the metric over the counted positions of those samples
//   NAME_se_by_LABEL  step v, its standard error on those samples (for token_error the ratio
//                     estimator with the slice's sequences as clusters, as NAME_se above: the
//                     standard error of the per-sequence error counts, not of the pooled
//                     positions as if independent)
// A value whose samples have no counted position gets no point (absent, never NaN). Empty when
// the batch has no slice label. Checks its inputs as metrics_compute does (same UserErrors).
struct MetricSeriesPoint {
  std::string series;
  int64_t step;
  double value;
};
std::vector<MetricSeriesPoint> metrics_compute_slices(const Batch& data,
                                                      const std::vector<double>& prediction);

}  // namespace attn
