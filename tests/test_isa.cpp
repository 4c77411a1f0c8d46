// The float element-wise kernels (ops/vmath.h) against double on dense grids, their exact values
// at the ends (±0, ±inf, NaN), and the AVX2 copy against the generic one (ops/isa.h): same bits.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "isa_test_helpers.h"
#include "ops/isa.h"
#include "ops/vmath.h"

namespace attn {
namespace {

std::vector<float> grid(float lo, float hi, int n) {
  std::vector<float> x;
  for (int k = 0; k <= n; ++k) x.push_back(lo + (hi - lo) * static_cast<float>(k) / static_cast<float>(n));
  return x;
}

// Worst relative error of f against ref over x (skipping exact zeros of ref).
template <class F, class R>
double worst_rel(const std::vector<float>& x, F f, R ref) {
  std::vector<float> y(x.size());
  f(y.data(), x.data(), static_cast<int64_t>(x.size()));
  double worst = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    const double r = ref(static_cast<double>(x[k]));
    if (r != 0) worst = std::max(worst, std::abs(y[k] - r) / std::abs(r));
  }
  return worst;
}

TEST(Vmath, TanhIsAccurateNearZeroAndEverywhere) {
  const auto tanh_ref = [](double v) { return std::tanh(v); };
  EXPECT_LE(worst_rel(grid(-100, 100, 2000000), vmath_tanh<float>, tanh_ref), 3e-7);
  EXPECT_LE(worst_rel(grid(-1e-3f, 1e-3f, 200000), vmath_tanh<float>, tanh_ref), 3e-7);
  std::vector<float> tiny{1e-30f, -1e-38f, 1e-44f};  // down to denormals: tanh x = x
  EXPECT_LE(worst_rel(tiny, vmath_tanh<float>, tanh_ref), 3e-7);
}

TEST(Vmath, SigmoidIsAccurate) {
  const auto sigmoid_ref = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  EXPECT_LE(worst_rel(grid(-87, 100, 2000000), vmath_sigmoid<float>, sigmoid_ref), 2.5e-7);
}

TEST(Vmath, ExactValuesAtTheEnds) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x{0.0f, -0.0f, inf, -inf, nan, 20.0f, -20.0f}, t(x.size()), s(x.size());
  vmath_tanh<float>(t.data(), x.data(), static_cast<int64_t>(x.size()));
  vmath_sigmoid<float>(s.data(), x.data(), static_cast<int64_t>(x.size()));
  EXPECT_EQ(t[0], 0.0f);
  EXPECT_FALSE(std::signbit(t[0]));
  EXPECT_EQ(t[1], 0.0f);
  EXPECT_TRUE(std::signbit(t[1]));
  EXPECT_EQ(t[2], 1.0f);
  EXPECT_EQ(t[3], -1.0f);
  EXPECT_TRUE(std::isnan(t[4]));
  EXPECT_EQ(t[5], 1.0f);
  EXPECT_EQ(t[6], -1.0f);
  EXPECT_EQ(s[0], 0.5f);
  EXPECT_EQ(s[2], 1.0f);
  EXPECT_GT(s[3], 0.0f);  // exp(−87)-sized, never a denormal
  EXPECT_LE(s[3], 1.7e-38f);
  EXPECT_TRUE(std::isnan(s[4]));
}

TEST(Vmath, AvxAndGenericCopiesGiveTheSameBits) {
  auto x = grid(-100, 100, 1000003);
  const auto more = grid(-1e-3f, 1e-3f, 100001);
  x.insert(x.end(), more.begin(), more.end());
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {std::numeric_limits<float>::quiet_NaN(), inf, -inf, 0.0f, -0.0f, 1e-40f, -1e-44f,
                  std::numeric_limits<float>::min(), 150.0f, -1e30f, std::numeric_limits<float>::max()})
    x.push_back(v);
  std::vector<float> nonpositive;
  for (float v : x) nonpositive.push_back(-std::abs(v));
  using Fn = void (*)(float*, const float*, int64_t);
  const struct {
    Fn f;
    const std::vector<float>* in;
    const char* name;
  } cases[] = {{vmath_sigmoid<float>, &x, "sigmoid"},
               {vmath_tanh<float>, &x, "tanh"},
               {vmath_exp_nonpositive<float>, &nonpositive, "exp"}};
  for (const auto& c : cases) {
    const auto both = test::in_both_copies([&] {
      std::vector<float> y(c.in->size());
      c.f(y.data(), c.in->data(), static_cast<int64_t>(c.in->size()));
      return y;
    });
    if (!both) return;  // one copy only (checked by in_both_copies)
    const auto& [a, b] = *both;
    for (size_t k = 0; k < a.size(); ++k) {
      ASSERT_EQ(std::bit_cast<uint32_t>(a[k]), std::bit_cast<uint32_t>(b[k])) << c.name << " " << (*c.in)[k];
    }
  }
}

}  // namespace
}  // namespace attn
