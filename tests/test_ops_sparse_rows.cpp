// Compressed rows (ops/sparse_rows.h): the density decision, the stored entries, both products
// against plain dense loops (row strides, widths that are and are not multiples of the chunk,
// empty rows), accumulation, and each vector copy (AVX2, AVX-512) against the generic one (same
// bits).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "isa_test_helpers.h"
#include "ops/isa.h"
#include "ops/sparse_rows.h"

namespace attn {
namespace {

// rows × cols with about `density` of the entries non-zero (values in [−2, 2) \ {0}); row 1 is
// all zeros when rows > 1.
std::vector<double> sparse_matrix(int64_t rows, int64_t cols, double density, uint64_t seed) {
  Rng rng(seed, "test.sparse_rows", 0);
  std::vector<double> x(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < cols; ++k)
      if (r != 1 && rng.uniform() < density)
        x[r * cols + k] = (0.25 + 1.75 * rng.uniform()) * (k % 2 ? -1 : 1);
  return x;
}

std::vector<double> dense(int64_t n, uint64_t seed, const char* stream) {
  Rng rng(seed, stream, 0);
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& e : v) e = 2 * rng.uniform() - 1;
  return v;
}

template <class T>
std::vector<T> as(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

TEST(SparseRows, BuildKeepsNonZerosInOrderAndRefusesDenseInputs) {
  const std::vector<double> x{0, 2, 0, -1,  //
                              0, 0, 0, 0,   //
                              3, 0, 0, 0};
  SparseRows<double> s;
  ASSERT_TRUE(sparse_rows_build(s, x.data(), 3, 4, 0.25));
  EXPECT_EQ(s.rows, 3);
  EXPECT_EQ(s.cols, 4);
  EXPECT_EQ(s.start, (std::vector<int64_t>{0, 2, 2, 3}));
  EXPECT_EQ(s.col, (std::vector<int32_t>{1, 3, 0}));
  EXPECT_EQ(s.val, (std::vector<double>{2, -1, 3}));
  EXPECT_EQ(s.nnz(), 3);
  // 3 non-zeros of 12: refused below a density of 0.25, whatever the last rows hold.
  EXPECT_FALSE(sparse_rows_build(s, x.data(), 3, 4, 0.2));
  EXPECT_FALSE(sparse_rows_build(s, x.data(), 1, 4, 0.49));  // 2 of 4 in the first row alone
  ASSERT_TRUE(sparse_rows_build(s, x.data(), 0, 4, 0.1));    // no rows: nothing to refuse
  EXPECT_EQ(s.nnz(), 0);
  EXPECT_THROW(sparse_rows_build(s, x.data(), 3, 0, 0.5), UserError);
  EXPECT_THROW(sparse_rows_build(s, x.data(), 3, 4, -0.01), UserError);
  EXPECT_THROW(sparse_rows_build(s, x.data(), 3, 4, std::numeric_limits<double>::quiet_NaN()),
               UserError);
}

TEST(SparseRows, TheDefaultDensityCapDependsOnTheRowWidth) {
  EXPECT_EQ(sparse_rows_max_density(kSparseRowsShortRow), kSparseRowsShortRowMaxDensity);
  EXPECT_EQ(sparse_rows_max_density(kSparseRowsShortRow + 1), kSparseRowsMaxDensity);
  // Each row k non-zero of cols: the default build accepts it up to the width's cap.
  auto accepted = [](int64_t cols, int64_t k) {
    std::vector<float> x(static_cast<size_t>(8 * cols), 0.0f);
    for (int64_t r = 0; r < 8; ++r)
      for (int64_t j = 0; j < k; ++j) x[r * cols + (r + j) % cols] = 1.0f + float(j);
    SparseRows<float> s;
    return sparse_rows_build(s, x.data(), 8, cols);
  };
  EXPECT_TRUE(accepted(36, 7));      // qsa at N = 16: 19 % of a short row
  EXPECT_TRUE(accepted(64, 16));     // 25 %, the short rows' cap
  EXPECT_FALSE(accepted(64, 17));    // above it
  EXPECT_FALSE(accepted(20, 7));     // qsa at N = 8: 35 %
  EXPECT_FALSE(accepted(576, 112));  // 19 % of a wide row (the MLP's flattened qsa at N = 16)
  EXPECT_TRUE(accepted(576, 86));    // 14.9 %
  EXPECT_TRUE(accepted(68, 7));      // qsa at N = 32: 10 %
}

// out += x·w and dw += xᵀ·d with plain loops over every entry of x.
struct DenseRef {
  std::vector<double> out, dw;
};
DenseRef dense_ref(const std::vector<double>& x, int64_t rows, int64_t cols,
                   const std::vector<double>& w, const std::vector<double>& d, int64_t n,
                   int64_t ld, const std::vector<double>& out0, const std::vector<double>& dw0) {
  DenseRef r{out0, dw0};
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t k = 0; k < cols; ++k)
      for (int64_t j = 0; j < n; ++j) {
        r.out[i * ld + j] += x[i * cols + k] * w[k * n + j];
        r.dw[k * n + j] += x[i * cols + k] * d[i * ld + j];
      }
  return r;
}

template <class T>
DenseRef run_sparse(const std::vector<double>& x, int64_t rows, int64_t cols,
                    const std::vector<double>& w, const std::vector<double>& d, int64_t n,
                    int64_t ld, const std::vector<double>& out0, const std::vector<double>& dw0) {
  SparseRows<T> s;
  const auto xt = as<T>(x);
  EXPECT_TRUE(sparse_rows_build(s, xt.data(), rows, cols, 0.5));
  auto out = as<T>(out0), dw = as<T>(dw0);
  const auto wt = as<T>(w), dt = as<T>(d);
  sparse_rows_times(out.data(), ld, s, wt.data(), n);
  sparse_rows_t_times(dw.data(), s, dt.data(), ld, n);
  return DenseRef{std::vector<double>(out.begin(), out.end()),
                  std::vector<double>(dw.begin(), dw.end())};
}

// Infinite when a holds a NaN (std::max would drop it).
double max_rel(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, scale = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    if (std::isnan(a[k])) return std::numeric_limits<double>::infinity();
    diff = std::max(diff, std::abs(a[k] - b[k]));
    scale = std::max(scale, std::abs(b[k]));
  }
  return diff / scale;
}

TEST(SparseRows, ProductsEqualDenseLoops) {
  // Widths below, at and between multiples of the 32-wide slice (224: wide blocks of slices and a
  // single slice after them); more rows than a 64-row block of t_times; a row stride above the
  // width.
  for (int64_t n : {1, 5, 64, 130, 224, 512}) {
    for (int64_t extra : {0, 3}) {
      SCOPED_TRACE("n " + std::to_string(n) + " row stride n + " + std::to_string(extra));
      const int64_t rows = 70, cols = 13, ld = n + extra;
      const auto x = sparse_matrix(rows, cols, 0.2, static_cast<uint64_t>(n));
      const auto w = dense(cols * n, 1, "w"), d = dense(rows * ld, 2, "d");
      const auto out0 = dense(rows * ld, 3, "out0"), dw0 = dense(cols * n, 4, "dw0");
      const auto want = dense_ref(x, rows, cols, w, d, n, ld, out0, dw0);
      const auto got = run_sparse<double>(x, rows, cols, w, d, n, ld, out0, dw0);
      EXPECT_LE(max_rel(got.out, want.out), 1e-15);
      EXPECT_LE(max_rel(got.dw, want.dw), 1e-15);
      const auto got32 = run_sparse<float>(x, rows, cols, w, d, n, ld, out0, dw0);
      EXPECT_LE(max_rel(got32.out, want.out), 1e-6);
      EXPECT_LE(max_rel(got32.dw, want.dw), 1e-6);
      // The padding columns of a strided output are left alone.
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = n; j < ld; ++j) EXPECT_EQ(got.out[r * ld + j], out0[r * ld + j]);
    }
  }
}

TEST(SparseRows, StridedRowSetsCoverOneTimeStepEach) {
  // x (B, L, C) as B·L rows; the rows of step t are t, t + L, …: the products over each step's
  // rows write that step's rows of a (B, L, n) output and add to the same dw as all rows do.
  const int64_t B = 3, L = 4, C = 11, n = 70;
  const auto x = sparse_matrix(B * L, C, 0.15, 9);
  SparseRows<double> s;
  ASSERT_TRUE(sparse_rows_build(s, x.data(), B * L, C, 0.5));
  const auto w = dense(C * n, 10, "w"), d = dense(B * L * n, 11, "d");
  std::vector<double> out(B * L * n, 0.0), dw(C * n, 0.0);
  for (int64_t t = L - 1; t >= 0; --t) {  // any order of the steps
    sparse_rows_times(out.data() + t * n, L * n, s, w.data(), n, SparseRowSet{t, B, L});
    sparse_rows_t_times(dw.data(), s, d.data() + t * n, L * n, n, SparseRowSet{t, B, L});
  }
  const auto want = dense_ref(x, B * L, C, w, d, n, n, std::vector<double>(B * L * n, 0.0),
                              std::vector<double>(C * n, 0.0));
  EXPECT_LE(max_rel(out, want.out), 1e-15);
  EXPECT_LE(max_rel(dw, want.dw), 1e-14);
  // count −1: every step-th row from first to the end (rows 1, 5, 9 here).
  std::vector<double> part(B * n, 0.0);
  sparse_rows_times(part.data(), n, s, w.data(), n, SparseRowSet{1, -1, L});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < n; ++j) EXPECT_DOUBLE_EQ(part[b * n + j], out[(b * L + 1) * n + j]);
  // Sets that leave the matrix, or do not advance, are user errors.
  EXPECT_THROW(sparse_rows_times(out.data(), n, s, w.data(), n, SparseRowSet{1, 4, L}), UserError);
  EXPECT_THROW(sparse_rows_times(out.data(), n, s, w.data(), n, SparseRowSet{0, 2, 0}), UserError);
  EXPECT_THROW(sparse_rows_t_times(dw.data(), s, d.data(), n, n, SparseRowSet{-1, 1, 1}),
               UserError);
}

std::vector<float> floats(const std::vector<double>& v) {
  return std::vector<float>(v.begin(), v.end());
}

class SparseRowsCopies : public testing::TestWithParam<IsaCopy> {};

TEST_P(SparseRowsCopies, ProductsGiveTheGenericCopysBits) {
  // Widths with and without a tail past the 32-wide slices, and with and without single slices
  // after the wide blocks of the product (four slices in the AVX-512 copy, two in the AVX2 one:
  // 96, 200, 544); 37 columns: two 16-wide blocks and a tail in the AVX-512 compaction; more rows
  // than a 64-row block of t_times.
  ATTN_SKIP_WITHOUT_COPY(GetParam());
  for (int64_t n : {200, 64, 7, 96, 544}) {
    SCOPED_TRACE("n " + std::to_string(n));
    const int64_t rows = 70, cols = 37;
    const auto x = sparse_matrix(rows, cols, 0.1, 7);
    const auto w = dense(cols * n, 5, "w"), d = dense(rows * n, 6, "d");
    const std::vector<double> out0(rows * n, 0.5), dw0(cols * n, -0.5);
    const auto [generic, other] = test::generic_and(
        GetParam(), [&] { return run_sparse<float>(x, rows, cols, w, d, n, n, out0, dw0); });
    test::expect_same_bits(floats(generic.out), floats(other.out), "out");
    test::expect_same_bits(floats(generic.dw), floats(other.dw), "dw");
  }
}

TEST_P(SparseRowsCopies, BuildTheSameRowsNaNIncludedZeroSignIgnored) {
  // Rows of 37 (two 16-wide blocks and a tail of 5; four 8-wide blocks and a tail) with −0, NaN,
  // inf and denormals, in every block and the tail.
  ATTN_SKIP_WITHOUT_COPY(GetParam());
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  constexpr int64_t kCols = 37;
  std::vector<float> x(3 * kCols, 0.0f);
  x[0] = -0.0f;
  x[3] = nan;
  x[9] = 1e-42f;
  x[15] = -inf;
  x[20] = 2.5f;
  x[31] = -nan;
  x[36] = 7.0f;
  x[kCols + 7] = -0.0f;
  x[kCols + 8] = 1.0f;
  x[2 * kCols + 17] = -3.0f;
  auto build = [&] {
    SparseRows<float> s;
    EXPECT_TRUE(sparse_rows_build(s, x.data(), 3, kCols, 0.1));
    return s;
  };
  const auto [generic, other] = test::generic_and(GetParam(), build);
  EXPECT_EQ(generic.start, (std::vector<int64_t>{0, 6, 7, 8}));
  EXPECT_EQ(generic.col, (std::vector<int32_t>{3, 9, 15, 20, 31, 36, 8, 17}));
  EXPECT_EQ(other.start, generic.start);
  EXPECT_EQ(other.col, generic.col);
  test::expect_same_bits(generic.val, other.val, "val");
  // Refused whatever the copy: the first row alone holds 6 non-zeros, above 0.05 · 3 · 37.
  const auto refused = test::generic_and(GetParam(), [&] {
    SparseRows<float> s;
    return sparse_rows_build(s, x.data(), 3, kCols, 0.05);
  });
  EXPECT_FALSE(refused.first);
  EXPECT_FALSE(refused.second);
}

ATTN_ISA_COPIES_INSTANTIATE(SparseRowsCopies);

TEST(SparseRows, InitRowOverwritesInsteadOfAdding) {
  // out = init + x·w, whatever out held (NaN here); widths with and without a tail.
  for (int64_t n : {40, 64}) {
    const int64_t rows = 5, cols = 9;
    const auto x = sparse_matrix(rows, cols, 0.3, 12);
    const auto w = dense(cols * n, 13, "w"), init = dense(n, 14, "init");
    for (bool as_float : {false, true}) {
      std::vector<double> got(rows * n);
      if (as_float) {
        SparseRows<float> s;
        const auto xf = as<float>(x), wf = as<float>(w), initf = as<float>(init);
        ASSERT_TRUE(sparse_rows_build(s, xf.data(), rows, cols, 0.6));
        std::vector<float> out(rows * n, std::numeric_limits<float>::quiet_NaN());
        sparse_rows_times(out.data(), n, s, wf.data(), n, SparseRowSet{}, initf.data());
        got.assign(out.begin(), out.end());
      } else {
        SparseRows<double> s;
        ASSERT_TRUE(sparse_rows_build(s, x.data(), rows, cols, 0.6));
        std::vector<double> out(rows * n, std::numeric_limits<double>::quiet_NaN());
        sparse_rows_times(out.data(), n, s, w.data(), n, SparseRowSet{}, init.data());
        got = out;
      }
      std::vector<double> want(rows * n);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < n; ++j) {
          double sum = init[j];
          for (int64_t k = 0; k < cols; ++k) sum += x[r * cols + k] * w[k * n + j];
          want[r * n + j] = sum;
        }
      EXPECT_LE(max_rel(got, want), as_float ? 1e-6 : 1e-15) << "n " << n << " float " << as_float;
    }
  }
}

TEST(SparseRows, BadStridesAreUserErrors) {
  const std::vector<double> x{1, 0, 0, 1};
  SparseRows<double> s;
  ASSERT_TRUE(sparse_rows_build(s, x.data(), 2, 2, 0.5));
  std::vector<double> out(8, 0.0), w(8, 1.0);
  EXPECT_THROW(sparse_rows_times(out.data(), 3, s, w.data(), 4), UserError);
  EXPECT_THROW(sparse_rows_t_times(out.data(), s, w.data(), 3, 4), UserError);
}

}  // namespace
}  // namespace attn
