// Metric formulas on the entries of Y, for every target kind (definitions in metrics.h):
// mse, nmse, max_abs_err, mean_max_pos_err, max_pos_err, success_rate; for categorical targets
// over the labelled positions only (metric_table.h says why).
//
// Shapes: Y and the prediction f are n × T_out × d_out (K = T_out·d_out per sample). Sums run
// in long double in entry order (sample, position, component), as the previous release's one
// loop did, so values and standard errors of real and binary targets (every position labelled)
// are bit-identical to it.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "train/metric_table.h"

#pragma GCC diagnostic error "-Wswitch"  // metric_position_counted: every TargetKind

namespace attn {
namespace {

// Σ_k (f − y)² over the d_out components of output position i of sample j.
long double position_sq_err(const MetricInput& in, int64_t j, int64_t i) {
  const double* y = in.data.Y.data();
  long double pos_se = 0;
  for (int64_t k = 0; k < in.d_out; ++k) {
    const int64_t e = j * in.K + i * in.d_out + k;
    const long double diff = static_cast<long double>(in.f[e]) - y[e];
    pos_se += diff * diff;
  }
  return pos_se;
}

// max over the labelled positions i of ‖f_i − y_i‖₂ for sample j (0 when none is labelled).
double sample_max_pos_err(const MetricInput& in, int64_t j) {
  double sample_max = 0;
  for (int64_t i = 0; i < in.T_out; ++i)
    if (metric_position_counted(in, j, i))
      sample_max = std::max(sample_max, static_cast<double>(std::sqrt(position_sq_err(in, j, i))));
  return sample_max;
}

// Whether entry e (flat index into Y) lies in a labelled position.
bool entry_labelled(const MetricInput& in, int64_t e) {
  return metric_position_counted(in, e / in.K, (e % in.K) / in.d_out);
}

}  // namespace

bool metric_position_counted(const MetricInput& in, int64_t j, int64_t i) {
  switch (in.kind) {
    case TargetKind::real:
    case TargetKind::binary: return true;
    case TargetKind::categorical:
      if (in.counted && in.counted[j * in.T_out + i] == 0) return false;
      return !target_row_ignored(in.data.Y.data() + j * in.K + i * in.d_out, in.d_out);
  }
  ATTN_ASSERT(false, "metric_position_counted: unknown target kind");
}

double metric_sample_mean_se(int64_t n, long double mean, long double sq) {
  if (n < 2) return 0.0;
  const long double var = std::max(0.0L, (sq - n * mean * mean) / (n - 1));
  return static_cast<double>(std::sqrt(var / n));
}

double metric_ratio_se(const std::vector<long double>& a, const std::vector<int64_t>& m,
                       long double a_total, int64_t m_total) {
  const int64_t n = static_cast<int64_t>(a.size());
  if (n < 2) return 0.0;
  ATTN_ASSERT(m_total > 0, "metric_ratio_se needs a positive denominator");
  const long double r = a_total / m_total;
  long double sq = 0;
  for (int64_t j = 0; j < n; ++j) {
    const long double d = a[j] - r * m[j];
    sq += d * d;
  }
  const long double mean_m = static_cast<long double>(m_total) / n;
  return static_cast<double>(std::sqrt(sq / (static_cast<long double>(n) * (n - 1))) / mean_m);
}

// Real and binary targets: the mean over all entries, se over the per-sample means (every
// sample has K entries). Categorical: over the labelled entries, se by the ratio estimator.
MetricValue metric_mse(const MetricInput& in) {
  long double se_sum = 0, sample_se_sq = 0;
  std::vector<long double> sample_sums(static_cast<size_t>(in.n));
  std::vector<int64_t> sample_entries(static_cast<size_t>(in.n));
  int64_t entries = 0;
  for (int64_t j = 0; j < in.n; ++j) {
    long double sample_se = 0;
    for (int64_t i = 0; i < in.T_out; ++i) {
      if (!metric_position_counted(in, j, i)) continue;
      const long double pos_se = position_sq_err(in, j, i);
      se_sum += pos_se;
      sample_se += pos_se;
      sample_entries[j] += in.d_out;
    }
    const long double sample_mse = sample_se / in.K;
    sample_se_sq += sample_mse * sample_mse;
    sample_sums[j] = sample_se;
    entries += sample_entries[j];
  }
  if (in.kind == TargetKind::categorical)
    return {static_cast<double>(se_sum / entries),
            metric_ratio_se(sample_sums, sample_entries, se_sum, entries)};
  return {static_cast<double>(se_sum / in.total),
          metric_sample_mean_se(in.n, se_sum / in.total, sample_se_sq)};
}

// Var(targets) over the labelled entries (all of them for real and binary targets).
MetricValue metric_nmse(const MetricInput& in) {
  const MetricValue mse = metric_mse(in);
  const double* y = in.data.Y.data();
  long double y_sum = 0;
  int64_t count = 0;
  for (int64_t e = 0; e < in.total; ++e)
    if (entry_labelled(in, e)) {
      y_sum += y[e];
      ++count;
    }
  const long double y_mean = y_sum / static_cast<long double>(count);
  long double var_sum = 0;
  for (int64_t e = 0; e < in.total; ++e) {
    if (!entry_labelled(in, e)) continue;
    const long double centred = y[e] - y_mean;
    var_sum += centred * centred;
  }
  const double var = static_cast<double>(var_sum / count);
  double nmse = mse.value;
  if (var > 0) {
    const double ratio = mse.value / var;
    if (std::isfinite(ratio)) nmse = ratio;
  }
  return {nmse, nmse == mse.value ? mse.se : mse.se / var};
}

MetricValue metric_max_abs_err(const MetricInput& in) {
  const double* y = in.data.Y.data();
  double max_abs = 0;
  for (int64_t e = 0; e < in.total; ++e) {
    if (!entry_labelled(in, e)) continue;
    const long double diff = static_cast<long double>(in.f[e]) - y[e];
    max_abs = std::max(max_abs, static_cast<double>(std::fabs(diff)));
  }
  return {max_abs, 0};
}

MetricValue metric_mean_max_pos_err(const MetricInput& in) {
  long double pos_err_sum = 0, pos_err_sq = 0;
  for (int64_t j = 0; j < in.n; ++j) {
    const double sample_max = sample_max_pos_err(in, j);
    pos_err_sum += sample_max;
    pos_err_sq += static_cast<long double>(sample_max) * sample_max;
  }
  return {static_cast<double>(pos_err_sum / in.n),
          metric_sample_mean_se(in.n, pos_err_sum / in.n, pos_err_sq)};
}

MetricValue metric_max_pos_err(const MetricInput& in) {
  double max_pos = 0;
  for (int64_t j = 0; j < in.n; ++j) max_pos = std::max(max_pos, sample_max_pos_err(in, j));
  return {max_pos, 0};
}

MetricValue metric_success_rate(const MetricInput& in) {
  const RawArray* threshold = named_array_find(in.data, NamedArray::success_threshold);
  ATTN_ASSERT(threshold != nullptr);
  int64_t successes = 0;
  for (int64_t j = 0; j < in.n; ++j) successes += sample_max_pos_err(in, j) <= threshold->f64[0];
  const long double p = static_cast<long double>(successes) / in.n;
  return {static_cast<double>(successes) / static_cast<double>(in.n),
          metric_sample_mean_se(in.n, p, static_cast<long double>(successes))};
}

}  // namespace attn
