// Student-t intervals, slopes and seed counts for claim verdicts (see claim_stats.h).
// The t distribution through the regularised incomplete beta function, evaluated by its
// continued fraction (modified Lentz); quantiles by bisection on the distribution function.
#include "experiment/claim_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn {
namespace {

// The continued fraction of I_x(a, b), for x < (a + 1) / (a + b + 2).
double beta_fraction(double a, double b, double x) {
  const double tiny = 1e-300, eps = 1e-16;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 10000; ++m) {
    const double m2 = 2.0 * m;
    double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    for (int half = 0; half < 2; ++half) {
      d = 1 + num * d;
      if (std::fabs(d) < tiny) d = tiny;
      c = 1 + num / c;
      if (std::fabs(c) < tiny) c = tiny;
      d = 1 / d;
      const double step = d * c;
      h *= step;
      if (half == 1 && std::fabs(step - 1) < eps) return h;
      num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    }
  }
  return h;
}

// The regularised incomplete beta function I_x(a, b).
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

}  // namespace

double student_t_cdf(double t, double df) {
  if (std::isinf(t)) return t > 0 ? 1 : 0;
  const double tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));
  return t > 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, double df) {
  if (p == 0.5) return 0;
  if (p < 0.5) return -student_t_quantile(1 - p, df);
  double lo = 0, hi = 1;
  while (student_t_cdf(hi, df) < p && hi < 1e300) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-14 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

Interval sample_interval(const Sample& s, double level) {
  Interval iv;
  const int k = static_cast<int>(s.values.size());
  iv.seeds = k;
  if (k == 0) return iv;
  double sum = 0;
  for (double v : s.values) sum += v;
  iv.mean = sum / k;
  if (k >= 2) {
    double ss = 0;
    for (double v : s.values) ss += (v - iv.mean) * (v - iv.mean);
    iv.se = std::sqrt(ss / (k - 1) / k);
    iv.df = k - 1;
  } else if (s.se_hint >= 0 && s.df_hint > 0) {
    iv.se = s.se_hint;
    iv.df = s.df_hint;
  } else {
    iv.lo = iv.hi = iv.mean;
    return iv;
  }
  const double half = student_t_quantile(level, iv.df) * iv.se;
  iv.ok = true;
  iv.lo = iv.mean - half;
  iv.hi = iv.mean + half;
  return iv;
}

Slope slope_fit(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = x.size();
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  Slope s;
  s.slope = sxy / sxx;
  if (n >= 3) {
    double rss = 0;
    for (size_t i = 0; i < n; ++i) {
      const double r = y[i] - my - s.slope * (x[i] - mx);
      rss += r * r;
    }
    s.df = static_cast<double>(n - 2);
    s.se = std::sqrt(rss / s.df / sxx);
  }
  return s;
}

double fraction_standard_error(double p, double n, double se) {
  const double shrunk = (n * p + 2) / (n + 4);
  return std::max(se, std::sqrt(shrunk * (1 - shrunk) / (n + 4)));
}

int seeds_to_decide(const Interval& iv, double bar, double level) {
  if (iv.seeds < 2 || !(iv.se > 0)) return 0;
  const double effect = std::fabs(iv.mean - bar);
  if (effect == 0) return 0;
  const double sd = iv.se * std::sqrt(static_cast<double>(iv.seeds));
  for (int k = iv.seeds + 1; k <= 100000; k += (k < 1000 ? 1 : k / 100))
    if (student_t_quantile(level, k - 1) * sd / std::sqrt(static_cast<double>(k)) < effect)
      return k;
  return 100000;
}

}  // namespace attn
