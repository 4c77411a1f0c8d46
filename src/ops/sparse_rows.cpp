// Compressed rows of a mostly-zero matrix and its two products (see sparse_rows.h).
//
// sparse_rows_times (float) keeps 32 outputs of one row in registers while it adds v · w[k, slice]
// for each non-zero (k, v) of the row, so out is read and written once per row.
// sparse_rows_t_times (float) works on blocks of rows, their non-zeros grouped by column (a
// counting sort that keeps each column's entries in row order): for each column and slice of dw
// (128 columns, eight 16-float vectors, in the AVX-512 copy, then 32), the slice is loaded once
// into registers, the scaled slices of d of the column's entries are added in row order, and it
// is stored once (before 2026-12-05 each non-zero loaded and stored its column's slice: bound by
// stores). The order of the additions into each dw element is the rows' order either way, so the
// bits are the same.
// The float loops are compiled three times (generic x86-64, AVX2 and AVX-512, no FMA: ops/isa.h);
// the 32-float slices are four 8-float vectors in the generic and AVX2 copies and two 16-float
// vectors in the AVX-512 copy. Each output element gets the same operations in the same order in
// every copy, and this file is built with -ffp-contract=off, so that the copies round alike.
#include "ops/sparse_rows.h"

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "ops/isa.h"

#if ATTN_HAVE_ISA_COPIES
#include <immintrin.h>
#endif

namespace attn {
namespace {

// Rows q_k = first + k·step, k < count, of s; row k of out and d belongs to q_k.
template <class T>
struct Range {
  const SparseRows<T>& s;
  int64_t first, count, step;
  int64_t q(int64_t k) const { return first + k * step; }
};

// Plain loops over columns [c0, n) (double, and the float tails).
template <class T>
ATTN_COPY_BODY void times_cols(T* out, int64_t ldo, const Range<T>& g, const T* w, int64_t n,
                               const T* init, int64_t c0) {
  for (int64_t k = 0; k < g.count; ++k) {
    const int64_t q = g.q(k);
    T* o = out + k * ldo;
    if (init) std::copy(init + c0, init + n, o + c0);
    for (int64_t e = g.s.start[q]; e < g.s.start[q + 1]; ++e) {
      const T v = g.s.val[e];
      const T* wr = w + g.s.col[e] * n;
      for (int64_t j = c0; j < n; ++j) o[j] += v * wr[j];
    }
  }
}

template <class T>
ATTN_COPY_BODY void t_times_cols(T* dw, const Range<T>& g, const T* d, int64_t ldd, int64_t n,
                                 int64_t c0) {
  for (int64_t k = 0; k < g.count; ++k) {
    const int64_t q = g.q(k);
    const T* __restrict dr = d + k * ldd;
    for (int64_t e = g.s.start[q]; e < g.s.start[q + 1]; ++e) {
      const T v = g.s.val[e];
      T* __restrict gw = dw + g.s.col[e] * n;
      for (int64_t j = c0; j < n; ++j) gw[j] += v * dr[j];
    }
  }
}

template <class T>
ATTN_COPY_BODY void times(T* out, int64_t ldo, const Range<T>& g, const T* w, int64_t n,
                          const T* init) {
  times_cols(out, ldo, g, w, n, init, 0);
}

template <class T>
ATTN_COPY_BODY void t_times(T* dw, const Range<T>& g, const T* d, int64_t ldd, int64_t n) {
  t_times_cols(dw, g, d, ldd, n, 0);
}

// float: 32-float slices as kSlice / L vectors of L floats (GCC's vector extension): V = f8 (one
// AVX2 register each, or two SSE registers in the generic copy) or f16 (one AVX-512 register).
using f8 = float __attribute__((vector_size(32)));
using f16 = float __attribute__((vector_size(64)));
constexpr int64_t kSlice = 32;
constexpr int64_t kRowBlock = 64;
template <class V>
constexpr int kLanes = static_cast<int>(sizeof(V) / sizeof(float));
template <class V>
constexpr int kVecs = static_cast<int>(kSlice) / kLanes<V>;

// By reference: a 32- or 64-byte vector passed or returned by value would change the ABI between
// the copies (GCC's -Wpsabi). Through an unaligned, may-alias type of the vector rather than
// memcpy, which kept the slice's accumulators in memory (on the stack) instead of registers.
template <class V>
ATTN_COPY_BODY void load(V& v, const float* p) {
  typedef V Unaligned __attribute__((aligned(4), may_alias));
  v = *reinterpret_cast<const Unaligned*>(p);
}
template <class V>
ATTN_COPY_BODY void store(float* p, const V& v) {
  typedef V Unaligned __attribute__((aligned(4), may_alias));
  *reinterpret_cast<Unaligned*>(p) = v;
}

// Row q's product into NV vectors of out from column c0 on: acc = (init or out) + Σ_e val_e ·
// w[col_e] over the row's non-zeros in order.
template <class V, int NV>
ATTN_COPY_BODY void times_block(float* o, const Range<float>& g, int64_t q, const float* w,
                                int64_t n, const float* init, int64_t c0) {
  constexpr int L = kLanes<V>;
  const int64_t* start = g.s.start.data();
  const int32_t* col = g.s.col.data();
  const float* val = g.s.val.data();
  const float* a = init ? init : o;  // the sum starts from init's row, or from out's
  V acc[NV];
  for (int j = 0; j < NV; ++j) load(acc[j], a + c0 + j * L);
  for (int64_t e = start[q]; e < start[q + 1]; ++e) {
    const V v = val[e] - V{};  // a plain broadcast (x − 0 is x; 0 + x costs an add)
    const float* wr = w + col[e] * n + c0;
    for (int j = 0; j < NV; ++j) {  // acc += v · w[col, block]
      V x;
      load(x, wr + j * L);
      acc[j] += v * x;
    }
  }
  for (int j = 0; j < NV; ++j) store(o + c0 + j * L, acc[j]);
}

// Wide slices at a time (each of kSlice columns), then single slices: a row's few non-zeros make
// each accumulator a short chain of dependent adds, so more accumulators keep more of them in
// flight (the same sums: each output is its own chain over the non-zeros in order).
template <class V, int Wide>
ATTN_COPY_BODY void times_slices(float* out, int64_t ldo, const Range<float>& g, const float* w,
                                 int64_t n, const float* init) {
  const int64_t n_full = n - n % kSlice, wide = Wide * kSlice;
  for (int64_t k = 0; k < g.count; ++k) {
    const int64_t q = g.q(k);
    float* o = out + k * ldo;
    int64_t c0 = 0;
    for (; c0 + wide <= n_full; c0 += wide)
      times_block<V, Wide * kVecs<V>>(o, g, q, w, n, init, c0);
    for (; c0 < n_full; c0 += kSlice) times_block<V, kVecs<V>>(o, g, q, w, n, init, c0);
  }
  if (n_full < n) times_cols(out, ldo, g, w, n, init, n_full);
}

// The non-zeros of rows k0 … k1 − 1 of a Range grouped by column: column c's entries are
// start[c] … start[c + 1] − 1 of (k, v), in increasing k.
struct ByColumn {
  std::vector<int64_t> start, next;
  std::vector<int64_t> k;
  std::vector<float> v;
};

void group_by_column(ByColumn& b, const Range<float>& g, int64_t k0, int64_t k1) {
  const int64_t cols = g.s.cols;
  b.start.assign(static_cast<size_t>(cols + 1), 0);
  for (int64_t k = k0; k < k1; ++k) {
    const int64_t q = g.q(k);
    for (int64_t e = g.s.start[q]; e < g.s.start[q + 1]; ++e) ++b.start[g.s.col[e] + 1];
  }
  for (int64_t c = 0; c < cols; ++c) b.start[c + 1] += b.start[c];
  b.next.assign(b.start.begin(), b.start.end() - 1);
  b.k.resize(static_cast<size_t>(b.start[cols]));
  b.v.resize(b.k.size());
  for (int64_t k = k0; k < k1; ++k) {
    const int64_t q = g.q(k);
    for (int64_t e = g.s.start[q]; e < g.s.start[q + 1]; ++e) {
      const int64_t i = b.next[g.s.col[e]]++;
      b.k[i] = k;
      b.v[i] = g.s.val[e];
    }
  }
}

// dw[c, c0 : c0 + NV·L) += v · d[k, same] over column c's grouped entries, k in order.
template <class V, int NV>
ATTN_COPY_BODY void t_times_slice(float* gw, const ByColumn& b, int64_t e0, int64_t e1,
                                  const float* d, int64_t ldd) {
  constexpr int L = kLanes<V>;
  V acc[NV];
  for (int j = 0; j < NV; ++j) load(acc[j], gw + j * L);
  for (int64_t e = e0; e < e1; ++e) {
    const V v = b.v[e] - V{};  // a plain broadcast (x − 0 is x)
    const float* dr = d + b.k[e] * ldd;
    for (int j = 0; j < NV; ++j) {
      V x;
      load(x, dr + j * L);
      acc[j] += v * x;
    }
  }
  for (int j = 0; j < NV; ++j) store(gw + j * L, acc[j]);
}

// Slices of Wide vectors of V first (the AVX-512 copy's eight registers; kSlice elsewhere), then
// of kSlice, then the columns one by one.
template <class V, int Wide>
ATTN_COPY_BODY void t_times_slices(float* dw, const Range<float>& g, const float* d, int64_t ldd,
                                   int64_t n, ByColumn& b) {
  const int64_t wide = Wide * kLanes<V>;
  const int64_t n_wide = n - n % wide, n_full = n - n % kSlice;
  if (n_full > 0)
    for (int64_t k0 = 0; k0 < g.count; k0 += kRowBlock) {
      group_by_column(b, g, k0, std::min(g.count, k0 + kRowBlock));
      for (int64_t c = 0; c < g.s.cols; ++c) {
        const int64_t e0 = b.start[c], e1 = b.start[c + 1];
        if (e0 == e1) continue;
        for (int64_t c0 = 0; c0 < n_wide; c0 += wide)
          t_times_slice<V, Wide>(dw + c * n + c0, b, e0, e1, d + c0, ldd);
        for (int64_t c0 = n_wide; c0 < n_full; c0 += kSlice)
          t_times_slice<V, kVecs<V>>(dw + c * n + c0, b, e0, e1, d + c0, ldd);
      }
    }
  if (n_full < n) t_times_cols(dw, g, d, ldd, n, n_full);
}

template <>
ATTN_COPY_BODY void times<float>(float* out, int64_t ldo, const Range<float>& g, const float* w,
                                 int64_t n, const float* init) {
  times_slices<f8, 1>(out, ldo, g, w, n, init);
}

void t_times_float(float* dw, const Range<float>& g, const float* d, int64_t ldd, int64_t n,
                   ByColumn& b) {
  t_times_slices<f8, kVecs<f8>>(dw, g, d, ldd, n, b);
}

#if ATTN_HAVE_ISA_COPIES
[[gnu::target("avx2")]] void times_avx2(float* out, int64_t ldo, const Range<float>& g,
                                        const float* w, int64_t n, const float* init) {
  times_slices<f8, 2>(out, ldo, g, w, n, init);
}
[[gnu::target("avx2")]] void t_times_avx2(float* dw, const Range<float>& g, const float* d,
                                          int64_t ldd, int64_t n, ByColumn& b) {
  t_times_slices<f8, kVecs<f8>>(dw, g, d, ldd, n, b);
}
ATTN_TARGET_AVX512 void times_avx512(float* out, int64_t ldo, const Range<float>& g,
                                     const float* w, int64_t n, const float* init) {
  times_slices<f16, 4>(out, ldo, g, w, n, init);
}
ATTN_TARGET_AVX512 void t_times_avx512(float* dw, const Range<float>& g, const float* d,
                                       int64_t ldd, int64_t n, ByColumn& b) {
  t_times_slices<f16, 8>(dw, g, d, ldd, n, b);
}
#endif

template <class T>
Range<T> range_of(const SparseRows<T>& s, int64_t n, int64_t ld, SparseRowSet r, const char* what) {
  const bool ok_set = r.first >= 0 && r.step >= 1 && r.first <= s.rows;
  if (ok_set && r.count < 0) r.count = (s.rows - r.first + r.step - 1) / r.step;
  ATTN_CHECK(n >= 0 && ld >= n && static_cast<int64_t>(s.start.size()) == s.rows + 1 && ok_set &&
                 (r.count == 0 || r.first + (r.count - 1) * r.step < s.rows),
             std::string("sparse_rows: ") + what + ": bad shape (n " + std::to_string(n) +
                 ", row stride " + std::to_string(ld) + ", rows " + std::to_string(r.first) +
                 " + k*" + std::to_string(r.step) + " for " + std::to_string(r.count) + " k, of " +
                 std::to_string(s.rows) + ")");
  return Range<T>{s, r.first, r.count, r.step};
}

// Appends the non-zeros of xr[k0, k1) at slot nnz (room for k1 − k0 more), branch-free (the
// positions of the non-zeros are data, not predictable): every entry is written at the next free
// slot, which advances only past a non-zero. Returns the new count.
template <class T>
ATTN_COPY_BODY int64_t compact_row(int32_t* c, T* v, int64_t nnz, const T* xr, int64_t k0,
                                   int64_t k1) {
  for (int64_t k = k0; k < k1; ++k) {
    c[nnz] = static_cast<int32_t>(k);
    v[nnz] = xr[k];
    nnz += xr[k] != T(0);
  }
  return nnz;
}

#if ATTN_HAVE_ISA_COPIES
// The same with AVX2 compares: 8 entries at a time, a loop over the set bits of their mask only.
// Data movement, so the same result as compact_row.
[[gnu::target("avx2")]] int64_t compact_row_avx2(int32_t* c, float* v, int64_t nnz, const float* xr,
                                                 int64_t cols) {
  const __m256 zero = _mm256_setzero_ps();
  int64_t k0 = 0;
  for (; k0 + 8 <= cols; k0 += 8) {
    // Unordered-or-unequal: NaN counts as non-zero, ±0 as zero, as in compact_row.
    unsigned mask = static_cast<unsigned>(
        _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(xr + k0), zero, _CMP_NEQ_UQ)));
    while (mask != 0) {
      const int k = __builtin_ctz(mask);
      c[nnz] = static_cast<int32_t>(k0 + k);
      v[nnz] = xr[k0 + k];
      ++nnz;
      mask &= mask - 1;
    }
  }
  return compact_row(c, v, nnz, xr, k0, cols);
}

// With AVX-512: 16 entries at a time, the non-zeros' values and column indices packed to the front
// of a register (vcompress) and stored whole, so each block writes up to 15 entries past the new
// count: room for cols entries from the row's first slot (compact gives that) is still enough, as
// the count at block k0 is at most k0 past the row's first slot. Data movement again.
ATTN_TARGET_AVX512 int64_t compact_row_avx512(int32_t* c, float* v, int64_t nnz, const float* xr,
                                              int64_t cols) {
  const __m512 zero = _mm512_setzero_ps();
  const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  int64_t k0 = 0;
  for (; k0 + 16 <= cols; k0 += 16) {
    const __m512 x = _mm512_loadu_ps(xr + k0);
    const __mmask16 mask = _mm512_cmp_ps_mask(x, zero, _CMP_NEQ_UQ);  // as compact_row's test
    const __m512i index = _mm512_add_epi32(lanes, _mm512_set1_epi32(static_cast<int32_t>(k0)));
    _mm512_storeu_ps(v + nnz, _mm512_maskz_compress_ps(mask, x));
    _mm512_storeu_si512(c + nnz, _mm512_maskz_compress_epi32(mask, index));
    nnz += __builtin_popcount(static_cast<unsigned>(mask));
  }
  return compact_row(c, v, nnz, xr, k0, cols);
}
#endif

// The row's non-zeros from slot nnz on; needs room for cols entries there.
template <class T>
int64_t compact(int32_t* c, T* v, int64_t nnz, const T* xr, int64_t cols) {
#if ATTN_HAVE_ISA_COPIES
  if constexpr (std::is_same_v<T, float>) {
    switch (isa_active()) {
      case IsaCopy::avx512: return compact_row_avx512(c, v, nnz, xr, cols);
      case IsaCopy::avx2: return compact_row_avx2(c, v, nnz, xr, cols);
      default: break;
    }
  }
#endif
  return compact_row(c, v, nnz, xr, 0, cols);
}

}  // namespace

template <class T>
bool sparse_rows_build(SparseRows<T>& s, const T* x, int64_t rows, int64_t cols,
                       double max_density) {
  ATTN_CHECK(rows >= 0 && cols >= 1 && cols <= INT32_MAX,
             "sparse_rows: need rows >= 0 and 1 <= cols < 2^31");
  ATTN_CHECK(max_density >= 0 && max_density <= 1,
             "sparse_rows: max_density must be in [0, 1], got " + std::to_string(max_density));
  const int64_t limit = static_cast<int64_t>(max_density * static_cast<double>(rows * cols));
  s.rows = rows;
  s.cols = cols;
  s.start.resize(static_cast<size_t>(rows + 1));
  s.start[0] = 0;
  s.col.resize(static_cast<size_t>(limit + cols));
  s.val.resize(static_cast<size_t>(limit + cols));
  int64_t nnz = 0;
  for (int64_t q = 0; q < rows; ++q) {
    nnz = compact(s.col.data(), s.val.data(), nnz, x + q * cols, cols);
    if (nnz > limit) return false;
    s.start[q + 1] = nnz;
  }
  s.col.resize(static_cast<size_t>(nnz));
  s.val.resize(static_cast<size_t>(nnz));
  return true;
}

template <class T>
void sparse_rows_times(T* out, int64_t ldo, const SparseRows<T>& s, const T* w, int64_t n,
                       SparseRowSet rows, const T* init) {
  const Range<T> g = range_of(s, n, ldo, rows, "times");
#if ATTN_HAVE_ISA_COPIES
  if constexpr (std::is_same_v<T, float>) {
    switch (isa_active()) {
      case IsaCopy::avx512: return times_avx512(out, ldo, g, w, n, init);
      case IsaCopy::avx2: return times_avx2(out, ldo, g, w, n, init);
      default: break;
    }
  }
#endif
  times(out, ldo, g, w, n, init);
}

template <class T>
void sparse_rows_t_times(T* dw, const SparseRows<T>& s, const T* d, int64_t ldd, int64_t n,
                         SparseRowSet rows) {
  const Range<T> g = range_of(s, n, ldd, rows, "t_times");
  if constexpr (std::is_same_v<T, float>) {
    thread_local ByColumn b;  // kept: the fused LSTM head calls this on every block of 64 rows
#if ATTN_HAVE_ISA_COPIES
    switch (isa_active()) {
      case IsaCopy::avx512: return t_times_avx512(dw, g, d, ldd, n, b);
      case IsaCopy::avx2: return t_times_avx2(dw, g, d, ldd, n, b);
      default: break;
    }
#endif
    t_times_float(dw, g, d, ldd, n, b);
  } else {
    t_times(dw, g, d, ldd, n);
  }
}

#define ATTN_SPARSE_ROWS_INSTANTIATE(T)                                                          \
  template struct SparseRows<T>;                                                                 \
  template bool sparse_rows_build<T>(SparseRows<T>&, const T*, int64_t, int64_t, double);        \
  template void sparse_rows_times<T>(T*, int64_t, const SparseRows<T>&, const T*, int64_t,       \
                                     SparseRowSet, const T*);                                    \
  template void sparse_rows_t_times<T>(T*, const SparseRows<T>&, const T*, int64_t, int64_t,     \
                                       SparseRowSet);
ATTN_SPARSE_ROWS_INSTANTIATE(float)
ATTN_SPARSE_ROWS_INSTANTIATE(double)
#undef ATTN_SPARSE_ROWS_INSTANTIATE

}  // namespace attn
