// Products with a mostly-zero input matrix (one- and multi-hot token encodings), by its
// non-zeros only.
//
// SparseRows holds a dense row-major x (rows × cols) as compressed rows: for row q, the entries
// start[q] .. start[q+1]−1 of (col, val), in increasing column order.
// Two products over the rows q_k = first + k·step, k < count (all rows by default; for a
// sequence x (B, T, C) the rows of time step t are first = t, step = T, count = B):
//   sparse_rows_times:    out[k] (row stride ldo) += x[q_k] · w          w (cols × n)
//   sparse_rows_t_times:  dw (cols × n)           += Σ_k x[q_k]ᵀ · d[k]  (d row stride ldd)
// Each output element is a sum over the non-zeros in a fixed order (rows in increasing k), so
// the result does not depend on the vector width (float: the generic, AVX2 and AVX-512 copies,
// ops/isa.h, give the same bits, NaN sign bits aside). Zeros of x are skipped, so an inf or NaN in
// w or d meeting a zero of x does not propagate as it would in a dense product.
// The builder decides whether a matrix is sparse enough to gain against a dense GEMM: at most
// sparse_rows_max_density(cols) of its entries non-zero (below).
#pragma once

#include <cstdint>
#include <vector>

namespace attn {

template <class T>
struct SparseRows {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> start;  // rows + 1
  std::vector<int32_t> col;
  std::vector<T> val;
  int64_t nnz() const { return start.empty() ? 0 : start.back(); }
};

// The density up to which the products by non-zeros replace the GEMM, by the width of x's rows.
// Wide rows: 15 %, between the crossovers of the two products at the LSTM's per-step shape (68
// columns; bench/bench_sparse_rows.cpp), and below the 19 % at which the MLP's first layer (576
// columns, qsa at N = 16) trains 5–8 % slower by its non-zeros. Rows of at most
// kSparseRowsShortRow columns: 25 %. There the GEMM makes at most that many multiply-adds for
// each output it writes, and at 19 % (36 columns, qsa at N = 16) whole training steps measured
// faster by the non-zeros: the LSTM with the shipped head 1.10×, third order 1.10×, attention
// 1.03× (docs/performance.md#sparse-short-rows). 64 is a cut between the measured 36 and 576,
// not a measured crossover.
inline constexpr double kSparseRowsMaxDensity = 0.15, kSparseRowsShortRowMaxDensity = 0.25;
inline constexpr int64_t kSparseRowsShortRow = 64;
inline double sparse_rows_max_density(int64_t cols) {
  return cols <= kSparseRowsShortRow ? kSparseRowsShortRowMaxDensity : kSparseRowsMaxDensity;
}

// Fills s with x (rows × cols) and returns true when at most max_density · rows · cols entries
// are non-zero (by default sparse_rows_max_density(cols)); otherwise returns false (s is then
// unspecified). Stops early once the count is exceeded. max_density must be in [0, 1].
template <class T>
bool sparse_rows_build(SparseRows<T>& s, const T* x, int64_t rows, int64_t cols,
                       double max_density);
template <class T>
bool sparse_rows_build(SparseRows<T>& s, const T* x, int64_t rows, int64_t cols) {
  return sparse_rows_build(s, x, rows, cols, sparse_rows_max_density(cols));
}

// Rows first, first + step, … (count of them; −1: up to the last row).
struct SparseRowSet {
  int64_t first = 0, count = -1, step = 1;
};

// With init (n values), sparse_rows_times overwrites instead: out[k] = init + x[q_k] · w (a bias
// row, without a separate pass over out).
template <class T>
void sparse_rows_times(T* out, int64_t ldo, const SparseRows<T>& s, const T* w, int64_t n,
                       SparseRowSet rows = {}, const T* init = nullptr);

template <class T>
void sparse_rows_t_times(T* dw, const SparseRows<T>& s, const T* d, int64_t ldd, int64_t n,
                         SparseRowSet rows = {});

}  // namespace attn
