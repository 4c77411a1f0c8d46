// Register-tiled small matrix products and fixed-order reductions for the fused attention
// kernels (ops/attention_fused.cpp, ops/third_order_fused.cpp): header-only templates that
// each ISA copy (ops/isa.h) inlines and compiles for its own target.
//
// product: C (M × n, row stride ldc) = (or +=) alpha · A · B with A (M × K) read through
// strides (rows ars, terms aks: a transposed operand is just swapped strides) and B (K × n,
// row stride ldb), in register tiles of 8, 4 or 1 rows (8: float in the AVX-512 copy; see
// product) by 16, 8, 4 or 1 columns, of vectors up to 64 bytes in the AVX-512 copy and up to 32
// elsewhere. Every entry of C is one accumulator summed over its terms
// in order, so no tiling, vector width or ISA copy changes a bit (the files that include this
// are compiled with -ffp-contract=off, no fast-math).
// Span restricts a product to what a causal block needs. isa_run runs a kernel body in the
// ISA copy in use, telling it the copy's vector width. lane_sum / lane_dot: sums in one
// fixed order (32-byte lane sums, the lanes added pairwise, then the tail), lane_dots and
// lane_dot_run several such dots at once; lane_max: a maximum (order-free); lane_sums and
// lane_sum_run several lane_sums at once.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ops/isa.h"

namespace attn {
namespace attention_tiles {

// GCC vectors of T of 64 bytes (one AVX-512 register: the AVX-512 copy's tiles only), 32 bytes
// (one AVX register; two SSE ones in the generic copy) and 16 bytes (one SSE register).
template <class T, int Bytes>
struct VecOf {
  typedef T type __attribute__((vector_size(Bytes)));
};
template <class T>
using Vec32 = VecOf<T, 32>;

// xt (d × N, row l = column l of x) from x (N × d, row stride ld).
template <class T>
ATTN_COPY_BODY void transpose_rows(T* xt, const T* x, int64_t N, int64_t d, int64_t ld) {
  for (int64_t j = 0; j < N; ++j)
    for (int64_t l = 0; l < d; ++l) xt[l * N + j] = x[j * ld + l];
}

// The lanes of a 32-byte vector of sums added pairwise (lane u + lane u + w, w = L/2 … 1): the
// fixed order lane_sum and lane_dot(s) finish in.
template <class T>
ATTN_COPY_BODY T lane_total(const typename Vec32<T>::type& acc) {
  constexpr int L = static_cast<int>(32 / sizeof(T));
  T lanes[L];
  std::memcpy(lanes, &acc, sizeof(acc));
  for (int w = L / 2; w >= 1; w /= 2)
    for (int u = 0; u < w; ++u) lanes[u] += lanes[u + w];
  return lanes[0];
}

// lane_total of M accumulators. For float and M = 4 the same adds (lane u + lane u + w, w = 4,
// 2, 1) made on whole vectors, four accumulators at a time with shuffles between them, instead
// of lane by lane through memory; otherwise lane by lane.
template <class T, int M>
ATTN_COPY_BODY void lane_totals(const typename Vec32<T>::type (&acc)[M], T (&out)[M]) {
  if constexpr (sizeof(T) == 4 && M == 4) {
    using V = typename Vec32<T>::type;
    // w = 4: [A0+A4 … A3+A7, B0+B4 … B3+B7] and the same for C, D.
    const V ab = __builtin_shufflevector(acc[0], acc[1], 0, 1, 2, 3, 8, 9, 10, 11) +
                 __builtin_shufflevector(acc[0], acc[1], 4, 5, 6, 7, 12, 13, 14, 15);
    const V cd = __builtin_shufflevector(acc[2], acc[3], 0, 1, 2, 3, 8, 9, 10, 11) +
                 __builtin_shufflevector(acc[2], acc[3], 4, 5, 6, 7, 12, 13, 14, 15);
    // w = 2: lanes 0, 1 of each plus lanes 2, 3.
    const V x = __builtin_shufflevector(ab, cd, 0, 1, 4, 5, 8, 9, 12, 13) +
                __builtin_shufflevector(ab, cd, 2, 3, 6, 7, 10, 11, 14, 15);
    // w = 1: lane 0 plus lane 1.
    const V y = __builtin_shufflevector(x, x, 0, 2, 4, 6, 0, 2, 4, 6) +
                __builtin_shufflevector(x, x, 1, 3, 5, 7, 1, 3, 5, 7);
    for (int m = 0; m < 4; ++m) out[m] = y[m];
  } else {
    for (int m = 0; m < M; ++m) out[m] = lane_total<T>(acc[m]);
  }
}

// Σ x[0 … n−1] in a fixed order: L lane sums over the 32-byte chunks, the lanes added
// pairwise, then the tail in order (the same bits in every ISA copy).
template <class T>
ATTN_COPY_BODY T lane_sum(const T* x, int64_t n) {
  using V = typename Vec32<T>::type;
  constexpr int L = static_cast<int>(32 / sizeof(T));
  V acc = V{};
  int64_t j = 0;
  for (; j + L <= n; j += L) {
    V v;
    std::memcpy(&v, x + j, sizeof(V));
    acc += v;
  }
  T sum = lane_total<T>(acc);
  for (; j < n; ++j) sum += x[j];
  return sum;
}

// max(init, x[0 … n−1]) (order-free: the same value however the lanes split the row, so four
// accumulators (one would wait on each compare); a NaN never becomes the maximum, and makes the
// softmax row NaN whatever the maximum; of +0 and −0 either may be returned, which changes no
// softmax: s − (±0) is s but for s = ±0, whose exp is 1 either way).
template <class T>
ATTN_COPY_BODY T lane_max(const T* x, int64_t n, T init) {
  using V = typename Vec32<T>::type;
  constexpr int L = static_cast<int>(32 / sizeof(T));
  V acc[4];
  for (int u = 0; u < 4; ++u) acc[u] = V{} + init;
  int64_t j = 0;
  for (; j + 4 * L <= n; j += 4 * L)
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) {
      V v;
      std::memcpy(&v, x + j + u * L, sizeof(V));
      acc[u] = v > acc[u] ? v : acc[u];
    }
  for (; j + L <= n; j += L) {
    V v;
    std::memcpy(&v, x + j, sizeof(V));
    acc[0] = v > acc[0] ? v : acc[0];
  }
  T mx = init;
  for (int u = 0; u < 4; ++u) {
    T lanes[L];
    std::memcpy(lanes, &acc[u], sizeof(V));
    for (int l = 0; l < L; ++l) mx = lanes[l] > mx ? lanes[l] : mx;
  }
  for (; j < n; ++j) mx = x[j] > mx ? x[j] : mx;
  return mx;
}

// out[m] = Σ_j x_m[j] · y_m[j] (Dot) or Σ_j x_m[j] over j < n for m < M, x_m = x + m·xs,
// y_m = y + m·ys, each in the order of lane_sum; the M chains of dependent adds interleaved (one
// alone waits on each add). lane_dots and lane_sums below.
template <class T, int M, bool Dot>
ATTN_COPY_BODY void lane_reduce(T* out, const T* x, int64_t xs, const T* y, int64_t ys, int64_t n) {
  using V = typename Vec32<T>::type;
  constexpr int L = static_cast<int>(32 / sizeof(T));
  V acc[M];
#pragma GCC unroll 8
  for (int m = 0; m < M; ++m) acc[m] = V{};
  int64_t j = 0;
  for (; j + L <= n; j += L)
#pragma GCC unroll 8
    for (int m = 0; m < M; ++m) {
      V a;
      std::memcpy(&a, x + m * xs + j, sizeof(V));
      if constexpr (Dot) {
        V b;
        std::memcpy(&b, y + m * ys + j, sizeof(V));
        a = a * b;
      }
      acc[m] += a;
    }
  T total[M];
  lane_totals<T, M>(acc, total);
  for (int m = 0; m < M; ++m) {
    T sum = total[m];
    for (int64_t t = j; t < n; ++t) sum += Dot ? x[m * xs + t] * y[m * ys + t] : x[m * xs + t];
    out[m] = sum;
  }
}

template <class T, int M>
ATTN_COPY_BODY void lane_dots(T* out, const T* x, int64_t xs, const T* y, int64_t ys, int64_t n) {
  lane_reduce<T, M, true>(out, x, xs, y, ys, n);
}
template <class T, int M>
ATTN_COPY_BODY void lane_sums(T* out, const T* x, int64_t xs, int64_t n) {
  lane_reduce<T, M, false>(out, x, xs, nullptr, 0, n);
}

// out[m] = lane_sum(x + m·xs, n) for m < count, four sums at a time.
template <class T>
ATTN_COPY_BODY void lane_sum_run(T* out, const T* x, int64_t xs, int64_t n, int64_t count) {
  int64_t m = 0;
  for (; m + 4 <= count; m += 4) lane_sums<T, 4>(out + m, x + m * xs, xs, n);
  for (; m < count; ++m) lane_sums<T, 1>(out + m, x + m * xs, xs, n);
}

// Σ x[j] · y[j] over j < n, in the order of lane_sum (lane_dots' one-dot case).
template <class T>
ATTN_COPY_BODY T lane_dot(const T* x, const T* y, int64_t n) {
  T out;
  lane_dots<T, 1>(&out, x, 0, y, 0, n);
  return out;
}

// out[m·os] = (or +=) lane_dot(x + m·xs, y + m·ys, n) for m < count, four dots at a time.
template <class T>
ATTN_COPY_BODY void lane_dot_run(T* out, int64_t os, bool add, const T* x, int64_t xs, const T* y,
                                 int64_t ys, int64_t n, int64_t count) {
  int64_t m = 0;
  for (; m + 4 <= count; m += 4) {
    T d[4];
    lane_dots<T, 4>(d, x + m * xs, xs, y + m * ys, ys, n);
    for (int u = 0; u < 4; ++u) out[(m + u) * os] = add ? out[(m + u) * os] + d[u] : d[u];
  }
  for (; m < count; ++m) {
    const T d = lane_dot(x + m * xs, y + m * ys, n);
    out[m * os] = add ? out[m * os] + d : d;
  }
}

// Which part of a product C (M × n) = A (M × K) · B (K × n) a causal block needs, by row
// tiles [r0, r1): all of it; the columns j < r1 (scores, dP); the terms k < r1 (P·V, dS·K:
// row i of A is 0 beyond i); the terms k ≥ r0 (Pᵀ·dO, dSᵀ·Q: row j of Aᵀ is 0 before j).
enum class Span { all, cols_below, k_below, k_from };

// One register tile: C[r][w] = (or +=) alpha · Σ_{k = k0}^{k1 − 1} A[r][k] · B[k][w] for
// r < R, w < W, with A[r][k] = a[r·ars + k·aks] and B[k][w] = b[k·ldb + w]. Every entry is
// one accumulator summed over k in order, so its value never depends on the tiling. W a
// multiple of a 64- (VB = 64 only), 32- or 16-byte vector's lanes: GCC vector types (the same
// element-wise arithmetic whatever registers a copy maps them to); else scalar. (As everywhere
// in ops/isa.h's copies, NaN inputs stay NaN but their payload may differ between copies.)

// The tile with W / (Bytes / sizeof(T)) vectors of Bytes bytes per row.
template <class T, int R, int W, int Bytes>
ATTN_COPY_BODY void tile_vec(T* c, int64_t ldc, const T* a, int64_t ars, int64_t aks, const T* b,
                             int64_t ldb, int64_t k0, int64_t k1, T alpha, bool add) {
  using V = typename VecOf<T, Bytes>::type;
  constexpr int L = static_cast<int>(Bytes / sizeof(T)), NV = W / L;
  V acc[R][NV];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int u = 0; u < NV; ++u) acc[r][u] = V{};
  for (int64_t k = k0; k < k1; ++k) {
    V bv[NV];
#pragma GCC unroll 16
    for (int u = 0; u < NV; ++u) std::memcpy(&bv[u], b + k * ldb + u * L, sizeof(V));
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      // x − (+0) is x for every x (−0 and NaN included), so this is a plain broadcast (the
      // embedded one of AVX-512); 0 + x would cost an add, as it turns −0 into +0.
      const V av = a[r * ars + k * aks] - V{};
#pragma GCC unroll 16
      for (int u = 0; u < NV; ++u) acc[r][u] += av * bv[u];
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int u = 0; u < NV; ++u) {
      V val = alpha == T(1) ? acc[r][u] : alpha * acc[r][u];
      T* cp = c + r * ldc + u * L;
      if (add) {
        V old;
        std::memcpy(&old, cp, sizeof(V));
        val = old + val;
      }
      std::memcpy(cp, &val, sizeof(V));
    }
}

template <class T, int R, int W, int VB>
ATTN_COPY_BODY void tile(T* c, int64_t ldc, const T* a, int64_t ars, int64_t aks, const T* b,
                         int64_t ldb, int64_t k0, int64_t k1, T alpha, bool add) {
  if constexpr (VB == 64 && W % (64 / sizeof(T)) == 0) {
    tile_vec<T, R, W, 64>(c, ldc, a, ars, aks, b, ldb, k0, k1, alpha, add);
  } else if constexpr (W % (32 / sizeof(T)) == 0) {
    tile_vec<T, R, W, 32>(c, ldc, a, ars, aks, b, ldb, k0, k1, alpha, add);
  } else if constexpr (W % (16 / sizeof(T)) == 0) {
    tile_vec<T, R, W, 16>(c, ldc, a, ars, aks, b, ldb, k0, k1, alpha, add);
  } else {
    T acc[R][W] = {};
    for (int64_t k = k0; k < k1; ++k)
      for (int r = 0; r < R; ++r) {
        const T ar = a[r * ars + k * aks];
        for (int w = 0; w < W; ++w) acc[r][w] += ar * b[k * ldb + w];
      }
    for (int r = 0; r < R; ++r)
      for (int w = 0; w < W; ++w) {
        const T v = alpha == T(1) ? acc[r][w] : alpha * acc[r][w];
        c[r * ldc + w] = add ? c[r * ldc + w] + v : v;
      }
  }
}

// The columns [j0, j1) of row tile [r0, r0 + R) of the product (see Span), in tiles of 16, 8, 4
// columns and then single columns. (Tiles of 32 columns in the AVX-512 copy, 16 accumulators,
// ran at 0.68–0.71× the rate of 16-column ones on a Zen 4 core, which keep the broadcast of A's
// entry inside each multiply: docs/performance.md#tiles-16-columns.)
template <class T, int R, int VB>
ATTN_COPY_BODY void tile_row(T* c, int64_t ldc, const T* a, int64_t ars, int64_t aks, const T* b,
                             int64_t ldb, int64_t j1, int64_t k0, int64_t k1, T alpha, bool add) {
  int64_t j = 0;
  for (; j + 16 <= j1; j += 16)
    tile<T, R, 16, VB>(c + j, ldc, a, ars, aks, b + j, ldb, k0, k1, alpha, add);
  for (; j + 8 <= j1; j += 8)
    tile<T, R, 8, VB>(c + j, ldc, a, ars, aks, b + j, ldb, k0, k1, alpha, add);
  for (; j + 4 <= j1; j += 4)
    tile<T, R, 4, VB>(c + j, ldc, a, ars, aks, b + j, ldb, k0, k1, alpha, add);
  for (; j < j1; ++j) tile<T, R, 1, VB>(c + j, ldc, a, ars, aks, b + j, ldb, k0, k1, alpha, add);
}

// Rows [r0, r0 + R) of the product in one row of tiles, over the columns and terms the span
// leaves to the rows [g0, g1) of their group.
template <class T, int R, int VB>
ATTN_COPY_BODY void row_block(T* c, int64_t ldc, const T* a, int64_t ars, int64_t aks, const T* b,
                              int64_t ldb, int64_t r0, int64_t g0, int64_t g1, int64_t n,
                              int64_t K, T alpha, bool add, Span span) {
  const int64_t j1 = span == Span::cols_below ? std::min(n, g1) : n;
  const int64_t k0 = span == Span::k_from ? g0 : 0;
  const int64_t k1 = span == Span::k_below ? std::min(K, g1) : K;
  tile_row<T, R, VB>(c + r0 * ldc, ldc, a + r0 * ars, ars, aks, b, ldb, j1, k0, k1, alpha, add);
}

// C (M × n, ldc) = (or +=) alpha · A · B over the span a causal block needs (Span::all
// otherwise); A (M × K) with strides ars (rows), aks (terms); B (K × n, ldb). VB: the widest
// vector in bytes (64 in the AVX-512 copy, else 32; the bits do not depend on it).
// Span::all and cols_below: float rows in blocks of 8 in the AVX-512 copy (8 × 16 floats are 8
// of its 32 registers), else 4, the rows left over in blocks of 4, then one by one; the columns
// a cols_below block computes beyond a row's span are the caller's to overwrite.
// Span::k_below and k_from: every copy in blocks of 4 rows (the rows left over one by one), each
// row summing the terms of its block's span: the terms beyond its own span are exact zeros of A,
// which change no sum of finite values, but 0 · inf is NaN, so with an inf or NaN in B there
// the result depends on the blocks, which therefore are the same in every copy.
template <class T, int VB>
ATTN_COPY_BODY void product(T* c, int64_t ldc, const T* a, int64_t ars, int64_t aks, const T* b,
                            int64_t ldb, int64_t M, int64_t n, int64_t K, T alpha, bool add,
                            Span span) {
  if (span == Span::k_below || span == Span::k_from) {
    for (int64_t g0 = 0; g0 < M; g0 += 4) {
      const int64_t g1 = std::min(M, g0 + 4);
      if (g1 - g0 == 4) {
        row_block<T, 4, VB>(c, ldc, a, ars, aks, b, ldb, g0, g0, g1, n, K, alpha, add, span);
      } else {
        for (int64_t r = g0; r < g1; ++r)
          row_block<T, 1, VB>(c, ldc, a, ars, aks, b, ldb, r, g0, g1, n, K, alpha, add, span);
      }
    }
    return;
  }
  constexpr int64_t R = VB == 64 && sizeof(T) == 4 ? 8 : 4;
  int64_t r0 = 0;
  for (; r0 + R <= M; r0 += R)
    row_block<T, R, VB>(c, ldc, a, ars, aks, b, ldb, r0, r0, r0 + R, n, K, alpha, add, span);
  if constexpr (R > 4)
    for (; r0 + 4 <= M; r0 += 4)
      row_block<T, 4, VB>(c, ldc, a, ars, aks, b, ldb, r0, r0, r0 + 4, n, K, alpha, add, span);
  for (; r0 < M; ++r0)
    row_block<T, 1, VB>(c, ldc, a, ars, aks, b, ldb, r0, r0, r0 + 1, n, K, alpha, add, span);
}

// A kernel type for isa_run whose run<VB>(args …) is body<VB>(args …) (body an ATTN_COPY_BODY
// template whose first parameter is the copy's widest vector in bytes, for product).
#define ATTN_TILES_KERNEL(Name, body)        \
  struct Name {                              \
    template <int VB, class... A>            \
    ATTN_COPY_BODY static void run(A... a) { \
      body<VB>(a...);                        \
    }                                        \
  };

// K::run<VB>(args …) in the ISA copy isa_active() picks (ops/isa.h): K::run is an
// ATTN_COPY_BODY function that each copy below compiles for its own target, with VB = 64 (one
// zmm register) in the AVX-512 copy and 32 in the others (64-byte GCC vectors would spill
// there).
template <class K, class... A>
void copy_generic(A... a) {
  K::template run<32>(a...);
}
#if ATTN_HAVE_ISA_COPIES
template <class K, class... A>
[[gnu::target("avx2")]] void copy_avx2(A... a) {
  K::template run<32>(a...);
}
template <class K, class... A>
ATTN_TARGET_AVX512 void copy_avx512(A... a) {
  K::template run<64>(a...);
}
#endif
template <class K, class... A>
void isa_run(A... a) {
#if ATTN_HAVE_ISA_COPIES
  switch (isa_active()) {
    case IsaCopy::avx512: return copy_avx512<K>(a...);
    case IsaCopy::avx2: return copy_avx2<K>(a...);
    case IsaCopy::generic:
    case IsaCopy::automatic: break;
  }
#endif
  copy_generic<K>(a...);
}

}  // namespace attention_tiles
}  // namespace attn
