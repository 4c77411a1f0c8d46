// Metrics: how far a model's predictions are from a batch's targets.
//
// Shapes: data.Y n × T_out × d_out; prediction the same n·T_out·d_out values, same layout.
// Returned in this order (every value finite for finite inputs):
//   mse               mean over all n·T_out·d_out entries of (prediction − target)²
//   nmse              mse / Var(targets), the population variance of all entries of data.Y;
//                     when that variance is 0 (constant targets, or so small the ratio would
//                     overflow) nmse = mse, so it stays finite and is 0 iff the fit is exact
//   max_abs_err       max over entries of |prediction − target|
//   mean_max_pos_err  mean over samples of max over positions i of ‖f(X)_i − Y_i‖₂ (the
//                     d_out-vector error at output position i; Sanford et al.'s qSA error)
//   max_pos_err       max over samples of the same per-sample maximum
//   success_rate      only when the task defines the constant success_threshold (qsa:
//                     1/(2q), spec §2.1): the fraction of samples whose max-position error
//                     is at most that threshold
//   accuracy          only when every target is exactly 0 or 1: the fraction of entries
//                     where (prediction >= 0.5) equals the target
//   balanced_accuracy (binary) the mean of the accuracies on positive and on negative
//                     targets (accuracy itself when one class is absent)
//   exact_match       (binary) the fraction of samples with every entry right
//   disj_accuracy     only when the batch has the raw array `disjoint` (qsa DISJ instances,
//                     task.instances = disj): the fraction of samples where the prediction
//                     at the query position 2q decides disjointness right, i.e. says
//                     "disjoint" (⟨f_2q, e₁⟩ < −1 + 1/q, the constant disj_threshold) iff
//                     disjoint = 1
// With standard_errors given, it also receives, for each metric above that is a mean over
// samples (mse, nmse, mean_max_pos_err, success_rate, accuracy, exact_match), NAME_se: the
// standard error of that mean, sd(per-sample values) / sqrt(n) (0 when n = 1); nmse's is
// mse's divided by Var(targets), like nmse itself. Claims use them to judge a single seed.
// Throws UserError when the prediction has the wrong size, holds NaN/inf (the run is then
// recorded as failed), or the batch is empty or has non-finite targets.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tasks/batch.h"

namespace attn {

// Whether the metric NAME (as above, without a test_/val_ prefix) is the fraction of samples
// with a 0/1 outcome: success_rate and exact_match (accuracy counts entries, not samples).
bool metric_is_sample_fraction(const std::string& name);

std::vector<std::pair<std::string, double>> metrics_compute(
    const Batch& data, const std::vector<double>& prediction,
    std::vector<std::pair<std::string, double>>* standard_errors = nullptr);

}  // namespace attn
