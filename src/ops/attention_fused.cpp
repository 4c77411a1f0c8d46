// The fused per-(sequence, head) softmax attention kernel (see attention_fused.h).
//
// The products are register-tiled loops (`product`: 8, 4 or 1 rows × 32/16/8/4/1 columns of
// accumulators, B read along its rows), the same products as the GEMM path of
// ops/attention.cpp:
//   forward   S = scale · Q Kᵀ (Kᵀ copied once, dk × N) into p, [score rounding], row
//             softmax in place, O = P V;
//   backward  dV += Pᵀ dO,  dP = dO Vᵀ (Vᵀ copied once),  dS = P ∘ (dP − rowsum(dP ∘ P)),
//             dK += scale · dSᵀ Q,  G = dS K,  dQ += scale · G,  dscale += Σ G ∘ Q.
// causal: each product skips the tiles the mask zeroes (Span). Every output entry is one
// accumulator summed over its terms in order (no reassociation: -ffp-contract=off, no
// fast-math), so neither the tiling nor the ISA copy changes a bit.
#include "ops/attention_fused.h"

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

// In place: each of the n rows of p (row stride n) becomes its softmax; exclude_self masks
// entry (i, i), causal row i keeps its entries 0 … i; masked entries end exactly 0 (set to −∞
// before one exp over the whole block). The maxima are exact in any order.
template <class T>
ATTN_COPY_BODY void softmax_body(T* p, int64_t n, bool exclude_self, bool causal) {
  const T neg_inf = -std::numeric_limits<T>::infinity();
  if (exclude_self)
    for (int64_t i = 0; i < n; ++i) p[i * n + i] = neg_inf;
  for (T *row = p, *end = p + n * n; row != end; row += n) {
    const int64_t len = causal ? (row - p) / n + 1 : n;
    const T mx = lane_max(row, len, neg_inf);
    for (int64_t j = 0; j < len; ++j) row[j] -= mx;
    std::fill(row + len, row + n, neg_inf);
  }
  vmath_exp_nonpositive(p, p, n * n);
  for (int64_t i = 0; i < n; ++i) {
    T* row = p + i * n;
    const int64_t len = causal ? i + 1 : n;
    const T inv = T(1) / lane_sum(row, len);
    for (int64_t j = 0; j < len; ++j) row[j] *= inv;
  }
}

template <int VB, class T>
ATTN_COPY_BODY void forward_body(T* o, T* p, const T* q, const T* k, const T* v, T scale,
                                 const AttentionBlock& a, T* scratch) {
  const int64_t N = a.N, dk = a.dk, dv = a.dv;
  const Span rows_span = a.causal ? Span::cols_below : Span::all;
  T* kt = scratch;  // Kᵀ, dk × N
  transpose_rows(kt, k, N, dk, a.ldk);
  // S = scale · Q Kᵀ (causal: the tiles right of the diagonal are skipped).
  product<T, VB>(p, N, q, a.ldq, 1, kt, N, N, N, dk, scale, false, rows_span);
  if (a.score_bits > 0) {
    // Masked entries must not set the scale: zero them first.
    for (int64_t i = 0; i < N; ++i) {
      if (a.exclude_self) p[i * N + i] = T(0);
      if (a.causal) std::fill(p + i * N + i + 1, p + (i + 1) * N, T(0));
    }
    quantize_fixed_point(p, N * N, a.score_bits);
  }
  softmax_body(p, N, a.exclude_self, a.causal);
  // O = P V (causal: row i's terms j ≤ i).
  product<T, VB>(o, a.ldv, p, N, 1, v, a.ldv, N, dv, N, T(1), false,
                 a.causal ? Span::k_below : Span::all);
}

template <int VB, class T>
ATTN_COPY_BODY void backward_body(T* dq, T* dk, T* dv, double* dscale_acc, const T* do_, const T* q,
                                  const T* k, const T* v, const T* p, T scale,
                                  const AttentionBlock& a, T* scratch) {
  const int64_t N = a.N, dkk = a.dk, dvv = a.dv;
  // dV += Pᵀ dO (causal: row j's terms i ≥ j).
  if (dv)
    product<T, VB>(dv, a.ldv, p, 1, N, do_, a.ldv, N, dvv, N, T(1), true,
                   a.causal ? Span::k_from : Span::all);
  if (!dq && !dk && !dscale_acc) return;
  T* vt = scratch;       // Vᵀ, dv × N
  T* ds = vt + dvv * N;  // N × N
  T* g = ds + N * N;     // N × dk
  transpose_rows(vt, v, N, dvv, a.ldv);
  // dP = dO Vᵀ, then dS = P ∘ (dP − rowsum(dP ∘ P)) row by row (causal: j ≤ i, the rest 0).
  product<T, VB>(ds, N, do_, a.ldv, 1, vt, N, N, N, dvv, T(1), false,
                 a.causal ? Span::cols_below : Span::all);
  // The rows' Σ dP ∘ P into g's first column (g is written only below), four rows at a time
  // where they all have N terms.
  if (!a.causal) lane_dot_run(g, dkk, false, ds, N, p, N, N, N);
  for (int64_t i = 0; i < N; ++i) {
    const int64_t len = a.causal ? i + 1 : N;
    T* dsi = ds + i * N;
    const T* pi = p + i * N;
    const T dot = a.causal ? lane_dot(dsi, pi, len) : g[i * dkk];
    for (int64_t j = 0; j < len; ++j) dsi[j] = pi[j] * (dsi[j] - dot);
    std::fill(dsi + len, dsi + N, T(0));
  }
  // dK += scale · dSᵀ Q (causal: row j's terms i ≥ j).
  if (dk)
    product<T, VB>(dk, a.ldk, ds, 1, N, q, a.ldq, N, dkk, N, scale, true,
                   a.causal ? Span::k_from : Span::all);
  if (!dq && !dscale_acc) return;
  // G = dS K (causal: row i's terms j ≤ i); dQ += scale · G; dscale += Σ G ∘ Q.
  product<T, VB>(g, dkk, ds, N, 1, k, a.ldk, N, dkk, N, T(1), false,
                 a.causal ? Span::k_below : Span::all);
  for (int64_t i = 0; i < N; ++i) {
    const T* gi = g + i * dkk;
    if (dq) {
      T* dqi = dq + i * a.ldq;
      for (int64_t l = 0; l < dkk; ++l) dqi[l] += scale * gi[l];
    }
    if (dscale_acc) {
      const T* qi = q + i * a.ldq;
      T acc = 0;
      for (int64_t l = 0; l < dkk; ++l) acc += gi[l] * qi[l];
      *dscale_acc += acc;
    }
  }
}

ATTN_TILES_KERNEL(ForwardKernel, forward_body)
ATTN_TILES_KERNEL(BackwardKernel, backward_body)

}  // namespace

bool attention_fused_applies(int64_t dk, int64_t dv) {
  return dk <= kAttentionFusedMaxDim && dv <= kAttentionFusedMaxDim;
}

bool attention_path_fused(AttentionPath path, bool applies) {
  switch (path) {
    case AttentionPath::automatic: return applies;
    case AttentionPath::fused: return true;
    case AttentionPath::blas: return false;
  }
  return applies;
}

int64_t attention_fused_scratch(int64_t N, int64_t dk, int64_t dv) {
  return std::max(dk * N, dv * N + N * N + N * dk);
}

template <class T>
void attention_fused_forward(T* o, T* p, const T* q, const T* k, const T* v, T scale,
                             const AttentionBlock& a, T* scratch) {
  isa_run<ForwardKernel>(o, p, q, k, v, scale, a, scratch);
}

template <class T>
void attention_fused_backward(T* dq, T* dk, T* dv, double* dscale_acc, const T* do_, const T* q,
                              const T* k, const T* v, const T* p, T scale, const AttentionBlock& a,
                              T* scratch) {
  isa_run<BackwardKernel>(dq, dk, dv, dscale_acc, do_, q, k, v, p, scale, a, scratch);
}

#define ATTN_INSTANTIATE(T)                                                                    \
  template void attention_fused_forward<T>(T*, T*, const T*, const T*, const T*, T,            \
                                           const AttentionBlock&, T*);                         \
  template void attention_fused_backward<T>(T*, T*, T*, double*, const T*, const T*, const T*, \
                                            const T*, const T*, T, const AttentionBlock&, T*);
ATTN_INSTANTIATE(float)
ATTN_INSTANTIATE(double)
#undef ATTN_INSTANTIATE

}  // namespace attn
