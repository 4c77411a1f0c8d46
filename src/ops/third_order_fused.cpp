// The fused per-(sequence, head) third-order attention kernel (see third_order_fused.h).
//
// Per query i (n = i + 1 under causal, else N; A_i (n × dk) row j = k1_j ∘ q_i; K2ᵀ and V2ᵀ
// copied once per block):
//   forward   S_i = scale · A_i K2ᵀ (n × n) into query i's pair block of p, softmax over its
//             entries (masked pairs exactly 0), W = P_i V2 (n × dv), o_i = Σ_j v1_j ∘ W_j;
//   backward  W = P_i V2, dv1_j += W_j ∘ do_i;  dW_j = v1_j ∘ do_i;  dv2 += P_iᵀ dW;
//             dP = dW V2ᵀ;  dS = P ∘ (dP − Σ dP ∘ P);  dk2 += scale · dSᵀ A_i;  E = dS K2;
//             dk1_j += scale · E_j ∘ q_i;  u = Σ_j E_j ∘ k1_j;  dq_i += scale · u;
//             dscale += <q_i, u>.
// score_bits rounds all N³ scores of the block with one scale, so the scores of every query
// are computed first. The products are ops/attention_tiles.h's: each output entry one
// accumulator summed in order, the same bits in every ISA copy.
#include "ops/third_order_fused.h"

#include <algorithm>
#include <limits>

#include "ops/attention_tiles.h"
#include "ops/isa.h"
#include "ops/quantize.h"
#include "ops/vmath.h"

namespace attn {
namespace {

using namespace attention_tiles;

// Scratch layout of one block.
struct Scratch {
  int64_t N, dk, dv;
  template <class T>
  struct Parts {
    T *k2t, *v2t, *A, *W, *dW, *dS, *E, *u;
  };
  template <class T>
  Parts<T> parts(T* s) const {
    Parts<T> x;
    x.k2t = s;               // dk × N
    x.v2t = x.k2t + dk * N;  // dv × N
    x.A = x.v2t + dv * N;    // N × dk
    x.W = x.A + N * dk;      // N × dv
    x.dW = x.W + N * dv;     // N × dv
    x.dS = x.dW + N * dv;    // N × N
    x.E = x.dS + N * N;      // N × dk
    x.u = x.E + N * dk;      // dk
    return x;
  }
  int64_t size() const { return 3 * dk * N + 3 * dv * N + N * N + dk; }
};

// Whether pair (j, k) of query i is masked.
inline bool masked(const ThirdOrderBlock& a, int64_t i, int64_t j, int64_t k) {
  return (a.exclude_self && (j == i || k == i || j == k)) || (a.causal && (j > i || k > i));
}

// A (n × dk) row j = k1_j ∘ q_i.
template <class T>
ATTN_COPY_BODY void pair_keys(T* A, const T* qi, const T* k1, int64_t n, int64_t dk, int64_t ldk) {
  for (int64_t j = 0; j < n; ++j) {
    const T* k1j = k1 + j * ldk;
    T* r = A + j * dk;
    for (int64_t l = 0; l < dk; ++l) r[l] = k1j[l] * qi[l];
  }
}

// Query i's scores into its pair block pi (row stride N): the n × n leading pairs of
// scale · A_i K2ᵀ (A_i into A; n = i + 1 under causal, else N).
template <class T>
ATTN_COPY_BODY void query_scores(T* pi, T* A, const T* qi, const T* k1, const T* k2t, T scale,
                                 const ThirdOrderBlock& a, int64_t i) {
  const int64_t N = a.N, n = a.causal ? i + 1 : N;
  pair_keys(A, qi, k1, n, a.dk, a.ldk);
  product<T>(pi, N, A, a.dk, 1, k2t, N, n, n, a.dk, scale, false, Span::all);
}

// In place: query i's pair block pi (N × N; its n × n leading pairs hold the scores) becomes
// the softmax over its unmasked pairs; every other entry exactly 0.
template <class T>
ATTN_COPY_BODY void pair_softmax(T* pi, int64_t N, int64_t n, int64_t i, const ThirdOrderBlock& a) {
  const T neg_inf = -std::numeric_limits<T>::infinity();
  if (a.exclude_self)
    for (int64_t j = 0; j < N; ++j) pi[i * N + j] = pi[j * N + i] = pi[j * N + j] = neg_inf;
  T mx = neg_inf;
  for (int64_t j = 0; j < n; ++j) mx = lane_max(pi + j * N, n, mx);
  for (int64_t j = 0; j < N; ++j) {
    T* r = pi + j * N;
    if (j >= n) {
      std::fill(r, r + N, neg_inf);
      continue;
    }
    for (int64_t k = 0; k < n; ++k) r[k] -= mx;
    std::fill(r + n, r + N, neg_inf);
  }
  vmath_exp_nonpositive(pi, pi, N * N);  // masked: exp(−inf) = 0 exactly
  T sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += lane_sum(pi + j * N, n);
  const T inv = T(1) / sum;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t k = 0; k < n; ++k) pi[j * N + k] *= inv;
}

template <class T>
ATTN_COPY_BODY void forward_body(T* o, T* p, const T* q, const T* k1, const T* k2, const T* v1,
                                 const T* v2, T scale, const ThirdOrderBlock& a, T* scratch) {
  const int64_t N = a.N, dk = a.dk, dv = a.dv, nn = N * N;
  const auto x = Scratch{N, dk, dv}.parts(scratch);
  for (int64_t j = 0; j < N; ++j)
    for (int64_t l = 0; l < dk; ++l) x.k2t[l * N + j] = k2[j * a.ldk + l];
  if (a.score_bits > 0) {
    for (int64_t i = 0; i < N; ++i) {
      std::fill(p + i * nn, p + (i + 1) * nn, T(0));
      query_scores(p + i * nn, x.A, q + i * a.ldk, k1, x.k2t, scale, a, i);
      for (int64_t j = 0; j < N; ++j)
        for (int64_t k = 0; k < N; ++k)
          if (masked(a, i, j, k)) p[i * nn + j * N + k] = T(0);
    }
    quantize_fixed_point(p, N * nn, a.score_bits);
  }
  for (int64_t i = 0; i < N; ++i) {
    const int64_t n = a.causal ? i + 1 : N;
    T* pi = p + i * nn;
    if (a.score_bits == 0) query_scores(pi, x.A, q + i * a.ldk, k1, x.k2t, scale, a, i);
    pair_softmax(pi, N, n, i, a);
    product<T>(x.W, dv, pi, N, 1, v2, a.ldv, n, dv, n, T(1), false, Span::all);
    T* oi = o + i * a.ldv;
    std::fill(oi, oi + dv, T(0));
    for (int64_t j = 0; j < n; ++j) {
      const T* v1j = v1 + j * a.ldv;
      const T* w = x.W + j * dv;
      for (int64_t c = 0; c < dv; ++c) oi[c] += v1j[c] * w[c];
    }
  }
}

template <class T>
ATTN_COPY_BODY void backward_body(T* dq, T* dk1, T* dk2, T* dv1, T* dv2, double* dscale_acc,
                                  const T* do_, const T* q, const T* k1, const T* k2, const T* v1,
                                  const T* v2, const T* p, T scale, const ThirdOrderBlock& a,
                                  T* scratch) {
  const int64_t N = a.N, dk = a.dk, dv = a.dv, nn = N * N;
  const auto x = Scratch{N, dk, dv}.parts(scratch);
  const bool need_scores = dq || dk1 || dk2 || dscale_acc;
  const bool need_e = dq || dk1 || dscale_acc;
  for (int64_t j = 0; j < N; ++j)
    for (int64_t c = 0; c < dv; ++c) x.v2t[c * N + j] = v2[j * a.ldv + c];
  for (int64_t i = 0; i < N; ++i) {
    const int64_t n = a.causal ? i + 1 : N;
    const T* pi = p + i * nn;
    const T* doi = do_ + i * a.ldv;
    const T* qi = q + i * a.ldk;
    if (dv1) {  // dv1_j += (P_i V2)_j ∘ do_i
      product<T>(x.W, dv, pi, N, 1, v2, a.ldv, n, dv, n, T(1), false, Span::all);
      for (int64_t j = 0; j < n; ++j) {
        T* d = dv1 + j * a.ldv;
        const T* w = x.W + j * dv;
        for (int64_t c = 0; c < dv; ++c) d[c] += w[c] * doi[c];
      }
    }
    if (!dv2 && !need_scores) continue;
    for (int64_t j = 0; j < n; ++j) {  // dW_j = v1_j ∘ do_i
      const T* v1j = v1 + j * a.ldv;
      T* d = x.dW + j * dv;
      for (int64_t c = 0; c < dv; ++c) d[c] = v1j[c] * doi[c];
    }
    if (dv2) product<T>(dv2, a.ldv, pi, 1, N, x.dW, dv, n, dv, n, T(1), true, Span::all);
    if (!need_scores) continue;
    // dP = dW V2ᵀ, then dS = P ∘ (dP − Σ dP ∘ P) over the n × n pairs (row stride N).
    product<T>(x.dS, N, x.dW, dv, 1, x.v2t, N, n, n, dv, T(1), false, Span::all);
    T dot = 0;
    for (int64_t j = 0; j < n; ++j) dot += lane_dot(x.dS + j * N, pi + j * N, n);
    for (int64_t j = 0; j < n; ++j) {
      T* ds = x.dS + j * N;
      const T* pr = pi + j * N;
      for (int64_t k = 0; k < n; ++k) ds[k] = pr[k] * (ds[k] - dot);
    }
    if (dk2 || need_e) pair_keys(x.A, qi, k1, n, dk, a.ldk);
    if (dk2) product<T>(dk2, a.ldk, x.dS, 1, N, x.A, dk, n, dk, n, scale, true, Span::all);
    if (!need_e) continue;
    product<T>(x.E, dk, x.dS, N, 1, k2, a.ldk, n, dk, n, T(1), false, Span::all);
    std::fill(x.u, x.u + dk, T(0));
    for (int64_t j = 0; j < n; ++j) {
      const T* e = x.E + j * dk;
      const T* k1j = k1 + j * a.ldk;
      if (dk1) {
        T* d = dk1 + j * a.ldk;
        for (int64_t l = 0; l < dk; ++l) d[l] += scale * e[l] * qi[l];
      }
      for (int64_t l = 0; l < dk; ++l) x.u[l] += e[l] * k1j[l];
    }
    if (dq) {
      T* d = dq + i * a.ldk;
      for (int64_t l = 0; l < dk; ++l) d[l] += scale * x.u[l];
    }
    if (dscale_acc) {
      T acc = 0;
      for (int64_t l = 0; l < dk; ++l) acc += x.u[l] * qi[l];
      *dscale_acc += acc;
    }
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
