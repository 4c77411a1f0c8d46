// Executing one run point in this process: generate train and test sets, fit the model,
// compute metrics, run the probes the spec names (the body, shared with grouped and MPI runs,
// is experiment/run_body.h).
//
// Train = samples 0 .. train.n-1 of the run's seed, test = samples eval.first ..
// eval.first+eval.n-1 (disjoint; training sets of different n are nested). Metrics are
// the test metrics (prefixed test_), the summary metrics of the training set (train_mse,
// train_nmse, train_accuracy or train_token_accuracy), the fit's own scalars and the
// probes' (eval.probes), and fit_seconds. Any exception makes the outcome "failed" with its
// message; nothing throws.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "experiment/plan.h"
#include "tasks/batch.h"
#include "models/model_registry.h"

namespace attn {

struct RunOutcome {
  std::string run_id;
  bool ok = false;
  std::string error;  // when !ok
  // The worker was stopped by a signal from outside (child_signal_is_interrupt): not a
  // failed run; the sweep does not store it, and the same command runs it again.
  bool interrupted = false;
  std::vector<std::pair<std::string, double>> metrics;
  std::vector<FitLog::Point> series;
  double wall_seconds = 0.0;
  int64_t peak_rss_bytes = 0;
};

// A run of a lockstep group (experiment/lockstep_group.h): the fresh batches its group shares
// and its party. Its fit_seconds and wall_seconds are then its own thread's CPU time, since
// the group's runs take turns.
struct RunShare {
  SharedFreshBatches* batches = nullptr;
  int party = 0;
};

RunOutcome run_point_execute(const RunPoint& point, const RunShare& share = {});

// A run's test metrics (metrics_compute of the prediction, stored as test_*), their standard
// errors over the test samples (test_*_se), the test set's size (test_samples) and the
// per-slice series (metrics_compute_slices, stored as test_*_by_<label>).
void run_outcome_add_test(const Batch& test, const std::vector<double>& prediction,
                          RunOutcome& out);

// The end of a run, after the test metrics: the summary metrics of `train_metrics`
// (metric_is_summary: mse, nmse, accuracy or token_accuracy), stored as train_*; pass {} when
// there was no training set),
// the fit's scalars and series, fit_seconds; UserError if a metric is NaN or inf.
void run_outcome_add_fit(const std::vector<std::pair<std::string, double>>& train_metrics,
                         const FitLog& log, double fit_seconds, RunOutcome& out);

// Lossless text form, for passing an outcome from a worker process to the parent.
std::string run_outcome_encode(const RunOutcome& outcome);
RunOutcome run_outcome_decode(const std::string& text);  // ATTN_ASSERTs on malformed input

}  // namespace attn
