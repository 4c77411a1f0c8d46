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
// kSparseRowsMaxDensity of its entries non-zero, between the measured crossovers of the two
// products (bench/bench_sparse_rows.cpp; docs/performance.md, LSTM section).
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

inline constexpr double kSparseRowsMaxDensity = 0.15;

// Fills s with x (rows × cols) and returns true when at most max_density · rows · cols entries
// are non-zero; otherwise returns false (s is then unspecified). Stops early once the count is
// exceeded. max_density must be in [0, 1].
template <class T>
bool sparse_rows_build(SparseRows<T>& s, const T* x, int64_t rows, int64_t cols,
                       double max_density = kSparseRowsMaxDensity);

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
