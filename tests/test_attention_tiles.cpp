// Tests of the fixed-order reductions of ops/attention_tiles.h that the fused kernels finish their
// dots and sums with (lane_sum, lane_sums / lane_sum_run, lane_dot, lane_dots / lane_dot_run,
// lane_max): each against the order the header documents, written out here one lane at a time
// (8 float lanes of 32-byte chunks summed in order, the lanes added pairwise, w = 4, 2, 1, then
// the tail in order), bit for bit, for row lengths around the chunk boundaries and for one to
// six rows at once. Compiled as plain x86-64, so these run the header's generic code; the kernels'
// AVX2 and AVX-512 copies are held to the same bits by test_attention_fused.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "attention_test_helpers.h"
#include "ops/attention_tiles.h"

namespace attn {
namespace {
using namespace attention_tiles;
using test_attention::random_vec;

constexpr int kLanes = 8;  // floats in a 32-byte chunk

// Σ x[t] · y[t] (y null: Σ x[t]) in the documented order, one lane at a time.
float documented_sum(const float* x, const float* y, int64_t n) {
  float lanes[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lanes[l] += y ? x[j + l] * y[j + l] : x[j + l];
  for (int w = kLanes / 2; w >= 1; w /= 2)
    for (int u = 0; u < w; ++u) lanes[u] += lanes[u + w];
  float sum = lanes[0];
  for (; j < n; ++j) sum += y ? x[j] * y[j] : x[j];
  return sum;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Rows with values of mixed magnitudes, so that the order of the adds shows in the last bits.
std::vector<float> rows_of(int64_t count, int64_t n, uint64_t seed, const char* stream) {
  std::vector<float> x = random_vec<float>(count * n + 1, seed, stream);
  for (size_t i = 0; i < x.size(); i += 5) x[i] *= 1e4f;
  return x;
}

TEST(AttentionTiles, SumsFollowTheDocumentedOrder) {
  for (int64_t n = 0; n <= 41; ++n)
    for (int64_t count = 1; count <= 6; ++count) {
      const std::vector<float> x = rows_of(count, n, uint64_t(n * 7 + count), "tiles.sum");
      std::vector<float> out(count, -1.f);
      lane_sum_run(out.data(), x.data(), n, n, count);
      for (int64_t m = 0; m < count; ++m) {
        const float want = documented_sum(x.data() + m * n, nullptr, n);
        EXPECT_TRUE(same_bits(out[m], want)) << "n=" << n << " count=" << count << " row " << m;
        EXPECT_TRUE(same_bits(lane_sum(x.data() + m * n, n), want)) << "n=" << n;
      }
    }
}

TEST(AttentionTiles, DotsFollowTheDocumentedOrder) {
  for (int64_t n = 0; n <= 41; ++n)
    for (int64_t count = 1; count <= 6; ++count) {
      const std::vector<float> x = rows_of(count, n, uint64_t(n * 11 + count), "tiles.dot.x");
      const std::vector<float> y = rows_of(count, n, uint64_t(n * 13 + count), "tiles.dot.y");
      // Rows of x against rows of y, and every row of x against y's first row (ys = 0).
      for (const int64_t ys : {n, int64_t(0)}) {
        std::vector<float> out(count, 5.f);
        lane_dot_run(out.data(), 1, true, x.data(), n, y.data(), ys, n, count);
        for (int64_t m = 0; m < count; ++m) {
          const float want = 5.f + documented_sum(x.data() + m * n, y.data() + m * ys, n);
          EXPECT_TRUE(same_bits(out[m], want))
              << "n=" << n << " count=" << count << " ys=" << ys << " row " << m;
        }
      }
    }
}

TEST(AttentionTiles, MaxIsTheLargestNonNanValue) {
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t n = 0; n <= 70; ++n) {
    std::vector<float> x = random_vec<float>(n + 1, uint64_t(n), "tiles.max", -3.0, -1.0);
    // Masked entries, a NaN (never the maximum) and, at some lengths, the maximum a ±0 pair.
    for (int64_t e = 0; e < n; e += 3) x[e] = -inf;
    if (n > 5) x[5] = std::nanf("");
    if (n > 9 && n % 2 == 0) x[n - 1] = 0.f, x[n / 2] = -0.f;
    float want = -inf;
    for (int64_t e = 0; e < n; ++e)
      if (x[e] > want) want = x[e];
    const float got = lane_max(x.data(), n, -inf);
    EXPECT_EQ(got, want) << "n=" << n;  // == : +0 and −0 alike (either may be returned)
    EXPECT_EQ(lane_max(x.data(), n, 7.f), 7.f) << "n=" << n;  // init above every entry
  }
}

}  // namespace
}  // namespace attn
