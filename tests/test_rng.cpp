// Counter-based RNG: determinism by (seed, stream, index) and the distribution of every
// helper (moments and chi-square tests).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "core/fnv.h"
#include "core/rng.h"
#include "stats_helpers.h"

namespace attn {
namespace {

using test::chi_square;
using test::chi_square_critical;

TEST(Rng, SameSeedStreamIndexGivesSameSequence) {
  Rng a(42, "test.stream", 7), b(42, "test.stream", 7);
  for (int k = 0; k < 1000; ++k) ASSERT_EQ(a.next_u32(), b.next_u32());
}

TEST(Rng, SeedStreamAndIndexEachChangeTheSequence) {
  auto first = [](uint64_t seed, const char* stream, uint64_t index) {
    Rng r(seed, stream, index);
    return r.next_u64();
  };
  const uint64_t base = first(1, "s", 0);
  EXPECT_NE(base, first(2, "s", 0));
  EXPECT_NE(base, first(1, "t", 0));
  EXPECT_NE(base, first(1, "s", 1));
  EXPECT_NE(base, first(1, "s", uint64_t{1} << 32));  // high index bits are used too
}

TEST(Rng, StreamNameAndKeyConstructorsAgree) {
  Rng a(5, "qsa.z", 3), b(5, rng_stream_key("qsa.z"), 3);
  for (int k = 0; k < 100; ++k) ASSERT_EQ(a.next_u32(), b.next_u32());
}

TEST(Rng, UniformChiSquareOn100Bins) {
  Rng r(1, "test.uniform", 0);
  const int bins = 100, n = 200000;
  std::vector<double> counts(bins, 0.0);
  for (int k = 0; k < n; ++k) {
    const double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    counts[static_cast<int>(u * bins)] += 1;
  }
  EXPECT_LT(chi_square(counts, std::vector<double>(bins, n / double(bins))),
            chi_square_critical(bins - 1));
}

TEST(Rng, UniformOpenNeverZero) {
  Rng r(2, "test.open", 0);
  for (int k = 0; k < 100000; ++k) {
    const double u = r.uniform_open();
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(Rng, UniformIntIsUnbiased) {
  for (uint64_t m : {uint64_t{2}, uint64_t{7}, uint64_t{1000}}) {
    Rng r(3, "test.int", m);
    const int n = 100000 + 200 * static_cast<int>(m);
    std::vector<double> counts(m, 0.0);
    for (int k = 0; k < n; ++k) {
      const uint64_t v = r.uniform_int(m);
      ASSERT_LT(v, m);
      counts[v] += 1;
    }
    EXPECT_LT(chi_square(counts, std::vector<double>(m, n / double(m))),
              chi_square_critical(double(m) - 1))
        << "m = " << m;
  }
}

TEST(Rng, GaussianMomentsAndChiSquare) {
  Rng r(4, "test.gauss", 0);
  const int n = 400000;
  std::vector<double> x(n);
  rng_gaussian(r, x.data(), n);
  double m1 = 0, m2 = 0, m3 = 0, m4 = 0;
  for (double v : x) {
    m1 += v;
    m2 += v * v;
    m3 += v * v * v;
    m4 += v * v * v * v;
  }
  m1 /= n, m2 /= n, m3 /= n, m4 /= n;
  // Standard errors: mean 1/sqrt(n), var sqrt(2/n), third moment sqrt(15/n), fourth sqrt(96/n).
  EXPECT_NEAR(m1, 0.0, 5 / std::sqrt(n));
  EXPECT_NEAR(m2, 1.0, 5 * std::sqrt(2.0 / n));
  EXPECT_NEAR(m3, 0.0, 5 * std::sqrt(15.0 / n));
  EXPECT_NEAR(m4, 3.0, 5 * std::sqrt(96.0 / n));
  // 40 equiprobable bins from the normal CDF.
  const int bins = 40;
  std::vector<double> counts(bins, 0.0);
  for (double v : x) counts[std::min(bins - 1, static_cast<int>(test::normal_cdf(v) * bins))] += 1;
  EXPECT_LT(chi_square(counts, std::vector<double>(bins, n / double(bins))),
            chi_square_critical(bins - 1));
}

TEST(Rng, SphereHasRadiusZeroMeanAndIsotropicCovariance) {
  const int d = 5, n = 100000;
  Rng r(5, "test.sphere", 0);
  std::vector<double> x(d), mean(d, 0.0), cov(d * d, 0.0);
  for (int k = 0; k < n; ++k) {
    rng_sphere(r, x.data(), d, 2.0);
    double norm2 = 0;
    for (int a = 0; a < d; ++a) norm2 += x[a] * x[a];
    ASSERT_NEAR(std::sqrt(norm2), 2.0, 1e-12);
    for (int a = 0; a < d; ++a) {
      mean[a] += x[a] / n;
      for (int b = 0; b < d; ++b) cov[a * d + b] += x[a] * x[b] / n;
    }
  }
  // E x = 0, E x x^T = (r^2/d) I; coordinate variance 4/5 and E x_a^4 = 3 r^4/(d(d+2)).
  for (int a = 0; a < d; ++a) {
    EXPECT_NEAR(mean[a], 0.0, 5 * std::sqrt(0.8 / n));
    for (int b = 0; b < d; ++b) EXPECT_NEAR(cov[a * d + b], a == b ? 0.8 : 0.0, 0.02);
  }
}

TEST(Rng, SphereCoordinateIsUniformInThreeDimensions) {
  // Archimedes: on S^2 each coordinate is uniform on [-1, 1].
  Rng r(6, "test.sphere3", 0);
  const int bins = 50, n = 200000;
  std::vector<double> counts(bins, 0.0), x(3);
  for (int k = 0; k < n; ++k) {
    rng_sphere(r, x.data(), 3);
    counts[std::min(bins - 1, static_cast<int>((x[2] + 1.0) / 2.0 * bins))] += 1;
  }
  EXPECT_LT(chi_square(counts, std::vector<double>(bins, n / double(bins))),
            chi_square_critical(bins - 1));
}

TEST(Rng, BallRadiusFollowsRToTheD) {
  // Uniform in the ball of R^d: P(|x| <= t) = t^d, so |x|^d is uniform on [0, 1].
  const int d = 4, bins = 50, n = 200000;
  Rng r(7, "test.ball", 0);
  std::vector<double> counts(bins, 0.0), x(d);
  for (int k = 0; k < n; ++k) {
    rng_ball(r, x.data(), d);
    double norm2 = 0;
    for (double v : x) norm2 += v * v;
    ASSERT_LE(norm2, 1.0 + 1e-12);
    const double u = std::pow(std::sqrt(norm2), d);
    counts[std::min(bins - 1, static_cast<int>(u * bins))] += 1;
  }
  EXPECT_LT(chi_square(counts, std::vector<double>(bins, n / double(bins))),
            chi_square_critical(bins - 1));
}

TEST(Rng, SubsetIsSortedDistinctAndEverySubsetEquallyLikely) {
  // All C(6, 3) = 20 subsets of {0..5} should be equally likely.
  Rng r(8, "test.subset", 0);
  const int n = 100000;
  std::map<std::vector<int64_t>, double> counts;
  std::vector<int64_t> s(3);
  for (int k = 0; k < n; ++k) {
    rng_subset(r, 6, 3, s.data());
    ASSERT_TRUE(std::is_sorted(s.begin(), s.end()));
    ASSERT_EQ(std::set<int64_t>(s.begin(), s.end()).size(), 3u);
    ASSERT_GE(s.front(), 0);
    ASSERT_LT(s.back(), 6);
    counts[s] += 1;
  }
  ASSERT_EQ(counts.size(), 20u);
  std::vector<double> observed;
  for (auto& [key, c] : counts) observed.push_back(c);
  EXPECT_LT(chi_square(observed, std::vector<double>(20, n / 20.0)), chi_square_critical(19));
}

TEST(Rng, SubsetEdgeCases) {
  Rng r(9, "test.subset.edge", 0);
  std::vector<int64_t> s(5);
  rng_subset(r, 5, 5, s.data());
  EXPECT_EQ(s, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  rng_subset(r, 5, 0, s.data());  // nothing to draw, must not touch or crash
}

TEST(Rng, SubsetExcludingNeverContainsTheExcludedIndexAndIsUniform) {
  Rng r(10, "test.subset.excl", 0);
  const int n = 60000, N = 7, q = 2, excluded = 3;
  std::vector<double> counts(N, 0.0);
  std::vector<int64_t> s(q);
  for (int k = 0; k < n; ++k) {
    rng_subset_excluding(r, N, q, excluded, s.data());
    ASSERT_TRUE(std::is_sorted(s.begin(), s.end()));
    for (int64_t v : s) {
      ASSERT_NE(v, excluded);
      counts[v] += 1;
    }
  }
  counts.erase(counts.begin() + excluded);
  // Each of the 6 allowed elements is in the subset with probability q / 6.
  EXPECT_LT(chi_square(counts, std::vector<double>(N - 1, n * q / 6.0)), chi_square_critical(5));
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// The published FNV-1a 64 test vectors, and chaining: hashing a then b from a's hash is
// hashing a+b. Stream keys are this hash of the name.
TEST(Fnv1a, PublishedVectorsAndChaining) {
  EXPECT_EQ(fnv1a_64("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a_64("a", 1), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a_64("foobar", 6), 0x85944171f73967e8ull);
  EXPECT_EQ(fnv1a_64("bar", 3, fnv1a_64("foo", 3)), fnv1a_64("foobar", 6));
  EXPECT_EQ(rng_stream_key("qsa.z"), fnv1a_64("qsa.z", 5));
}

}  // namespace
}  // namespace attn
