// The first layer on [s_b; x_{b,i}] rows without forming them (nn/state_concat_linear.h), and
// MlpBlock::forward_after_first fed by it, against the same layers on the formed rows (the naive
// loops of ops/linear.h; MlpBlock::forward): dense and mostly-zero x, float and double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/rng.h"
#include "nn/mlp_block.h"
#include "nn/param_set.h"
#include "nn/state_concat_linear.h"
#include "ops/linear.h"
#include "ops/sparse_rows.h"
#include "ops_basic_test_helpers.h"

namespace attn {
namespace {

template <class T>
std::vector<T> uniform(int64_t n, uint64_t seed, const char* stream) {
  return test_ops_basic::cast<T>(test_ops_basic::random_vec(n, seed, stream));
}

// x (rows, C): every entry, or one non-zero a row (a one-hot token with a random value).
template <class T>
std::vector<T> tokens(int64_t rows, int64_t C, bool one_hot, uint64_t seed) {
  std::vector<T> x = uniform<T>(rows * C, seed, "state_concat.x");
  if (!one_hot) return x;
  Rng rng(seed, "test.state_concat.hot", 0);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t hot = rng.uniform_int(C);
    for (int64_t k = 0; k < C; ++k)
      if (k != hot) x[r * C + k] = T(0);
  }
  return x;
}

// The rows [s_b; x_{b,i}] (B·N, F + C).
template <class T>
std::vector<T> formed_rows(const std::vector<T>& s, const std::vector<T>& x,
                           const StateConcatShape& sh) {
  const int64_t W = sh.F + sh.C;
  std::vector<T> rows(static_cast<size_t>(sh.B * sh.N * W));
  for (int64_t b = 0; b < sh.B; ++b)
    for (int64_t i = 0; i < sh.N; ++i) {
      T* row = rows.data() + (b * sh.N + i) * W;
      std::copy(s.begin() + b * sh.F, s.begin() + (b + 1) * sh.F, row);
      std::copy(x.begin() + (b * sh.N + i) * sh.C, x.begin() + (b * sh.N + i + 1) * sh.C,
                row + sh.F);
    }
  return rows;
}

template <class T>
double max_abs_diff(const std::vector<T>& a, const std::vector<T>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t k = 0; k < a.size() && k < b.size(); ++k)
    m = std::max(m, std::abs(static_cast<double>(a[k]) - static_cast<double>(b[k])));
  return m;
}

template <class T>
void check_against_formed_rows(const StateConcatShape& sh, bool one_hot, double tol) {
  SCOPED_TRACE(testing::Message() << "B " << sh.B << " N " << sh.N << " F " << sh.F << " C "
                                  << sh.C << " n " << sh.n << " one-hot " << one_hot);
  const int64_t W = sh.F + sh.C, R = sh.B * sh.N;
  const auto s = uniform<T>(sh.B * sh.F, 1, "state_concat.s");
  const auto x = tokens<T>(R, sh.C, one_hot, 2);
  const auto w = uniform<T>(W * sh.n, 3, "state_concat.w");
  const auto bias = uniform<T>(sh.n, 4, "state_concat.b");
  const auto g = uniform<T>(R * sh.n, 5, "state_concat.g");
  SparseRows<T> xs;
  const bool sparse = sparse_rows_build(xs, x.data(), R, sh.C);
  EXPECT_EQ(sparse, one_hot && sh.C >= 7);  // one in C non-zero: at most 15 % from C = 7 on

  std::vector<T> z(static_cast<size_t>(R * sh.n)), zs(static_cast<size_t>(sh.B * sh.n));
  state_concat_linear_forward(z.data(), zs.data(), s.data(), x.data(), sparse ? &xs : nullptr,
                              w.data(), bias.data(), sh);
  const auto rows = formed_rows(s, x, sh);
  std::vector<T> z_ref(z.size());
  linear_forward_ref(z_ref.data(), rows.data(), w.data(), bias.data(), R, W, sh.n);
  EXPECT_LE(max_abs_diff(z, z_ref), tol);

  std::vector<T> g_sum(static_cast<size_t>(sh.B * sh.n));
  state_concat_sequence_sums(g_sum.data(), g.data(), sh);
  // Accumulates: both start from the same non-zero values.
  std::vector<T> dw = uniform<T>(W * sh.n, 6, "state_concat.dw0"), dw_ref = dw;
  state_concat_linear_backward(dw.data(), g.data(), g_sum.data(), s.data(), x.data(),
                               sparse ? &xs : nullptr, sh);
  linear_backward_ref<T>(nullptr, dw_ref.data(), nullptr, g.data(), rows.data(), w.data(), R, W,
                         sh.n);
  EXPECT_LE(max_abs_diff(dw, dw_ref), tol * sh.N);
}

TEST(StateConcatLinear, MatchesTheLayerOnTheFormedRows) {
  for (bool one_hot : {false, true}) {
    for (const StateConcatShape& sh :
         {StateConcatShape{3, 5, 4, 9, 2}, StateConcatShape{7, 32, 16, 68, 4},
          StateConcatShape{2, 3, 6, 8, 33}, StateConcatShape{4, 1, 5, 10, 3},
          StateConcatShape{2, 4, 0, 9, 3}}) {
      check_against_formed_rows<double>(sh, one_hot, 1e-13);
      check_against_formed_rows<float>(sh, one_hot, 2e-5);
    }
  }
}

TEST(StateConcatLinear, AnEmptyBatchTouchesNothing) {
  std::vector<double> dw(6, 1.5);
  state_concat_linear_forward<double>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                      nullptr, StateConcatShape{0, 4, 2, 1, 2});
  state_concat_linear_backward<double>(dw.data(), nullptr, nullptr, nullptr, nullptr, nullptr,
                                       StateConcatShape{0, 4, 2, 1, 2});
  EXPECT_EQ(dw, std::vector<double>(6, 1.5));
}

// A head of dims [F + C, hidden…, out]: forward_after_first fed by the split layer against
// forward() on the formed rows, outputs and every gradient (W0's from the split layer's
// backward, the rest from the block's).
template <class T>
void check_head(const std::vector<int64_t>& hidden, Activation act, bool one_hot, double tol) {
  SCOPED_TRACE(testing::Message() << "hidden layers " << hidden.size() << " act "
                                  << static_cast<int>(act) << " one-hot " << one_hot);
  const StateConcatShape sh{5, 6, 4, 11, 0};
  const int64_t W = sh.F + sh.C, R = sh.B * sh.N, out = 3;
  std::vector<int64_t> dims{W};
  for (int64_t h : hidden) dims.push_back(h);
  dims.push_back(out);
  ParamSet<T> ps;
  MlpBlock<T> split, whole;
  split.declare(ps, "split", dims, act);
  whole.declare(ps, "whole", dims, act);
  ps.allocate();
  whole.init(ps, 7, "test");
  for (int l = 0; l < whole.layers(); ++l)  // equal weights
    for (auto [a, b] : {std::pair{split.weight_id(l), whole.weight_id(l)},
                        std::pair{split.bias_id(l), whole.bias_id(l)}})
      std::copy(ps.value(b), ps.value(b) + ps.entry(b).size, ps.value(a));

  const auto s = uniform<T>(sh.B * sh.F, 8, "state_concat.s");
  const auto x = tokens<T>(R, sh.C, one_hot, 9);
  const auto dout = uniform<T>(R * out, 10, "state_concat.dout");
  const auto rows = formed_rows(s, x, sh);
  std::vector<T> y_whole(static_cast<size_t>(R * out)), y_split(y_whole.size());
  whole.forward(ps, rows.data(), R, y_whole.data());

  SparseRows<T> xs;
  const bool sparse = sparse_rows_build(xs, x.data(), R, sh.C);
  const int64_t o1 = dims[1];
  StateConcatShape shn = sh;
  shn.n = o1;
  std::vector<T> zs(static_cast<size_t>(sh.B * o1));
  state_concat_linear_forward(split.first_output(R), zs.data(), s.data(), x.data(),
                              sparse ? &xs : nullptr, ps.value(split.weight_id(0)),
                              ps.value(split.bias_id(0)), shn);
  split.forward_after_first(ps, R, y_split.data());
  EXPECT_LE(max_abs_diff(y_split, y_whole), tol);

  ps.zero_grad();
  whole.backward(ps, dout.data(), nullptr);
  split.backward(ps, dout.data(), nullptr);
  const T* g0 = split.first_layer_dout();
  std::vector<T> g0v(g0, g0 + R * o1), g_sum(static_cast<size_t>(sh.B * o1));
  state_concat_sequence_sums(g_sum.data(), g0v.data(), shn);
  // The block left W0's gradient alone.
  const auto& e0 = ps.entry(split.weight_id(0));
  EXPECT_EQ(std::vector<T>(ps.grad(split.weight_id(0)), ps.grad(split.weight_id(0)) + e0.size),
            std::vector<T>(e0.size, T(0)));
  state_concat_linear_backward(ps.grad(split.weight_id(0)), g0v.data(), g_sum.data(), s.data(),
                               x.data(), sparse ? &xs : nullptr, shn);
  for (int l = 0; l < split.layers(); ++l) {
    for (auto [a, b] : {std::pair{split.weight_id(l), whole.weight_id(l)},
                        std::pair{split.bias_id(l), whole.bias_id(l)}}) {
      const int64_t size = ps.entry(a).size;
      std::vector<T> ga(ps.grad(a), ps.grad(a) + size), gb(ps.grad(b), ps.grad(b) + size);
      EXPECT_GT(max_abs_diff(gb, std::vector<T>(gb.size(), T(0))), 0) << ps.entry(b).name;
      EXPECT_LE(max_abs_diff(ga, gb), tol * sh.N) << ps.entry(a).name;
    }
  }
}

TEST(StateConcatLinear, FeedsAHeadAsItsFirstLayer) {
  for (bool one_hot : {false, true}) {
    check_head<double>({}, Activation::relu, one_hot, 1e-13);
    check_head<double>({6}, Activation::relu, one_hot, 1e-13);  // the in-place relu path
    check_head<double>({6, 5}, Activation::tanh, one_hot, 1e-13);
    check_head<float>({6}, Activation::relu, one_hot, 2e-5);
  }
}

}  // namespace
}  // namespace attn
