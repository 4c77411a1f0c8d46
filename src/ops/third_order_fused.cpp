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

// o[0 … n) = s · y and o[0 … n) = x ∘ y, 32 bytes at a time (the rows are short: a loop of
// unknown length would check for overlap and peel at every call).
template <class T>
ATTN_COPY_BODY void scaled_row(T* o, T s, const T* y, int64_t n) {
  using V = typename Vec32<T>::type;
  constexpr int64_t L = 32 / sizeof(T);
  const V sv = s - V{};  // a plain broadcast (x − 0 is x, −0 included)
  int64_t k = 0;
  for (; k + L <= n; k += L) {
    V v;
    std::memcpy(&v, y + k, sizeof(V));
    v = sv * v;
    std::memcpy(o + k, &v, sizeof(V));
  }
  for (; k < n; ++k) o[k] = s * y[k];
}
template <class T>
ATTN_COPY_BODY void product_row(T* o, const T* x, const T* y, int64_t n) {
  using V = typename Vec32<T>::type;
  constexpr int64_t L = 32 / sizeof(T);
  int64_t l = 0;
  for (; l + L <= n; l += L) {
    V a, b;
    std::memcpy(&a, x + l, sizeof(V));
    std::memcpy(&b, y + l, sizeof(V));
    a = a * b;
    std::memcpy(o + l, &a, sizeof(V));
  }
  for (; l < n; ++l) o[l] = x[l] * y[l];
}

// Pair products transposed: out (d × n2), out[l][j·N + k] = x_jl · yᵀ[l][k]; x (N × d, row
// stride ld), yt (d × N).
template <class T>
ATTN_COPY_BODY void pair_products_t(T* out, const T* x, const T* yt, int64_t N, int64_t d,
                                    int64_t ld) {
  for (int64_t l = 0; l < d; ++l)
    for (int64_t j = 0; j < N; ++j)
      scaled_row(out + l * N * N + j * N, x[j * ld + l], yt + l * N, N);
}

// Pair products: out (n2 × d), row j·N + k = x_j ∘ y_k; x, y (N × d, row stride ld).
template <class T>
ATTN_COPY_BODY void pair_products(T* out, const T* x, const T* y, int64_t N, int64_t d,
                                  int64_t ld) {
  for (int64_t j = 0; j < N; ++j)
    for (int64_t k = 0; k < N; ++k) product_row(out + (j * N + k) * d, x + j * ld, y + k * ld, d);
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

// In place: row s (n2 scores of query i) becomes the softmax over its unmasked pairs, every
// masked entry exactly 0 (exp(−∞)).
template <class T>
ATTN_COPY_BODY void pair_softmax(T* s, int64_t i, const ThirdOrderBlock& a) {
  const int64_t n2 = a.N * a.N;
  const T neg_inf = -std::numeric_limits<T>::infinity();
  mask_row(s, i, a, neg_inf);
  const T mx = lane_max(s, n2, neg_inf);
  for (int64_t e = 0; e < n2; ++e) s[e] -= mx;
  vmath_exp_nonpositive(s, s, n2);
  const T inv = T(1) / lane_sum(s, n2);
  for (int64_t e = 0; e < n2; ++e) s[e] *= inv;
}

template <int VB, class T>
ATTN_COPY_BODY void forward_body(T* o, T* p, const T* q, const T* k1, const T* k2, const T* v1,
                                 const T* v2, T scale, const ThirdOrderBlock& a, T* scratch) {
  const int64_t N = a.N, dk = a.dk, dv = a.dv, n2 = N * N;
  const auto x = Scratch{N, dk, dv}.parts(scratch);
  transpose_rows(x.k2t, k2, N, dk, a.ldk);
  pair_products_t(x.c, k1, x.k2t, N, dk, a.ldk);  // Cᵀ
  product<T, VB>(p, n2, q, a.ldk, 1, x.c, n2, N, n2, dk, scale, false, Span::all);
  if (a.score_bits > 0) {
    for (int64_t i = 0; i < N; ++i) mask_row(p + i * n2, i, a, T(0));
    quantize_fixed_point(p, N * n2, a.score_bits);
  }
  for (int64_t i = 0; i < N; ++i) pair_softmax(p + i * n2, i, a);
  transpose_rows(x.v2t, v2, N, dv, a.ldv);
  pair_products_t(x.dt, v1, x.v2t, N, dv, a.ldv);  // Dᵀ
  for (int64_t i = 0; i < N; ++i)  // o[i][c] = <p_i, Dᵀ_c>
    lane_dot_run(o + i * a.ldv, 1, false, p + i * n2, 0, x.dt, n2, n2, dv);
}

// dv1_j += Σ_k dD_jk ∘ v2_k and dv2_k += Σ_j dD_jk ∘ v1_j (each sum in order), from dDᵀ.
template <class T>
ATTN_COPY_BODY void value_grads(T* dv1, T* dv2, const T* ddt, const T* v1, const T* v2t, T* acc,
                                int64_t N, int64_t dv, int64_t ldv) {
  const int64_t n2 = N * N;
  for (int64_t c = 0; c < dv; ++c) {
    const T* g = ddt + c * n2;
    if (dv1)
      lane_dot_run(dv1 + c, ldv, true, g, N, v2t + c * N, 0, N, N);  // over j
    if (!dv2) continue;
    std::fill(acc, acc + N, T(0));
    for (int64_t j = 0; j < N; ++j) {
      const T v = v1[j * ldv + c];
      for (int64_t k = 0; k < N; ++k) acc[k] += g[j * N + k] * v;
    }
    for (int64_t k = 0; k < N; ++k) dv2[k * ldv + c] += acc[k];
  }
}

// out[0 … d) += Σ_{t < n} x_t ∘ y_t with x_t = x + t·xs, y_t = y + t·ys: each entry one
// accumulator from 0 summed over t in order, held in registers 32 bytes at a time, up to four
// such accumulators at once (their chains interleaved; U of them in one call).
template <class T, int U>
ATTN_COPY_BODY void add_sum_of_products_chunks(T* out, const T* x, int64_t xs, const T* y,
                                               int64_t ys, int64_t n) {
  using V = typename Vec32<T>::type;
  constexpr int64_t L = 32 / sizeof(T);
  V acc[U];
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) acc[u] = V{};
  for (int64_t t = 0; t < n; ++t)
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u) {
      V a, b;
      std::memcpy(&a, x + t * xs + u * L, sizeof(V));
      std::memcpy(&b, y + t * ys + u * L, sizeof(V));
      acc[u] += a * b;
    }
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) {
    V o;
    std::memcpy(&o, out + u * L, sizeof(V));
    o += acc[u];
    std::memcpy(out + u * L, &o, sizeof(V));
  }
}

template <class T>
ATTN_COPY_BODY void add_sum_of_products(T* out, const T* x, int64_t xs, const T* y, int64_t ys,
                                        int64_t n, int64_t d) {
  constexpr int64_t L = 32 / sizeof(T);
  int64_t l = 0;
  for (; l + 4 * L <= d; l += 4 * L)
    add_sum_of_products_chunks<T, 4>(out + l, x + l, xs, y + l, ys, n);
  for (; l + 2 * L <= d; l += 2 * L)
    add_sum_of_products_chunks<T, 2>(out + l, x + l, xs, y + l, ys, n);
  for (; l + L <= d; l += L) add_sum_of_products_chunks<T, 1>(out + l, x + l, xs, y + l, ys, n);
  for (; l < d; ++l) {
    T acc = 0;
    for (int64_t t = 0; t < n; ++t) acc += x[t * xs + l] * y[t * ys + l];
    out[l] += acc;
  }
}

// dk1_j += Σ_k dC_jk ∘ k2_k and dk2_k += Σ_j dC_jk ∘ k1_j (each sum in order).
template <class T>
ATTN_COPY_BODY void key_grads(T* dk1, T* dk2, const T* dc, const T* k1, const T* k2, int64_t N,
                              int64_t dk, int64_t ldk) {
  if (dk1)
    for (int64_t j = 0; j < N; ++j)
      add_sum_of_products(dk1 + j * ldk, dc + j * N * dk, dk, k2, ldk, N, dk);
  if (dk2)
    for (int64_t k = 0; k < N; ++k)
      add_sum_of_products(dk2 + k * ldk, dc + k * dk, N * dk, k1, ldk, N, dk);
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
    pair_products_t(x.dt, v1, x.v2t, N, dv, a.ldv);  // Dᵀ, then dP = dO Dᵀ into ds
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
    value_grads(dv1, dv2, x.ddt, v1, x.v2t, x.acc, N, dv, a.ldv);
  }
  if (!need_scores) return;
  if (dq || dscale_acc) {  // U (N × dk) = dS C, C (n2 × dk) the pair keys
    pair_products(x.c, k1, k2, N, dk, a.ldk);
    product<T, VB>(x.u, dk, x.ds, n2, 1, x.c, dk, N, dk, n2, T(1), false, Span::all);
    for (int64_t i = 0; i < N; ++i) {
      const T* u = x.u + i * dk;
      const T* qi = q + i * a.ldk;
      if (dq)
        for (int64_t l = 0; l < dk; ++l) dq[i * a.ldk + l] += scale * u[l];
      if (dscale_acc) {
        T acc = 0;
        for (int64_t l = 0; l < dk; ++l) acc += u[l] * qi[l];
        *dscale_acc += acc;
      }
    }
  }
  if (dk1 || dk2) {  // dC (n2 × dk) = scale · dSᵀ Q
    product<T, VB>(x.dc, dk, x.ds, 1, n2, q, a.ldk, n2, dk, N, scale, false, Span::all);
    key_grads(dk1, dk2, x.dc, k1, k2, N, dk, a.ldk);
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
