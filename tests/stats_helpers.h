// Statistical helpers for distribution tests: chi-square statistics and critical values.
// Seeds in the tests are fixed, so each test is deterministic; thresholds sit at about
// p = 1e-6 so that a correct sampler passes with any seed one might pick.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace attn::test {

// Pearson chi-square of observed counts against expected counts.
inline double chi_square(const std::vector<double>& observed, const std::vector<double>& expected) {
  double stat = 0.0;
  for (size_t k = 0; k < observed.size(); ++k) {
    const double diff = observed[k] - expected[k];
    stat += diff * diff / expected[k];
  }
  return stat;
}

// Upper critical value of chi-square with `df` degrees of freedom at standard-normal
// quantile z (Wilson-Hilferty); z = 4.75 is about p = 1e-6.
inline double chi_square_critical(double df, double z = 4.75) {
  const double a = 2.0 / (9.0 * df);
  return df * std::pow(1.0 - a + z * std::sqrt(a), 3.0);
}

// Standard normal CDF.
inline double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

}  // namespace attn::test
