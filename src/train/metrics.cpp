// Metrics of a prediction against a batch's targets (definitions in metrics.h): the metric
// table (train/metric_table.h) and the pass that checks the inputs and runs its rows.
//
// Shapes: Y and prediction n × T_out × d_out, row-major.
#include "train/metrics.h"

#include <cmath>
#include <string>

#include "core/error.h"
#include "train/metric_table.h"

// A metric row that leaves out a field does not compile, nor does a switch below (over
// TargetKind, MetricSe, MetricSummary) that misses a value.
#pragma GCC diagnostic error "-Wmissing-field-initializers"
#pragma GCC diagnostic error "-Wswitch"

namespace attn {
namespace {

constexpr unsigned kBinary = metric_kind_bit(TargetKind::binary);
constexpr unsigned kCategorical = metric_kind_bit(TargetKind::categorical);
constexpr unsigned kRealOrBinary = metric_kind_bit(TargetKind::real) | kBinary;

// The batch's metric_mask (n × T_out values, each 0 or 1), or null when it has none; UserError
// when it has one of the wrong size or values, or for targets that are not categorical.
const int64_t* metric_mask_find(const Batch& data, TargetKind kind) {
  const RawArray* mask = named_array_find(data, NamedArray::metric_mask);
  if (!mask) return nullptr;
  ATTN_CHECK(kind == TargetKind::categorical,
             "metrics: the array 'metric_mask' applies to categorical targets only; these are " +
                 std::string(choice_name(kind, kTargetKinds)) + " (drop the array)");
  ATTN_CHECK(mask->spec.sample_shape[0] == data.shape.T_out,
             "metrics: the array 'metric_mask' has " + std::to_string(mask->spec.sample_shape[0]) +
                 " values per sample but the targets have T_out = " +
                 std::to_string(data.shape.T_out) + " positions");
  for (int64_t v : mask->i64)
    ATTN_CHECK(v == 0 || v == 1, "metrics: the array 'metric_mask' holds " + std::to_string(v) +
                                     "; each value must be 0 or 1");
  return mask->i64.data();
}

// Finite predictions and targets, and targets valid for their kind (UserError otherwise).
void metrics_check_values(const Batch& data, const double* f, TargetKind kind,
                          const int64_t* mask) {
  const int64_t total = static_cast<int64_t>(data.Y.size()), d_out = data.shape.d_out;
  const double* y = data.Y.data();
  for (int64_t e = 0; e < total; ++e) {
    if (!std::isfinite(f[e]))
      throw UserError("the model produced NaN/inf predictions (entry " + std::to_string(e) +
                      " of " + std::to_string(total) +
                      "); the fit diverged or is ill-posed: try a larger model.lambda, a smaller "
                      "learning rate or more training samples");
    ATTN_CHECK(std::isfinite(y[e]), "metrics: the batch has a NaN/inf target (entry " +
                                        std::to_string(e) + ")");
  }
  switch (kind) {
    case TargetKind::real: return;
    case TargetKind::binary:
      for (int64_t e = 0; e < total; ++e)
        ATTN_CHECK(y[e] == 0.0 || y[e] == 1.0,
                   "metrics: the task declares binary targets but target entry " +
                       std::to_string(e) + " is " + std::to_string(y[e]) + ", not 0 or 1");
      return;
    case TargetKind::categorical:
      ATTN_CHECK(d_out >= 2, "metrics: categorical targets need d_out >= 2 classes, got " +
                                 std::to_string(d_out));
      int64_t counted = 0;
      for (int64_t p = 0; p < total / d_out; ++p) {
        int64_t ones = 0;
        for (int64_t k = 0; k < d_out; ++k) {
          const double v = y[p * d_out + k];
          ATTN_CHECK(v == 0.0 || v == 1.0, "metrics: categorical target row " + std::to_string(p) +
                                               " has an entry " + std::to_string(v) +
                                               "; each position must be one-hot or all zero");
          ones += v == 1.0;
        }
        ATTN_CHECK(ones <= 1, "metrics: categorical target row " + std::to_string(p) +
                                  " has several ones; each position must be one-hot or all zero");
        counted += ones == 1 && (!mask || mask[p] != 0);
      }
      // Before any row runs: the per-entry metrics divide by the counted entries.
      ATTN_CHECK(counted > 0,
                 mask ? "metrics: no output position of the batch counts (all-zero target rows "
                        "or metric_mask 0); categorical metrics need at least one"
                      : "metrics: every output position of the batch is ignored (all-zero target "
                        "rows); categorical metrics need at least one labelled position");
      return;
  }
  ATTN_ASSERT(false, "metrics: unknown target kind");
}

}  // namespace

bool metric_row_applies(const MetricRow& row, const Batch& data, TargetKind kind) {
  if ((row.kinds & metric_kind_bit(kind)) == 0) return false;
  if (row.needs.empty()) return true;
  if (!named_array_find(data, row.needs[0])) return false;
  for (size_t k = 1; k < row.needs.size(); ++k)
    ATTN_CHECK(named_array_find(data, row.needs[k]) != nullptr,
               std::string("metrics: a batch with the array '") +
                   named_array_info(row.needs[0]).name + "' needs the array '" +
                   named_array_info(row.needs[k]).name + "' for metric " + row.name + " (" +
                   named_array_info(row.needs[k]).meaning + ")");
  return true;
}

const std::vector<MetricRow>& metric_table() {
  // Per-entry errors apply to every kind, over the labelled positions (metric_table.h); mse and
  // nmse have a row per standard-error method. Summary metrics are also stored as train_NAME.
  using S = MetricSe;
  constexpr MetricSummary yes = MetricSummary::yes, no = MetricSummary::no;
  constexpr MetricSliced sliced = MetricSliced::yes, whole = MetricSliced::no;
  static const std::vector<NamedArray> threshold = {NamedArray::success_threshold},
                                       disj = {NamedArray::disjoint, NamedArray::query_position,
                                               NamedArray::disj_threshold};
  static const std::vector<MetricRow> table = {
      {"mse", kRealOrBinary, {}, S::sample_mean, yes, whole, metric_mse},
      {"mse", kCategorical, {}, S::position_mean, yes, whole, metric_mse},
      {"nmse", kRealOrBinary, {}, S::sample_mean, yes, whole, metric_nmse},
      {"nmse", kCategorical, {}, S::position_mean, yes, whole, metric_nmse},
      {"max_abs_err", kMetricAllKinds, {}, S::none, no, whole, metric_max_abs_err},
      {"mean_max_pos_err", kMetricAllKinds, {}, S::sample_mean, no, whole, metric_mean_max_pos_err},
      {"max_pos_err", kMetricAllKinds, {}, S::none, no, whole, metric_max_pos_err},
      {"success_rate", kMetricAllKinds, threshold, S::sample_fraction, no, whole,
       metric_success_rate},
      {"accuracy", kBinary, {}, S::sample_mean, yes, whole, metric_accuracy},
      {"balanced_accuracy", kBinary, {}, S::none, no, whole, metric_balanced_accuracy},
      {"exact_match", kBinary, {}, S::sample_fraction, no, whole, metric_exact_match_binary},
      {"token_accuracy", kCategorical, {}, S::position_fraction, yes, whole, metric_token_accuracy},
      {"token_error", kCategorical, {}, S::position_fraction, no, sliced, metric_token_error},
      {"exact_match",
       kCategorical,
       {},
       S::sample_fraction,
       no,
       whole,
       metric_exact_match_categorical},
      {"disj_accuracy", kMetricAllKinds, disj, S::none, no, whole, metric_disj_accuracy},
  };
  return table;
}

MetricInput metric_input_make(const Batch& data, const std::vector<double>& prediction) {
  const int64_t n = data.n, T_out = data.shape.T_out, d_out = data.shape.d_out;
  const int64_t K = T_out * d_out, total = n * K;
  ATTN_CHECK(total >= 1 && static_cast<int64_t>(data.Y.size()) == total,
             "metrics: the batch holds no targets (n × T_out × d_out = " + std::to_string(total) +
                 ")");
  ATTN_CHECK(static_cast<int64_t>(prediction.size()) == total,
             "metrics: the prediction has " + std::to_string(prediction.size()) +
                 " values but the batch has n × T_out × d_out = " + std::to_string(total) +
                 " targets");
  const TargetKind kind = target_kind_of(data.shape.target, data.Y);
  const int64_t* mask = metric_mask_find(data, kind);
  metrics_check_values(data, prediction.data(), kind, mask);
  return MetricInput{data, prediction.data(), kind, n, T_out, d_out, K, total, mask};
}

std::vector<std::pair<std::string, double>> metrics_compute(
    const Batch& data, const std::vector<double>& prediction,
    std::vector<std::pair<std::string, double>>* standard_errors) {
  const MetricInput in = metric_input_make(data, prediction);
  std::vector<std::pair<std::string, double>> out;
  if (standard_errors) standard_errors->clear();
  for (const MetricRow& row : metric_table()) {
    if (!metric_row_applies(row, data, in.kind)) continue;
    const MetricValue v = row.formula(in);
    out.emplace_back(row.name, v.value);
    if (standard_errors && row.se != MetricSe::none)
      standard_errors->emplace_back(std::string(row.name) + "_se", v.se);
  }
  return out;
}

bool metric_is_sample_fraction(const std::string& name) {
  for (const MetricRow& row : metric_table()) {
    if (name != row.name) continue;
    switch (row.se) {
      case MetricSe::sample_fraction:
      case MetricSe::position_fraction: return true;
      case MetricSe::none:
      case MetricSe::sample_mean:
      case MetricSe::position_mean: return false;
    }
  }
  return false;
}

bool metric_is_summary(const std::string& name) {
  for (const MetricRow& row : metric_table()) {
    if (name != row.name) continue;
    switch (row.summary) {
      case MetricSummary::yes: return true;
      case MetricSummary::no: break;
    }
  }
  return false;
}

}  // namespace attn
