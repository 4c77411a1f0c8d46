// Helpers shared by the basic and LSTM op tests (test_ops_basic.cpp, test_ops_basic_norm.cpp,
// test_ops_lstm.cpp), the MlpBlock and state_concat_linear tests: seeded random vectors, casts,
// norm-wise relative error.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/rng.h"

namespace attn::test_ops_basic {

// n values uniform in [lo, hi) from the stream "test.ops.<stream>".
inline std::vector<double> random_vec(int64_t n, uint64_t seed, const std::string& stream,
                                      double lo = -1, double hi = 1) {
  Rng rng(seed, "test.ops." + stream, 0);
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = lo + (hi - lo) * rng.uniform();
  return v;
}

template <class T>
std::vector<T> cast(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

// max |a − b| / max |b| (or max |a − b| when b is all zero): the error of a against the
// reference b, relative to b's largest entry.
template <class A>
double rel_err(const std::vector<A>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double diff = 0, scale = 0;
  for (size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
    diff = std::max(diff, std::abs(static_cast<double>(a[k]) - b[k]));
    scale = std::max(scale, std::abs(b[k]));
  }
  return scale > 0 ? diff / scale : diff;
}

}  // namespace attn::test_ops_basic
