// The relu forward of ops/activation.cpp (vectorised per ISA copy) against its scalar definition
// x > 0 ? x : 0, bit for bit: NaN, ±0, ±inf, denormals, lengths around the vector widths, in place.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/rng.h"
#include "isa_test_helpers.h"
#include "ops/activation.h"

namespace attn {
namespace {

template <class T>
std::vector<T> relu_inputs(int64_t n) {
  const T special[] = {std::numeric_limits<T>::quiet_NaN(),
                       -std::numeric_limits<T>::quiet_NaN(),
                       T(0),
                       -T(0),
                       std::numeric_limits<T>::infinity(),
                       -std::numeric_limits<T>::infinity(),
                       std::numeric_limits<T>::denorm_min(),
                       -std::numeric_limits<T>::denorm_min(),
                       std::numeric_limits<T>::max(),
                       std::numeric_limits<T>::lowest()};
  Rng rng(5, "relu.forward", n);
  std::vector<T> x(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k)
    x[k] = k % 3 == 0 ? special[(k / 3) % 10] : static_cast<T>(4 * rng.uniform() - 2);
  return x;
}

template <class T>
void expect_scalar_relu(const std::vector<T>& x, const std::vector<T>& y) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  ASSERT_EQ(x.size(), y.size());
  for (size_t k = 0; k < x.size(); ++k) {
    const T want = x[k] > T(0) ? x[k] : T(0);
    ASSERT_EQ(std::bit_cast<Bits>(y[k]), std::bit_cast<Bits>(want)) << "entry " << k << " of "
                                                                   << x.size() << ", x = " << x[k];
  }
}

TEST(ReluForward, EqualsTheScalarDefinitionBitForBit) {
  for (int64_t n : {0, 1, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 64, 100, 1000}) {
    SCOPED_TRACE(n);
    const auto xf = relu_inputs<float>(n);
    std::vector<float> yf(xf.size(), 9.0f);
    activation_forward<float>(yf.data(), xf.data(), n, Activation::relu);
    expect_scalar_relu(xf, yf);
    auto inplace = xf;  // out may be inp (MlpBlock applies the relu in place)
    activation_forward<float>(inplace.data(), inplace.data(), n, Activation::relu);
    expect_scalar_relu(xf, inplace);
    const auto xd = relu_inputs<double>(n);
    std::vector<double> yd(xd.size(), 9.0);
    activation_forward<double>(yd.data(), xd.data(), n, Activation::relu);
    expect_scalar_relu(xd, yd);
  }
}

class ReluForwardCopies : public testing::TestWithParam<IsaCopy> {};

TEST_P(ReluForwardCopies, GiveTheGenericCopysBits) {
  ATTN_SKIP_WITHOUT_COPY(GetParam());
  const auto x = relu_inputs<float>(1001);
  const int64_t n = static_cast<int64_t>(x.size());
  const auto [generic, other] = test::generic_and(GetParam(), [&] {
    std::vector<float> y(x.size());
    activation_forward<float>(y.data(), x.data(), n, Activation::relu);
    return y;
  });
  test::expect_same_bits(generic, other, "relu forward");
  expect_scalar_relu(x, other);
  // In place and in double (each copy has its own double loop), against the definition's bits.
  const test::IsaForced forced(GetParam());
  auto inplace = x;
  activation_forward<float>(inplace.data(), inplace.data(), n, Activation::relu);
  expect_scalar_relu(x, inplace);
  const auto xd = relu_inputs<double>(1001);
  auto yd = xd;
  activation_forward<double>(yd.data(), yd.data(), n, Activation::relu);
  expect_scalar_relu(xd, yd);
}

ATTN_ISA_COPIES_INSTANTIATE(ReluForwardCopies);

}  // namespace
}  // namespace attn
