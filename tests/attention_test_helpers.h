// Helpers shared by the attention op tests (test_ops_attention.cpp,
// test_ops_third_order.cpp): seeded random vectors, relative differences, token permutation.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "core/rng.h"

namespace attn::test_attention {

template <class T>
std::vector<T> random_vec(int64_t n, uint64_t seed, const char* stream, double lo = -1.5,
                          double hi = 1.5) {
  Rng rng(seed, stream, 0);
  std::vector<T> x(static_cast<size_t>(n));
  for (auto& v : x) v = static_cast<T>(lo + (hi - lo) * rng.uniform());
  return x;
}

// max |a − b| / max(1, max |b|).
template <class T>
double rel_diff(const std::vector<T>& a, const std::vector<T>& b) {
  EXPECT_EQ(a.size(), b.size());
  double num = 0, den = 1;
  for (size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
    den = std::max(den, std::abs(static_cast<double>(b[i])));
  }
  return num / den;
}

// Token permutation of a (B, N, rest) tensor: out[b, perm[t]] = x[b, t].
template <class T>
std::vector<T> permute_tokens(const std::vector<T>& x, int64_t B, int64_t N,
                              const std::vector<int64_t>& perm) {
  const int64_t rest = static_cast<int64_t>(x.size()) / (B * N);
  std::vector<T> y(x.size());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < N; ++t)
      std::copy_n(x.begin() + (b * N + t) * rest, rest, y.begin() + (b * N + perm[t]) * rest);
  return y;
}

template <class T>
std::vector<T> cast(const std::vector<double>& x) {
  return std::vector<T>(x.begin(), x.end());
}

}  // namespace attn::test_attention
