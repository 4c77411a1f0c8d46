// Metric formulas on the entries of Y, for every target kind (definitions in metrics.h):
// mse, nmse, max_abs_err, mean_max_pos_err, max_pos_err, success_rate.
//
// Shapes: Y and the prediction f are n × T_out × d_out (K = T_out·d_out per sample). Sums run
// in long double in entry order (sample, position, component), as the previous release's one
// loop did, so values and standard errors are bit-identical to it.
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "train/metric_table.h"

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

// max over positions i of ‖f_i − y_i‖₂ for sample j.
double sample_max_pos_err(const MetricInput& in, int64_t j) {
  double sample_max = 0;
  for (int64_t i = 0; i < in.T_out; ++i)
    sample_max = std::max(sample_max, static_cast<double>(std::sqrt(position_sq_err(in, j, i))));
  return sample_max;
}

}  // namespace

double metric_sample_mean_se(int64_t n, long double mean, long double sq) {
  if (n < 2) return 0.0;
  const long double var = std::max(0.0L, (sq - n * mean * mean) / (n - 1));
  return static_cast<double>(std::sqrt(var / n));
}

MetricValue metric_mse(const MetricInput& in) {
  long double se_sum = 0, sample_se_sq = 0;
  for (int64_t j = 0; j < in.n; ++j) {
    long double sample_se = 0;
    for (int64_t i = 0; i < in.T_out; ++i) {
      const long double pos_se = position_sq_err(in, j, i);
      se_sum += pos_se;
      sample_se += pos_se;
    }
    const long double sample_mse = sample_se / in.K;
    sample_se_sq += sample_mse * sample_mse;
  }
  return {static_cast<double>(se_sum / in.total),
          metric_sample_mean_se(in.n, se_sum / in.total, sample_se_sq)};
}

MetricValue metric_nmse(const MetricInput& in) {
  const MetricValue mse = metric_mse(in);
  const double* y = in.data.Y.data();
  long double y_sum = 0;
  for (int64_t e = 0; e < in.total; ++e) y_sum += y[e];
  const long double y_mean = y_sum / static_cast<long double>(in.total);
  long double var_sum = 0;
  for (int64_t e = 0; e < in.total; ++e) {
    const long double centred = y[e] - y_mean;
    var_sum += centred * centred;
  }
  const double var = static_cast<double>(var_sum / in.total);
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
