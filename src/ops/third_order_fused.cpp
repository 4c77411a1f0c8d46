// The fused per-(sequence, head) third-order attention kernel (see third_order_fused.h).
//
// All pairs at once: with n2 = N² and the pair index jk = j·N + k, the scores of every query
// are one product, S (N × n2) = scale · Q Cᵀ with C (n2 × dk) row jk = k1_j ∘ k2_k, and the
// output another, O (N × dv) = P D with D (n2 × dv) row jk = v1_j ∘ v2_k. Row i of S and P is
// query i's N × N pair block, the layout of p. The products are ops/attention_tiles.h's
// register tiles over long, regular dimensions (n2 columns, or n2 terms) instead of one small
// product per query:
//   forward   S = scale · Q Cᵀ into p; per row, softmax over its unmasked pairs (masked
//             exactly 0); O = P D (one fixed-order dot per entry);
//   backward  dDᵀ = dOᵀ P, dv1_j += Σ_k dD_jk ∘ v2_k, dv2_k += Σ_j dD_jk ∘ v1_j;
//             dP = dO Dᵀ, dS = P ∘ (dP − Σ dP ∘ P) per row;
//             U = dS C, dq += scale · U, dscale += Σ_i <q_i, U_i>;
//             dC = scale · dSᵀ Q, dk1_j += Σ_k dC_jk ∘ k2_k, dk2_k += Σ_j dC_jk ∘ k1_j.
// Masked pairs (exclude_self: j = i, k = i or j = k; causal: j > i or k > i) are computed and
// then set to −∞ before the softmax: causal blocks do the full N³·dk products (no shipped
// experiment trains a causal third-order unit). score_bits rounds all N³ scores of the block
// with one scale (masked ones set to 0 first). Every output entry is one accumulator summed in
// a fixed order, so the same bits in every ISA copy, thread count and batch split.
#include "ops/third_order_fused.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "ops/attention_tiles.h"
#include "ops/isa.h"
#include "ops/quantize.h"
#include "ops/vmath.h"

namespace attn {
namespace {

using namespace attention_tiles;

// Scratch layout of one block (n2 = N²).
struct Scratch {
  int64_t N, dk, dv;
  template <class T>
  struct Parts {
    T *k2t, *v2t, *c, *dt, *ds, *ddt, *dc, *u, *acc;
  };
  template <class T>
  Parts<T> parts(T* s) const {
    const int64_t n2 = N * N;
    Parts<T> x;
    x.k2t = s;               // dk × N
    x.v2t = x.k2t + dk * N;  // dv × N
    x.c = x.v2t + dv * N;    // Cᵀ (dk × n2) in the forward, C (n2 × dk) in the backward
    x.dt = x.c + dk * n2;    // Dᵀ (dv × n2)
    x.ds = x.dt + dv * n2;   // dP, then dS (N × n2)
    x.ddt = x.ds + N * n2;   // dDᵀ (dv × n2)
    x.dc = x.ddt + dv * n2;  // dC (n2 × dk)
    x.u = x.dc + n2 * dk;    // U (N × dk)
    x.acc = x.u + N * dk;    // N: the rows' Σ dP ∘ P, then value_grads' sums
    return x;
  }
  int64_t size() const {
    const int64_t n2 = N * N;
    return (dk + dv) * N + 2 * dk * n2 + 2 * dv * n2 + N * n2 + N * dk + N;
  }
};

// Body::run<Bytes, Whole>(args …) over rows of n values: with Bytes the copy's widest vector (VB)
// or 32 when its lanes divide n (Whole: whole vectors and no tail loop; N = 16 is one 64-byte
// vector, and 64- and 32-byte loops and a tail for each 16-float row cost the pair tables about
// 8 cycles a row), else 32 bytes and the row's last partial vector one element at a time.
// Element-wise products or per-entry sums in order: the same bits at any width.
template <class Body, int VB, class T, class... A>
ATTN_COPY_BODY void run_in_vectors(int64_t n, A... args) {
  if constexpr (VB == 64)
    if (n % int64_t(64 / sizeof(T)) == 0) return Body::template run<64, true>(args...);
  if (n % int64_t(32 / sizeof(T)) == 0) return Body::template run<32, true>(args...);
  Body::template run<32, false>(args...);
}

// Pair products transposed: out (d × n2), out[l][j·N + k] = x_jl · yᵀ[l][k]; x (N × d, row
// stride ld), yt (d × N).
struct PairProductsT {
  template <int Bytes, bool Whole, class T>
  ATTN_COPY_BODY static void run(T* out, const T* x, const T* yt, int64_t N, int64_t d,
                                 int64_t ld) {
    using V = typename VecOf<T, Bytes>::type;
    constexpr int64_t L = Bytes / sizeof(T);
    for (int64_t l = 0; l < d; ++l)
      for (int64_t j = 0; j < N; ++j) {
        const T xs = x[j * ld + l];
        const V s = xs - V{};  // a plain broadcast
        const T* y = yt + l * N;
        T* o = out + l * N * N + j * N;
        int64_t k = 0;
        for (; Whole ? k < N : k + L <= N; k += L) {
          V v;
          std::memcpy(&v, y + k, sizeof(V));
          v = s * v;
          std::memcpy(o + k, &v, sizeof(V));
        }
        if constexpr (!Whole)
          for (; k < N; ++k) o[k] = xs * y[k];
      }
  }
};
template <int VB, class T>
ATTN_COPY_BODY void pair_products_t(T* out, const T* x, const T* yt, int64_t N, int64_t d,
                                    int64_t ld) {
  run_in_vectors<PairProductsT, VB, T>(N, out, x, yt, N, d, ld);
}

// Pair products: out (n2 × d), row j·N + k = x_j ∘ y_k; x, y (N × d, row stride ld).
struct PairProducts {
  template <int Bytes, bool Whole, class T>
  ATTN_COPY_BODY static void run(T* out, const T* x, const T* y, int64_t N, int64_t d, int64_t ld) {
    using V = typename VecOf<T, Bytes>::type;
    constexpr int64_t L = Bytes / sizeof(T);
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < N; ++k) {
        const T *xj = x + j * ld, *yk = y + k * ld;
        T* o = out + (j * N + k) * d;
        int64_t l = 0;
        for (; Whole ? l < d : l + L <= d; l += L) {
          V a, b;
          std::memcpy(&a, xj + l, sizeof(V));
          std::memcpy(&b, yk + l, sizeof(V));
          a = a * b;
          std::memcpy(o + l, &a, sizeof(V));
        }
        if constexpr (!Whole)
          for (; l < d; ++l) o[l] = xj[l] * yk[l];
      }
  }
};
template <int VB, class T>
ATTN_COPY_BODY void pair_products(T* out, const T* x, const T* y, int64_t N, int64_t d,
                                  int64_t ld) {
  run_in_vectors<PairProducts, VB, T>(d, out, x, y, N, d, ld);
}

// Sets query i's masked pairs of its row s (n2 entries) to value.
template <class T>
ATTN_COPY_BODY void mask_row(T* s, int64_t i, const ThirdOrderBlock& a, T value) {
  const int64_t N = a.N;
  if (a.causal) {
    for (int64_t j = 0; j <= i; ++j) std::fill(s + j * N + i + 1, s + (j + 1) * N, value);
    std::fill(s + (i + 1) * N, s + N * N, value);
  }
  if (a.exclude_self)
    for (int64_t j = 0; j < N; ++j) s[i * N + j] = s[j * N + i] = s[j * N + j] = value;
}

// In place: the block's rows (N of n2 scores) become exp(s − the row's max) over their unmasked
// pairs, every masked entry exactly 0 (exp(−∞)); inv[i] = 1 / row i's sum (lane_sum's order), the
// factor that makes it the softmax. Pass by pass over all rows: the masks' scalar stores are done
// before any row is read as vectors, one exp covers the block (element-wise: the same values as
// row by row), and four rows' sums run side by side.
template <class T>
ATTN_COPY_BODY void pair_exps(T* p, T* inv, const ThirdOrderBlock& a) {
  const int64_t N = a.N, n2 = N * N;
  const T neg_inf = -std::numeric_limits<T>::infinity();
  for (int64_t i = 0; i < N; ++i) mask_row(p + i * n2, i, a, neg_inf);
  for (int64_t i = 0; i < N; ++i) {
    T* s = p + i * n2;
    const T mx = lane_max(s, n2, neg_inf);
    for (int64_t e = 0; e < n2; ++e) s[e] -= mx;
  }
  vmath_exp_nonpositive(p, p, N * n2);
  lane_sum_run(inv, p, n2, n2, N);
  for (int64_t i = 0; i < N; ++i) inv[i] = T(1) / inv[i];
}

// p[0 … n) *= inv, and out[m·os] = lane_dot(p, y + m·ys, n) for m < M from the scaled values as
// they are stored (lane_dots' order): the softmax's last pass and the output's dots in one.
template <class T, int M>
ATTN_COPY_BODY void scale_and_dots(T* out, int64_t os, T* p, T inv, const T* y, int64_t ys,
                                   int64_t n) {
  using V = typename Vec32<T>::type;
  constexpr int L = static_cast<int>(32 / sizeof(T));
  V acc[M];
#pragma GCC unroll 4
  for (int m = 0; m < M; ++m) acc[m] = V{};
  const V iv = inv - V{};  // a plain broadcast
  int64_t j = 0;
  for (; j + L <= n; j += L) {
    V a;
    std::memcpy(&a, p + j, sizeof(V));
    a = a * iv;
    std::memcpy(p + j, &a, sizeof(V));
#pragma GCC unroll 4
    for (int m = 0; m < M; ++m) {
      V b;
      std::memcpy(&b, y + m * ys + j, sizeof(V));
      acc[m] += a * b;
    }
  }
  for (int64_t t = j; t < n; ++t) p[t] *= inv;
  T total[M];
  lane_totals<T, M>(acc, total);
  for (int m = 0; m < M; ++m) {
    T sum = total[m];
    for (int64_t t = j; t < n; ++t) sum += p[t] * y[m * ys + t];
    out[m * os] = sum;
  }
}

// Row p (n entries) scaled by inv in place, and o[c] = <p, dt_c> for c < dv (dt_c = dt + c·n):
// the first four dots in the scaling pass, any others after it.
template <class T>
ATTN_COPY_BODY void scale_row_and_output(T* o, T* p, T inv, const T* dt, int64_t n, int64_t dv) {
  switch (std::min<int64_t>(dv, 4)) {
    case 1: scale_and_dots<T, 1>(o, 1, p, inv, dt, n, n); break;
    case 2: scale_and_dots<T, 2>(o, 1, p, inv, dt, n, n); break;
    case 3: scale_and_dots<T, 3>(o, 1, p, inv, dt, n, n); break;
    default: scale_and_dots<T, 4>(o, 1, p, inv, dt, n, n); break;
  }
  if (dv > 4) lane_dot_run(o + 4, 1, false, p, 0, dt + 4 * n, n, n, dv - 4);
}

template <int VB, class T>
ATTN_COPY_BODY void forward_body(T* o, T* p, const T* q, const T* k1, const T* k2, const T* v1,
                                 const T* v2, T scale, const ThirdOrderBlock& a, T* scratch) {
  const int64_t N = a.N, dk = a.dk, dv = a.dv, n2 = N * N;
  const auto x = Scratch{N, dk, dv}.parts(scratch);
  transpose_rows(x.k2t, k2, N, dk, a.ldk);
  pair_products_t<VB>(x.c, k1, x.k2t, N, dk, a.ldk);  // Cᵀ
  product<T, VB>(p, n2, q, a.ldk, 1, x.c, n2, N, n2, dk, scale, false, Span::all);
  if (a.score_bits > 0) {
    for (int64_t i = 0; i < N; ++i) mask_row(p + i * n2, i, a, T(0));
    quantize_fixed_point(p, N * n2, a.score_bits);
  }
  transpose_rows(x.v2t, v2, N, dv, a.ldv);
  pair_products_t<VB>(x.dt, v1, x.v2t, N, dv, a.ldv);  // Dᵀ
  pair_exps(p, x.acc, a);
  for (int64_t i = 0; i < N; ++i)  // row i's softmax, then o[i][c] = <p_i, Dᵀ_c>
    scale_row_and_output(o + i * a.ldv, p + i * n2, x.acc[i], x.dt, n2, dv);
}

// acc[0 … N) = Σ_j v_j · g[j·N …] (v_j = v[j·vs]), each entry one sum from 0 over j in order,
// a vector of entries at a time in registers.
struct WeightedRowSum {
  template <int Bytes, bool Whole, class T>
  ATTN_COPY_BODY static void run(T* acc, const T* g, const T* v, int64_t vs, int64_t N) {
    using V = typename VecOf<T, Bytes>::type;
    constexpr int64_t L = Bytes / sizeof(T);
    int64_t k = 0;
    for (; Whole ? k < N : k + L <= N; k += L) {
      V a = V{};
      for (int64_t j = 0; j < N; ++j) {
        V b;
        std::memcpy(&b, g + j * N + k, sizeof(V));
        a += b * (v[j * vs] - V{});
      }
      std::memcpy(acc + k, &a, sizeof(V));
    }
    if constexpr (!Whole)
      for (; k < N; ++k) {
        T a = 0;
        for (int64_t j = 0; j < N; ++j) a += g[j * N + k] * v[j * vs];
        acc[k] = a;
      }
  }
};

// dv1_j += Σ_k dD_jk ∘ v2_k and dv2_k += Σ_j dD_jk ∘ v1_j (each sum in order), from dDᵀ.
template <int VB, class T>
ATTN_COPY_BODY void value_grads(T* dv1, T* dv2, const T* ddt, const T* v1, const T* v2t, T* acc,
                                int64_t N, int64_t dv, int64_t ldv) {
  const int64_t n2 = N * N;
  for (int64_t c = 0; c < dv; ++c) {
    const T* g = ddt + c * n2;
    if (dv1)
      lane_dot_run(dv1 + c, ldv, true, g, N, v2t + c * N, 0, N, N);  // over j
    if (!dv2) continue;
    run_in_vectors<WeightedRowSum, VB, T>(N, acc, g, v1 + c, ldv, N);
    for (int64_t k = 0; k < N; ++k) dv2[k * ldv + c] += acc[k];
  }
}

// out_r[0 … d) += Σ_{t < n} x_r,t ∘ y_t for r < R, with x_r,t = x + r·xr + t·xs, y_t = y + t·ys
// and out_r = out + r·os: each entry one accumulator from 0 summed over t in order, then added to
// out_r, so neither R nor the vector width changes a bit. The R rows' chains interleave (one row
// alone waits on each add). add_sums_chunk: the Bytes-wide column chunk at the pointers given.
template <class T, int R, int Bytes>
ATTN_COPY_BODY void add_sums_chunk(T* out, int64_t os, const T* x, int64_t xr, int64_t xs,
                                   const T* y, int64_t ys, int64_t n) {
  using V = typename VecOf<T, Bytes>::type;
  V acc[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) acc[r] = V{};
  for (int64_t t = 0; t < n; ++t) {
    V b;
    std::memcpy(&b, y + t * ys, sizeof(V));
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      V a;
      std::memcpy(&a, x + r * xr + t * xs, sizeof(V));
      acc[r] += a * b;
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    V o;
    std::memcpy(&o, out + r * os, sizeof(V));
    o += acc[r];
    std::memcpy(out + r * os, &o, sizeof(V));
  }
}

template <int VB, int R, class T>
ATTN_COPY_BODY void add_sums_of_products(T* out, int64_t os, const T* x, int64_t xr, int64_t xs,
                                         const T* y, int64_t ys, int64_t n, int64_t d) {
  int64_t l = 0;
  if constexpr (VB == 64)
    for (; l + int64_t(64 / sizeof(T)) <= d; l += 64 / sizeof(T))
      add_sums_chunk<T, R, 64>(out + l, os, x + l, xr, xs, y + l, ys, n);
  for (; l + int64_t(32 / sizeof(T)) <= d; l += 32 / sizeof(T))
    add_sums_chunk<T, R, 32>(out + l, os, x + l, xr, xs, y + l, ys, n);
  for (; l < d; ++l)
    for (int r = 0; r < R; ++r) {
      T acc = 0;
      for (int64_t t = 0; t < n; ++t) acc += x[r * xr + t * xs + l] * y[t * ys + l];
      out[r * os + l] += acc;
    }
}

// out_r += Σ_t x_r,t ∘ y_t (as add_sums_of_products) for r < count, four rows at a time.
template <int VB, class T>
ATTN_COPY_BODY void add_sums_rows(T* out, int64_t os, const T* x, int64_t xr, int64_t xs,
                                  const T* y, int64_t ys, int64_t n, int64_t d, int64_t count) {
  int64_t r = 0;
  for (; r + 4 <= count; r += 4)
    add_sums_of_products<VB, 4>(out + r * os, os, x + r * xr, xr, xs, y, ys, n, d);
  for (; r < count; ++r)
    add_sums_of_products<VB, 1>(out + r * os, os, x + r * xr, xr, xs, y, ys, n, d);
}

// dk1_j += Σ_k dC_jk ∘ k2_k and dk2_k += Σ_j dC_jk ∘ k1_j (each sum in order).
template <int VB, class T>
ATTN_COPY_BODY void key_grads(T* dk1, T* dk2, const T* dc, const T* k1, const T* k2, int64_t N,
                              int64_t dk, int64_t ldk) {
  if (dk1) add_sums_rows<VB>(dk1, ldk, dc, N * dk, dk, k2, ldk, N, dk, N);
  if (dk2) add_sums_rows<VB>(dk2, ldk, dc, dk, N * dk, k1, ldk, N, dk, N);
}

// *total += Σ_l u_il · q_il for i = 0 … N − 1 in turn, each row's dot one float sum over l in
// order; four rows' chains side by side (one alone waits on each add).
template <class T>
ATTN_COPY_BODY void add_row_dots(double* total, const T* u, int64_t ldu, const T* q, int64_t ldq,
                                 int64_t N, int64_t d) {
  int64_t i = 0;
  for (; i + 4 <= N; i += 4) {
    T acc[4] = {};
    for (int64_t l = 0; l < d; ++l)
      for (int r = 0; r < 4; ++r) acc[r] += u[(i + r) * ldu + l] * q[(i + r) * ldq + l];
    for (int r = 0; r < 4; ++r) *total += acc[r];
  }
  for (; i < N; ++i) {
    T acc = 0;
    for (int64_t l = 0; l < d; ++l) acc += u[i * ldu + l] * q[i * ldq + l];
    *total += acc;
  }
}

template <int VB, class T>
ATTN_COPY_BODY void backward_body(T* dq, T* dk1, T* dk2, T* dv1, T* dv2, double* dscale_acc,
                                  const T* do_, const T* q, const T* k1, const T* k2, const T* v1,
                                  const T* v2, const T* p, T scale, const ThirdOrderBlock& a,
                                  T* scratch) {
  const int64_t N = a.N, dk = a.dk, dv = a.dv, n2 = N * N;
  const auto x = Scratch{N, dk, dv}.parts(scratch);
  transpose_rows(x.v2t, v2, N, dv, a.ldv);
  const bool need_scores = dq || dk1 || dk2 || dscale_acc;
  if (need_scores) {  // first, as it reads p in order (from the probs cache, out of L1)
    pair_products_t<VB>(x.dt, v1, x.v2t, N, dv, a.ldv);  // Dᵀ, then dP = dO Dᵀ into ds
    product<T, VB>(x.ds, n2, do_, a.ldv, 1, x.dt, n2, N, n2, dv, T(1), false, Span::all);
    // dS = P ∘ (dP − Σ dP ∘ P) row by row; masked pairs: P = 0.
    lane_dot_run(x.acc, 1, false, x.ds, n2, p, n2, n2, N);  // the rows' Σ dP ∘ P
    for (int64_t i = 0; i < N; ++i) {
      T* ds = x.ds + i * n2;
      const T* pr = p + i * n2;
      const T dot = x.acc[i];
      for (int64_t e = 0; e < n2; ++e) ds[e] = pr[e] * (ds[e] - dot);
    }
  }
  if (dv1 || dv2) {  // dDᵀ (dv × n2) = dOᵀ P
    product<T, VB>(x.ddt, n2, do_, 1, a.ldv, p, n2, dv, n2, N, T(1), false, Span::all);
    value_grads<VB>(dv1, dv2, x.ddt, v1, x.v2t, x.acc, N, dv, a.ldv);
  }
  if (!need_scores) return;
  if (dq || dscale_acc) {  // U (N × dk) = dS C, C (n2 × dk) the pair keys
    pair_products<VB>(x.c, k1, k2, N, dk, a.ldk);
    product<T, VB>(x.u, dk, x.ds, n2, 1, x.c, dk, N, dk, n2, T(1), false, Span::all);
    if (dq)
      for (int64_t i = 0; i < N; ++i)
        for (int64_t l = 0; l < dk; ++l) dq[i * a.ldk + l] += scale * x.u[i * dk + l];
    if (dscale_acc) add_row_dots(dscale_acc, x.u, dk, q, a.ldk, N, dk);
  }
  if (dk1 || dk2) {  // dC (n2 × dk) = scale · dSᵀ Q
    product<T, VB>(x.dc, dk, x.ds, 1, n2, q, a.ldk, n2, dk, N, scale, false, Span::all);
    key_grads<VB>(dk1, dk2, x.dc, k1, k2, N, dk, a.ldk);
  }
}

ATTN_TILES_KERNEL(ForwardKernel, forward_body)
ATTN_TILES_KERNEL(BackwardKernel, backward_body)

}  // namespace

int64_t third_order_fused_scratch(int64_t N, int64_t dk, int64_t dv) {
  return Scratch{N, dk, dv}.size();
}

template <class T>
void third_order_fused_forward(T* o, T* p, const T* q, const T* k1, const T* k2, const T* v1,
                               const T* v2, T scale, const ThirdOrderBlock& a, T* scratch) {
  isa_run<ForwardKernel>(o, p, q, k1, k2, v1, v2, scale, a, scratch);
}

template <class T>
void third_order_fused_backward(T* dq, T* dk1, T* dk2, T* dv1, T* dv2, double* dscale_acc,
                                const T* do_, const T* q, const T* k1, const T* k2, const T* v1,
                                const T* v2, const T* p, T scale, const ThirdOrderBlock& a,
                                T* scratch) {
  isa_run<BackwardKernel>(dq, dk1, dk2, dv1, dv2, dscale_acc, do_, q, k1, k2, v1, v2, p, scale, a,
                          scratch);
}

#define ATTN_INSTANTIATE(T)                                                                        \
  template void third_order_fused_forward<T>(T*, T*, const T*, const T*, const T*, const T*,       \
                                             const T*, T, const ThirdOrderBlock&, T*);             \
  template void third_order_fused_backward<T>(T*, T*, T*, T*, T*, double*, const T*, const T*,     \
                                              const T*, const T*, const T*, const T*, const T*, T, \
                                              const ThirdOrderBlock&, T*);
ATTN_INSTANTIATE(float)
ATTN_INSTANTIATE(double)
#undef ATTN_INSTANTIATE

}  // namespace attn
