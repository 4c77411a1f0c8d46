// The float linear map's products on FMA register tiles (ops/linear.cpp's shapes): every entry
// bit for bit the fused multiply-add chain over its terms in order (std::fma), added to what the
// buffer held (or written as it is: the input gradient set, the forward without a bias), and the
// same bits in every ISA copy. The shapes are ones the rule
// (linear_packed_on_fma_tiles, linear_weight_grad_on_fma_tiles: asserted here) puts on the tiles
// in all three products (forward, input gradient, weight gradient); a shape that leaves one
// product on OpenBLAS is checked against the naive loops within float rounding.
// The bits alone would not tell the paths apart: OpenBLAS's Cooperlake kernel sums a depth this
// short in one chain in order too, and gave the same bits with the rule switched off by hand.
// A tile that drops or reorders a term fails here and in test_fma_product.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "isa_test_helpers.h"
#include "ops/linear.h"
#include "ops_basic_test_helpers.h"

namespace attn {
namespace {

using test_ops_basic::cast;
using test_ops_basic::random_vec;

struct Shape {
  int64_t rows, in, out;
};
// All three products on the tiles: depth and width >= 16, at most 64 columns where the depth is
// under 64, the weight gradient at most 256 rows and 16-64 columns.
const Shape kTileShapes[] = {{40, 32, 16}, {19, 64, 48}, {300, 24, 40}};

struct Operands {
  std::vector<float> inp, w, b, dout, dinp0, dw0;
  explicit Operands(const Shape& s)
      : inp(cast<float>(random_vec(s.rows * s.in, 1, "tiles.inp"))),
        w(cast<float>(random_vec(s.in * s.out, 1, "tiles.w"))),
        b(cast<float>(random_vec(s.out, 1, "tiles.b"))),
        dout(cast<float>(random_vec(s.rows * s.out, 1, "tiles.dout"))),
        dinp0(cast<float>(random_vec(s.rows * s.in, 1, "tiles.dinp0"))),
        dw0(cast<float>(random_vec(s.in * s.out, 1, "tiles.dw0"))) {}
};

// Σ_t x(t)·y(t) as one float fma chain from +0 over t = 0 … k − 1 (what a tile writes as it is).
template <class X, class Y>
float fused_chain(int64_t k, X x, Y y) {
  float acc = 0.f;
  for (int64_t t = 0; t < k; ++t) acc = std::fma(x(t), y(t), acc);
  return acc;
}

// The chain added to start (what a tile adds to what the buffer held).
template <class X, class Y>
float chain(float start, int64_t k, X x, Y y) {
  return start + fused_chain(k, x, y);
}

// out, then dinp and dweight (pre-filled with dinp0 and dw0), then the input gradient set, then
// the forward without a bias.
std::vector<float> run_all(const Shape& s, const Operands& o) {
  std::vector<float> out(s.rows * s.out), dinp = o.dinp0, dw = o.dw0, set(s.rows * s.in, 7.f),
                                          no_bias(s.rows * s.out, 7.f);
  linear_forward<float>(out.data(), o.inp.data(), o.w.data(), o.b.data(), s.rows, s.in, s.out);
  linear_forward<float>(no_bias.data(), o.inp.data(), o.w.data(), nullptr, s.rows, s.in, s.out);
  linear_backward<float>(dinp.data(), dw.data(), nullptr, o.dout.data(), o.inp.data(), o.w.data(),
                         s.rows, s.in, s.out);
  linear_backward_input_set<float>(set.data(), o.dout.data(), o.w.data(), s.rows, s.in, s.out);
  std::vector<float> all = out;
  all.insert(all.end(), dinp.begin(), dinp.end());
  all.insert(all.end(), dw.begin(), dw.end());
  all.insert(all.end(), set.begin(), set.end());
  all.insert(all.end(), no_bias.begin(), no_bias.end());
  return all;
}

TEST(LinearTiles, EveryEntryIsItsFusedChainInOrder) {
  for (const Shape& s : kTileShapes) {
    SCOPED_TRACE(std::to_string(s.rows) + " x " + std::to_string(s.in) + " -> " +
                 std::to_string(s.out));
    ASSERT_TRUE(linear_packed_on_fma_tiles(s.in, s.out));  // the forward
    ASSERT_TRUE(linear_packed_on_fma_tiles(s.out, s.in));  // the input gradient
    ASSERT_TRUE(linear_weight_grad_on_fma_tiles(s.in, s.out, s.rows));
    const Operands o(s);
    const std::vector<float> got = run_all(s, o);
    std::vector<float> want;
    for (int64_t r = 0; r < s.rows; ++r)  // out = b + inp · w
      for (int64_t j = 0; j < s.out; ++j)
        want.push_back(chain(
            o.b[j], s.in, [&](int64_t t) { return o.inp[r * s.in + t]; },
            [&](int64_t t) { return o.w[t * s.out + j]; }));
    for (int64_t r = 0; r < s.rows; ++r)  // dinp += dout · wᵀ
      for (int64_t i = 0; i < s.in; ++i)
        want.push_back(chain(
            o.dinp0[r * s.in + i], s.out, [&](int64_t t) { return o.dout[r * s.out + t]; },
            [&](int64_t t) { return o.w[i * s.out + t]; }));
    for (int64_t i = 0; i < s.in; ++i)  // dw += inpᵀ · dout, rows in order
      for (int64_t j = 0; j < s.out; ++j)
        want.push_back(chain(
            o.dw0[i * s.out + j], s.rows, [&](int64_t t) { return o.inp[t * s.in + i]; },
            [&](int64_t t) { return o.dout[t * s.out + j]; }));
    for (int64_t r = 0; r < s.rows; ++r)  // the input gradient set: the chain alone
      for (int64_t i = 0; i < s.in; ++i)
        want.push_back(fused_chain(
            s.out, [&](int64_t t) { return o.dout[r * s.out + t]; },
            [&](int64_t t) { return o.w[i * s.out + t]; }));
    for (int64_t r = 0; r < s.rows; ++r)  // out = inp · w without a bias: the chain alone
      for (int64_t j = 0; j < s.out; ++j)
        want.push_back(fused_chain(
            s.in, [&](int64_t t) { return o.inp[r * s.in + t]; },
            [&](int64_t t) { return o.w[t * s.out + j]; }));
    test::expect_same_bits(want, got, "out, dinp, dw, input gradient set, out without a bias");
  }
}

// A shape whose input gradient (depth 32, width 128) stays on OpenBLAS while the forward and the
// weight gradient run on the tiles: all within float rounding of the naive loops.
TEST(LinearTiles, MixedShapeMatchesTheNaiveLoops) {
  const Shape s{33, 128, 32};
  ASSERT_TRUE(linear_packed_on_fma_tiles(s.in, s.out));
  ASSERT_FALSE(linear_packed_on_fma_tiles(s.out, s.in));
  ASSERT_TRUE(linear_weight_grad_on_fma_tiles(s.in, s.out, s.rows));
  const Operands o(s);
  const std::vector<float> got = run_all(s, o);
  std::vector<double> inp(o.inp.begin(), o.inp.end()), w(o.w.begin(), o.w.end()),
      b(o.b.begin(), o.b.end()), dout(o.dout.begin(), o.dout.end()),
      dinp(o.dinp0.begin(), o.dinp0.end()), dw(o.dw0.begin(), o.dw0.end());
  std::vector<double> out(s.rows * s.out);
  linear_forward_ref<double>(out.data(), inp.data(), w.data(), b.data(), s.rows, s.in, s.out);
  linear_backward_ref<double>(dinp.data(), dw.data(), nullptr, dout.data(), inp.data(), w.data(),
                              s.rows, s.in, s.out);
  std::vector<double> set(s.rows * s.in, 0.0);  // the input gradient set: added to zeros
  linear_backward_ref<double>(set.data(), nullptr, nullptr, dout.data(), inp.data(), w.data(),
                              s.rows, s.in, s.out);
  std::vector<double> no_bias(s.rows * s.out);
  linear_forward_ref<double>(no_bias.data(), inp.data(), w.data(), nullptr, s.rows, s.in, s.out);
  std::vector<double> want = out;
  want.insert(want.end(), dinp.begin(), dinp.end());
  want.insert(want.end(), dw.begin(), dw.end());
  want.insert(want.end(), set.begin(), set.end());
  want.insert(want.end(), no_bias.begin(), no_bias.end());
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k)
    ASSERT_NEAR(got[k], want[k], 1e-5 * (1 + std::abs(want[k]))) << "entry " << k;
}

// Without a bias the tiles' result is written as it is, so a chain that ends at −0 (every product
// negative and below the smallest float) stays −0; with a zero bias it is +0 + (−0) = +0.
TEST(LinearTiles, WithoutABiasAChainEndingAtMinusZeroStaysMinusZero) {
  const Shape s{16, 16, 16};
  ASSERT_TRUE(linear_packed_on_fma_tiles(s.in, s.out));
  const std::vector<float> inp(s.rows * s.in, -1e-23f), w(s.in * s.out, 1e-23f),
      zero_bias(s.out, 0.f);
  std::vector<float> no_bias(s.rows * s.out, 7.f), with_zero_bias(s.rows * s.out, 7.f);
  linear_forward<float>(no_bias.data(), inp.data(), w.data(), nullptr, s.rows, s.in, s.out);
  linear_forward<float>(with_zero_bias.data(), inp.data(), w.data(), zero_bias.data(), s.rows, s.in,
                        s.out);
  for (size_t k = 0; k < no_bias.size(); ++k) {
    ASSERT_EQ(no_bias[k], 0.f) << "entry " << k;
    ASSERT_TRUE(std::signbit(no_bias[k])) << "entry " << k;
    ASSERT_EQ(with_zero_bias[k], 0.f) << "entry " << k;
    ASSERT_FALSE(std::signbit(with_zero_bias[k])) << "entry " << k;
  }
}

class LinearTilesCopies : public testing::TestWithParam<IsaCopy> {};

TEST_P(LinearTilesCopies, GiveTheGenericCopysBits) {
  ATTN_SKIP_WITHOUT_COPY(GetParam());
  for (const Shape& s : kTileShapes) {
    const Operands o(s);
    const auto [generic, other] = test::generic_and(GetParam(), [&] { return run_all(s, o); });
    test::expect_same_bits(generic, other, "out, dinp, dw, input gradient set, out without a bias");
  }
}

ATTN_ISA_COPIES_INSTANTIATE(LinearTilesCopies);

}  // namespace
}  // namespace attn
