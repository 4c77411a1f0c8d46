// linear_backward_input_relu (ops/linear_relu_backward.h) against the naive loops it replaces
// (linear_backward_ref into zeros, then the relu's activation_backward, then the bias sum), on
// ragged shapes, in float and double; every ISA copy gives the generic copy's bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/rng.h"
#include "isa_test_helpers.h"
#include "ops/activation.h"
#include "ops/linear.h"
#include "ops/linear_relu_backward.h"

namespace attn {
namespace {

struct Shape {
  int64_t rows, in_dim, out_dim;
};
// Rows across the 32-row blocks and the 4-row tiles; in_dim across the 32/16/8/4/1-column tiles;
// out_dim up to kLinearReluTiledMaxOut (tiles) and above it (GEMM, then the mask).
constexpr Shape kShapes[] = {{1, 1, 1},   {3, 5, 2},    {33, 128, 16}, {37, 71, 3}, {64, 16, 1},
                             {70, 129, 7}, {5, 3, 40},  {9, 40, 64},   {37, 50, 65}, {4, 3, 130}};

template <class T>
std::vector<T> uniform(int64_t n, uint64_t seed, const char* stream) {
  Rng rng(seed, stream, 0);
  std::vector<T> v(static_cast<size_t>(n));
  for (T& x : v) x = static_cast<T>(2 * rng.uniform() - 1);
  return v;
}

template <class T>
struct Inputs {
  std::vector<T> dout, weight, act;
};

// act: about half its entries 0 (a relu's output), the rest positive, some −0.
template <class T>
Inputs<T> inputs(const Shape& s, uint64_t seed) {
  Inputs<T> in{uniform<T>(s.rows * s.out_dim, seed, "test.lrb.dout"),
               uniform<T>(s.in_dim * s.out_dim, seed, "test.lrb.w"),
               uniform<T>(s.rows * s.in_dim, seed, "test.lrb.act")};
  for (size_t k = 0; k < in.act.size(); ++k)
    in.act[k] = in.act[k] > T(0) ? in.act[k] : (k % 7 == 0 ? T(-0.0) : T(0));
  return in;
}

template <class T>
void check_against_reference(const Shape& s, bool with_bias) {
  const Inputs<T> in = inputs<T>(s, 11);
  // The reference: the product added into zeros, the relu's backward, the bias sum.
  std::vector<T> product(s.rows * s.in_dim, T(0)), want(s.rows * s.in_dim, T(0));
  linear_backward_ref<T>(product.data(), nullptr, nullptr, in.dout.data(), nullptr,
                         in.weight.data(), s.rows, s.in_dim, s.out_dim);
  activation_backward<T>(want.data(), product.data(), in.act.data(), nullptr,
                      s.rows * s.in_dim, Activation::relu);
  const std::vector<T> bias0 = uniform<T>(s.in_dim, 5, "test.lrb.bias");
  std::vector<T> want_bias = bias0;
  linear_backward_ref<T>(nullptr, nullptr, want_bias.data(), want.data(), nullptr, nullptr,
                         s.rows, 0, s.in_dim);

  // dinp starts as NaN: it must be set, never read.
  std::vector<T> got(s.rows * s.in_dim, std::numeric_limits<T>::quiet_NaN());
  std::vector<T> got_bias = bias0;
  linear_backward_input_relu<T>(got.data(), with_bias ? got_bias.data() : nullptr,
                                in.dout.data(), in.weight.data(), in.act.data(), s.rows,
                                s.in_dim, s.out_dim);
  const T tol = std::numeric_limits<T>::epsilon() * T(4 * s.out_dim);
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_NEAR(got[k], want[k], tol) << "dinp[" << k << "], shape " << s.rows << "×"
                                      << s.in_dim << "×" << s.out_dim;
    if (in.act[k] <= T(0)) {
      ASSERT_EQ(got[k], T(0)) << "a masked entry must be exactly 0";
    }
  }
  for (int64_t k = 0; k < s.in_dim; ++k) {
    const T expect = with_bias ? want_bias[k] : bias0[k];
    ASSERT_NEAR(got_bias[k], expect, tol * T(s.rows)) << "dbias[" << k << "]";
  }
}

TEST(LinearReluBackward, MatchesTheNaiveLoopsFloat) {
  for (const Shape& s : kShapes)
    for (bool bias : {true, false}) check_against_reference<float>(s, bias);
}

TEST(LinearReluBackward, MatchesTheNaiveLoopsDouble) {
  for (const Shape& s : kShapes)
    for (bool bias : {true, false}) check_against_reference<double>(s, bias);
}

TEST(LinearReluBackward, NoRowsOrNoColumnsChangeNothing) {
  std::vector<float> dinp(4, 7.0f), bias(4, 3.0f), w(8, 1.0f), act(4, 1.0f), dout(8, 1.0f);
  linear_backward_input_relu<float>(dinp.data(), bias.data(), dout.data(), w.data(), act.data(),
                                    0, 4, 2);
  EXPECT_EQ(dinp, std::vector<float>(4, 7.0f));
  EXPECT_EQ(bias, std::vector<float>(4, 3.0f));
  // out_dim = 0: the product is empty, so every entry is 0 (masked or not).
  linear_backward_input_relu<float>(dinp.data(), bias.data(), dout.data(), w.data(), act.data(),
                                    1, 4, 0);
  EXPECT_EQ(dinp, std::vector<float>(4, 0.0f));
  EXPECT_EQ(bias, std::vector<float>(4, 3.0f));
}

class LinearReluBackwardCopies : public testing::TestWithParam<IsaCopy> {};

TEST_P(LinearReluBackwardCopies, GiveTheGenericCopysBits) {
  ATTN_SKIP_WITHOUT_COPY(GetParam());
  for (const Shape& s : kShapes) {
    const Inputs<float> in = inputs<float>(s, 23);
    const auto [generic, other] = test::generic_and(GetParam(), [&] {
      std::vector<float> out(s.rows * s.in_dim + s.in_dim, 0.5f);  // dinp, then dbias
      linear_backward_input_relu<float>(out.data(), out.data() + s.rows * s.in_dim,
                                        in.dout.data(), in.weight.data(), in.act.data(),
                                        s.rows, s.in_dim, s.out_dim);
      return out;
    });
    test::expect_same_bits(generic, other, "dinp and dbias");
  }
}

ATTN_ISA_COPIES_INSTANTIATE(LinearReluBackwardCopies);

}  // namespace
}  // namespace attn
