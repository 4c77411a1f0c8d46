// sparse_relu_head_forward/backward (ops/sparse_relu_head.h) against naive loops in double, on
// ragged shapes, in float and double; against the unfused ops LstmNet ran before (the same bits
// for h, g_sum, dwx, db0 and db1); every ISA copy gives the generic copy's bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/error.h"
#include "isa_test_helpers.h"
#include "nn/state_concat_linear.h"
#include "ops/activation.h"
#include "ops/linear.h"
#include "ops/linear_relu_backward.h"
#include "ops/sparse_relu_head.h"
#include "ops/sparse_rows.h"
#include "ops_basic_test_helpers.h"

namespace attn {
namespace {

struct Shape {
  int64_t B, N, C, n1, n2;
};
// Rows across the backward's 64-row blocks (66 rows: one and a bit; 130: two and a bit; and
// fewer than one); n1 across the vector widths (1, 7, 37: tails only or mostly; 77 and 150: wide
// slices, single vectors and a scalar tail in one row, in the 32- and the 64-byte copies); n2
// across lane_dot's 8-float chunks and the tiles' 4-column ones, and above
// kLinearReluTiledMaxOut (20).
constexpr Shape kShapes[] = {{1, 1, 1, 1, 1},    {3, 5, 9, 7, 2},     {2, 33, 12, 128, 4},
                             {5, 7, 20, 37, 3},  {4, 16, 68, 128, 4}, {3, 4, 10, 40, 20},
                             {2, 3, 6, 16, 9},   {2, 65, 9, 150, 4},  {1, 70, 7, 77, 3},
                             {0, 3, 5, 8, 2}};

template <class T>
std::vector<T> uniform(int64_t n, uint64_t seed, const char* stream) {
  return test_ops_basic::cast<T>(test_ops_basic::random_vec(n, seed, stream));
}

template <class T>
struct Problem {
  Shape s;
  std::vector<T> x, zs, wx, w1, b1, dy;
  SparseRows<T> xs;
  // What the backward adds to (not zeros, so that "added" is checked).
  std::vector<T> dwx0, db00, dw10, db10;
};

// x: about a fifth of its entries non-zero, every fifth row none at all.
template <class T>
Problem<T> problem(const Shape& s, uint64_t seed) {
  const int64_t rows = s.B * s.N;
  Problem<T> p{s,
               uniform<T>(rows * s.C, seed, "test.srh.x"),
               uniform<T>(s.B * s.n1, seed, "test.srh.zs"),
               uniform<T>(s.C * s.n1, seed, "test.srh.wx"),
               uniform<T>(s.n1 * s.n2, seed, "test.srh.w1"),
               uniform<T>(s.n2, seed, "test.srh.b1"),
               uniform<T>(rows * s.n2, seed, "test.srh.dy"),
               {},
               uniform<T>(s.C * s.n1, seed, "test.srh.dwx0"),
               uniform<T>(s.n1, seed, "test.srh.db00"),
               uniform<T>(s.n1 * s.n2, seed, "test.srh.dw10"),
               uniform<T>(s.n2, seed, "test.srh.db10")};
  const std::vector<T> keep = uniform<T>(rows * s.C, seed, "test.srh.keep");
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < s.C; ++c) {
      T& v = p.x[r * s.C + c];
      if (r % 5 == 4 || keep[r * s.C + c] < T(0.6)) v = T(0);
    }
  EXPECT_TRUE(sparse_rows_build(p.xs, p.x.data(), rows, s.C, 1.0));
  return p;
}

// h: the reference's only (the kernels do not keep it).
template <class T>
struct Result {
  std::vector<T> h, y, g_sum, dwx, db0, dw1, db1;
};

template <class T>
Result<T> run(const Problem<T>& p) {
  const Shape& s = p.s;
  const int64_t rows = s.B * s.N;
  Result<T> r{{},
              std::vector<T>(rows * s.n2, std::numeric_limits<T>::quiet_NaN()),
              std::vector<T>(s.B * s.n1, std::numeric_limits<T>::quiet_NaN()),  // set, not read
              p.dwx0,
              p.db00,
              p.dw10,
              p.db10};
  const SparseReluHeadShape sh{s.B, s.N, s.n1, s.n2};
  sparse_relu_head_forward(r.y.data(), p.zs.data(), p.xs, p.wx.data(), p.w1.data(), p.b1.data(),
                           sh);
  sparse_relu_head_backward(r.g_sum.data(), r.dwx.data(), r.db0.data(), r.dw1.data(), r.db1.data(),
                            p.dy.data(), p.zs.data(), p.xs, p.wx.data(), p.w1.data(), sh);
  return r;
}

// The header's formulas as plain loops over the dense x, in double, from h in T: the first layer's
// output summed as the kernel sums it (sparse_rows_times, then the relu), so that both sides mask
// the same entries; widened exactly, the rest in double. Beside each result, mag: the sum of its
// terms' absolute values (g's terms Σ_o |dy · w1| expanded), for a rounding-error bound.
struct Reference {
  Result<double> want, mag;
};

template <class T>
Reference reference(const Problem<T>& p) {
  const Shape& s = p.s;
  const int64_t rows = s.B * s.N;
  std::vector<T> z(rows * s.n1), hT(rows * s.n1);
  for (int64_t b = 0; b < s.B; ++b)
    sparse_rows_times(z.data() + b * s.N * s.n1, s.n1, p.xs, p.wx.data(), s.n1,
                      SparseRowSet{b * s.N, s.N, 1}, p.zs.data() + b * s.n1);
  activation_forward(hT.data(), z.data(), rows * s.n1, Activation::relu);
  auto wide = [](const std::vector<T>& v) { return std::vector<double>(v.begin(), v.end()); };
  auto absolute = [&](const std::vector<T>& v) {
    std::vector<double> a = wide(v);
    for (double& e : a) e = std::abs(e);
    return a;
  };
  const std::vector<double> h = wide(hT), x = wide(p.x), w1 = wide(p.w1), dy = wide(p.dy);
  Reference ref{{{}, std::vector<double>(rows * s.n2), std::vector<double>(s.B * s.n1, 0.0),
                 wide(p.dwx0), wide(p.db00), wide(p.dw10), wide(p.db10)},
                {{}, std::vector<double>(rows * s.n2), std::vector<double>(s.B * s.n1, 0.0),
                 absolute(p.dwx0), absolute(p.db00), absolute(p.dw10), absolute(p.db10)}};
  Result<double>& r = ref.want;
  Result<double>& m = ref.mag;
  for (int64_t q = 0; q < rows; ++q) {
    const int64_t b = q / s.N;
    const double* hq = h.data() + q * s.n1;
    const double* dyq = dy.data() + q * s.n2;
    for (int64_t o = 0; o < s.n2; ++o) {
      double y = p.b1[o], ym = std::abs(double(p.b1[o]));
      for (int64_t j = 0; j < s.n1; ++j) {
        y += hq[j] * w1[j * s.n2 + o];
        ym += std::abs(hq[j] * w1[j * s.n2 + o]);
      }
      r.y[q * s.n2 + o] = y, m.y[q * s.n2 + o] = ym;
      r.db1[o] += dyq[o], m.db1[o] += std::abs(dyq[o]);
    }
    for (int64_t j = 0; j < s.n1; ++j) {
      double g = 0, gm = 0;
      for (int64_t o = 0; o < s.n2; ++o) {
        g += dyq[o] * w1[j * s.n2 + o];
        gm += std::abs(dyq[o] * w1[j * s.n2 + o]);
        r.dw1[j * s.n2 + o] += hq[j] * dyq[o];
        m.dw1[j * s.n2 + o] += std::abs(hq[j] * dyq[o]);
      }
      if (!(hq[j] > 0)) g = gm = 0;
      r.db0[j] += g, m.db0[j] += gm;
      r.g_sum[b * s.n1 + j] += g, m.g_sum[b * s.n1 + j] += gm;
      for (int64_t c = 0; c < s.C; ++c) {
        r.dwx[c * s.n1 + j] += x[q * s.C + c] * g;
        m.dwx[c * s.n1 + j] += std::abs(x[q * s.C + c]) * gm;
      }
    }
  }
  return ref;
}

// |got − want| <= ε_T · K · mag entry by entry: a sum of K rounded terms (products rounded once
// more) is within γ_K · Σ|terms| of the exact one, γ_K = K·u / (1 − K·u) < K·ε for K·ε < 1.
template <class T>
void expect_within(const std::vector<T>& got, const std::vector<double>& want,
                   const std::vector<double>& mag, int64_t K, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const double eps = std::numeric_limits<T>::epsilon() * static_cast<double>(K);
  for (size_t k = 0; k < got.size(); ++k)
    ASSERT_NEAR(static_cast<double>(got[k]), want[k], eps * mag[k] + 1e-300)
        << what << "[" << k << "], bound " << eps * mag[k];
}

template <class T>
void check_against_reference(const Shape& s) {
  SCOPED_TRACE(testing::Message() << "B " << s.B << " N " << s.N << " C " << s.C << " n1 " << s.n1
                                  << " n2 " << s.n2);
  const Problem<T> p = problem<T>(s, 3);
  const Reference ref = reference(p);
  const Result<T> got = run(p);
  const Result<double>& w = ref.want;
  const Result<double>& m = ref.mag;
  const int64_t rows = s.B * s.N;
  expect_within(got.y, w.y, m.y, s.n1 + 2, "y");
  expect_within(got.g_sum, w.g_sum, m.g_sum, s.N + s.n2 + 1, "g_sum");
  expect_within(got.dwx, w.dwx, m.dwx, rows + s.n2 + 2, "dwx");
  expect_within(got.db0, w.db0, m.db0, rows + s.n2 + 1, "db0");
  expect_within(got.dw1, w.dw1, m.dw1, rows + 2, "dw1");
  expect_within(got.db1, w.db1, m.db1, rows + 1, "db1");
}

TEST(SparseReluHead, MatchesTheNaiveLoopsFloat) {
  for (const Shape& s : kShapes) check_against_reference<float>(s);
}

TEST(SparseReluHead, MatchesTheNaiveLoopsDouble) {
  for (const Shape& s : kShapes) check_against_reference<double>(s);
}

// The ops LstmNet ran before the fused head, on the same inputs: the header's list of outputs
// with the same bits (the product for g on the tiles up to kLinearReluTiledMaxOut outputs; h is
// not an output, but g_sum, dwx and db0 go through its mask).
TEST(SparseReluHead, GivesTheUnfusedOpsBitsWhereTheHeaderSaysSo) {
  for (const Shape& s : kShapes) {
    if (s.B == 0 || s.n2 > kLinearReluTiledMaxOut) continue;
    SCOPED_TRACE(testing::Message() << "n1 " << s.n1 << " n2 " << s.n2);
    const Problem<float> p = problem<float>(s, 9);
    const Result<float> got = run(p);
    const int64_t rows = s.B * s.N;
    std::vector<float> z(rows * s.n1), h(rows * s.n1), g(rows * s.n1), g_sum(s.B * s.n1);
    std::vector<float> dwx = p.dwx0, db0 = p.db00, db1 = p.db10;
    for (int64_t b = 0; b < s.B; ++b)  // as state_concat_linear_forward's token part
      sparse_rows_times(z.data() + b * s.N * s.n1, s.n1, p.xs, p.wx.data(), s.n1,
                        SparseRowSet{b * s.N, s.N, 1}, p.zs.data() + b * s.n1);
    activation_forward(h.data(), z.data(), rows * s.n1, Activation::relu);
    linear_backward_input_relu(g.data(), db0.data(), p.dy.data(), p.w1.data(), h.data(), rows, s.n1,
                               s.n2);
    state_concat_sequence_sums(g_sum.data(), g.data(), StateConcatShape{s.B, s.N, 0, 0, s.n1});
    sparse_rows_t_times(dwx.data(), p.xs, g.data(), s.n1, s.n1);
    linear_backward<float>(nullptr, nullptr, db1.data(), p.dy.data(), nullptr, nullptr, rows, 0,
                           s.n2);
    test::expect_same_bits(got.g_sum, g_sum, "g_sum");
    test::expect_same_bits(got.dwx, dwx, "dwx");
    test::expect_same_bits(got.db0, db0, "db0");
    test::expect_same_bits(got.db1, db1, "db1");
  }
}

TEST(SparseReluHead, AShapeThatDoesNotMatchXsNonZeroListIsAnError) {
  const Problem<float> p = problem<float>({2, 3, 4, 5, 2}, 1);
  std::vector<float> y(3 * 3 * 2), g_sum(3 * 5), dwx(p.dwx0), db0(p.db00), dw1(p.dw10), db1(p.db10);
  EXPECT_THROW(sparse_relu_head_forward(y.data(), p.zs.data(), p.xs, p.wx.data(), p.w1.data(),
                                        p.b1.data(), SparseReluHeadShape{3, 3, 5, 2}),
               UserError);
  EXPECT_THROW(sparse_relu_head_backward(g_sum.data(), dwx.data(), db0.data(), dw1.data(),
                                         db1.data(), y.data(), p.zs.data(), p.xs, p.wx.data(),
                                         p.w1.data(), SparseReluHeadShape{2, 4, 5, 2}),
               UserError);
}

class SparseReluHeadCopies : public testing::TestWithParam<IsaCopy> {};

TEST_P(SparseReluHeadCopies, GiveTheGenericCopysBits) {
  ATTN_SKIP_WITHOUT_COPY(GetParam());
  for (const Shape& s : kShapes) {
    const Problem<float> p = problem<float>(s, 17);
    const auto [generic, other] = test::generic_and(GetParam(), [&] {
      const Result<float> r = run(p);
      std::vector<float> all;
      for (const auto* v : {&r.y, &r.g_sum, &r.dwx, &r.db0, &r.dw1, &r.db1})
        all.insert(all.end(), v->begin(), v->end());
      return all;
    });
    test::expect_same_bits(generic, other, "y and the gradients");
  }
}

ATTN_ISA_COPIES_INSTANTIATE(SparseReluHeadCopies);

}  // namespace
}  // namespace attn
