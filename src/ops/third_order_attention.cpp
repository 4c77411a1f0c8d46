// Third-order (tensor) attention (see third_order_attention.h), fast path and naive reference.
//
// Shapes: q, k1, k2 (B, N, H, dk); v1, v2, out, dout (B, N, H, dv); probs (B, H, N, N, N).
// Head h of sequence b is a strided matrix (row stride H·d) that cblas reads directly.
// Per (b, h, i), with A = K1 ∘ q_i (row j = k1_j ∘ q_i, N × dk), computed for a block of
// queries at once (their A stacked, so each product below is one GEMM per block):
//   S_i = scale · A K2ᵀ (N × N, entry (j, k)),  P_i = softmax over all N² entries
//   (exclude_self masks row i, column i and the diagonal j = k),
//   W = P_i V2 (N × dv),  out_i = Σ_j v1_j ∘ W_j.
// With score_bits, the N³ scores of a (b, h) are computed first and rounded with one scale
// (ops/quantize.h) before the softmaxes; backward is unchanged (straight-through).
// Backward per (b, h, i), with dW = V1 ∘ dout_i (each row times dout_i) and E = dS K2:
//   dV1 += W ∘ dout_i,  dV2 += P_iᵀ dW,  dP = dW V2ᵀ,  dS = P ∘ (dP − Σ dP ∘ P),
//   dK1 += scale · E ∘ q_i,  u = Σ_j E_j ∘ k1_j,  dq_i += scale · u,
//   dK2 += scale · dSᵀ A,  dscale += Σ dS ∘ (A K2ᵀ) = <q_i, u>.
// causal: a block of queries i0 … i1 − 1 sees the keys 0 … i1 − 1 only (kmax = i1), so the
// products over the keys k run over kmax columns; P_i and dS_i are exactly 0 outside
// j, k ≤ i. Without causal kmax = N (the same products as before causal existed).
#include "ops/third_order_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "ops/attention_fused.h"
#include "ops/blas.h"
#include "ops/quantize.h"
#include "ops/third_order_fused.h"
#include "ops/vmath.h"

namespace attn {
namespace {

void third_order_check(const ThirdOrderShape& s) {
  ATTN_CHECK(s.B >= 0 && s.N >= 1 && s.H >= 1 && s.dk >= 1 && s.dv >= 1,
             "third_order_attention: sizes must be positive (got B=" + std::to_string(s.B) +
                 ", N=" + std::to_string(s.N) + ", H=" + std::to_string(s.H) +
                 ", dk=" + std::to_string(s.dk) + ", dv=" + std::to_string(s.dv) + ")");
  ATTN_CHECK(!s.exclude_self || s.N >= 3,
             "third_order_attention: exclude_self needs at least 3 tokens (got N=" +
                 std::to_string(s.N) + "); use N >= 3 or turn exclude_self off");
  ATTN_CHECK(!(s.causal && s.exclude_self),
             "third_order_attention: causal and exclude_self together leave query 0 no pair; "
             "turn one off");
  quantize_check_bits(s.score_bits, "third_order_attention: score_bits");
}

// Sets the pairs of query i's N × N block p that causal masks (j > i or k > i).
template <class T>
void mask_causal(T* p, int64_t n, int64_t i, T value) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t k = (j > i ? 0 : i + 1); k < n; ++k) p[j * n + k] = value;
}

// In place, causal: the (i + 1) × (i + 1) leading block of the N × N block p becomes its
// softmax; every other entry (not read) becomes exactly 0.
template <class T>
void softmax_pairs_causal(T* p, int64_t n, int64_t i) {
  const int64_t len = i + 1;
  T mx = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < len; ++j)
    for (int64_t k = 0; k < len; ++k) mx = std::max(mx, p[j * n + k]);
  T sum = 0;
  for (int64_t j = 0; j < len; ++j) {
    T* row = p + j * n;
    for (int64_t k = 0; k < len; ++k) row[k] -= mx;
    vmath_exp_nonpositive(row, row, len);
    for (int64_t k = 0; k < len; ++k) sum += row[k];
  }
  const T inv = T(1) / sum;
  for (int64_t j = 0; j < len; ++j)
    for (int64_t k = 0; k < len; ++k) p[j * n + k] *= inv;
  mask_causal(p, n, i, T(0));
}

// Sets the pairs of query i's N × N block p that exclude_self masks (j = i, k = i, j = k).
template <class T>
void mask_pairs(T* p, int64_t n, int64_t i, T value) {
  for (int64_t j = 0; j < n; ++j) {
    p[i * n + j] = value;
    p[j * n + i] = value;
    p[j * n + j] = value;
  }
}

// In place: the N × N block p (entry (j, k)) becomes its softmax over all N² entries; with
// exclude_self the pairs with j = i, k = i or j = k are masked (exactly 0).
template <class T>
void softmax_pairs(T* p, int64_t n, int64_t i, bool exclude_self) {
  const T neg_inf = -std::numeric_limits<T>::infinity();
  if (exclude_self) mask_pairs(p, n, i, neg_inf);
  const int64_t nn = n * n;
  T mx = neg_inf;
  for (int64_t e = 0; e < nn; ++e) mx = std::max(mx, p[e]);
  for (int64_t e = 0; e < nn; ++e) p[e] -= mx;
  vmath_exp_nonpositive(p, p, nn);  // masked pairs: exp(−inf) = 0 exactly
  T sum = 0;
  for (int64_t e = 0; e < nn; ++e) sum += p[e];
  const T inv = T(1) / sum;
  for (int64_t e = 0; e < nn; ++e) p[e] *= inv;
}

// In place, causal: ds = p ∘ (ds − Σ ds ∘ p) over the pairs j, k ≤ i of query i's N × N
// block; every other entry (not read: p is 0 there) becomes exactly 0.
template <class T>
void pair_grad_causal(T* ds, const T* p, int64_t n, int64_t i) {
  const int64_t len = i + 1;
  T dot = 0;
  for (int64_t j = 0; j < len; ++j)
    for (int64_t k = 0; k < len; ++k) dot += ds[j * n + k] * p[j * n + k];
  for (int64_t j = 0; j < len; ++j)
    for (int64_t k = 0; k < len; ++k) ds[j * n + k] = p[j * n + k] * (ds[j * n + k] - dot);
  mask_causal(ds, n, i, T(0));
}

// Queries are processed in blocks of ib rows so that the products are a few large GEMMs per
// (b, h) rather than many N × N ones (small N is the common case): about kBlockEntries
// score entries per block, at least one query.
constexpr int64_t kBlockEntries = 16384;

// causal: at most ⌈N/4⌉ queries per block, so that the later blocks' key ranges shrink.
int64_t query_block(int64_t N, bool causal) {
  const int64_t ib = std::clamp<int64_t>(kBlockEntries / (N * N), 1, N);
  return causal ? std::min(ib, (N + 3) / 4) : ib;
}

// M (ni·N × dk): row (ii, j) = q_{i0+ii} ∘ k1_j, for the queries i0 .. i0+ni−1 of one head.
template <class T>
void pair_keys(T* M, const T* q, const T* k1, int64_t i0, int64_t ni, int64_t N, int64_t dk,
               int64_t ldk) {
  for (int64_t ii = 0; ii < ni; ++ii) {
    const T* qi = q + (i0 + ii) * ldk;
    for (int64_t j = 0; j < N; ++j) {
      const T* k1j = k1 + j * ldk;
      T* m = M + (ii * N + j) * dk;
      for (int64_t l = 0; l < dk; ++l) m[l] = k1j[l] * qi[l];
    }
  }
}

// The fused kernel's view of one (b, h) block of shape s (checked).
ThirdOrderBlock third_order_block_of(const ThirdOrderShape& s) {
  third_order_check(s);
  return {s.N, s.dk, s.dv, s.H * s.dk, s.H * s.dv, s.exclude_self, s.causal, s.score_bits};
}

}  // namespace

bool third_order_fused_applies(int64_t dk, int64_t dv) {
  return dk <= kThirdOrderFusedMaxDim && dv <= kThirdOrderFusedMaxDim;
}

namespace {

template <class T>
void third_order_forward_blas(T* out, T* probs, const T* q, const T* k1, const T* k2, const T* v1,
                              const T* v2, T scale, const ThirdOrderShape& s) {
  third_order_check(s);
  const int64_t N = s.N, H = s.H, dk = s.dk, dv = s.dv, nn = N * N;
  const int64_t ldk = H * dk, ldv = H * dv, ib = query_block(N, s.causal);
  // Score rounding needs all N³ scores of a (b, h) before any softmax: a first pass fills
  // the whole block (in probs, or an N³ scratch), the second pass only normalises.
  const bool whole = s.score_bits > 0;
  std::vector<T> M(static_cast<size_t>(ib * N * dk)), W(static_cast<size_t>(ib * N * dv));
  std::vector<T> scratch(probs ? 0 : static_cast<size_t>((whole ? N : ib) * nn));
  for (int64_t b = 0; b < s.B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      const int64_t ok = (b * N * H + h) * dk, ov = (b * N * H + h) * dv;
      T* block = probs ? probs + (b * H + h) * N * nn : scratch.data();
      // S (ni·N × N) = scale · M K2ᵀ: row (ii, j), column k, for queries i0 .. i0+ni−1.
      // causal: only the columns k < kmax (the keys the block sees) are computed.
      auto scores = [&](int64_t i0, int64_t ni, int64_t kmax, T* p) {
        pair_keys(M.data(), q + ok, k1 + ok, i0, ni, N, dk, ldk);
        gemm<T>(false, true, ni * N, kmax, dk, scale, M.data(), dk, k2 + ok, ldk, T(0), p, N);
      };
      if (whole) {
        for (int64_t i0 = 0; i0 < N; i0 += ib) scores(i0, std::min(ib, N - i0), N, block + i0 * nn);
        for (int64_t i = 0; i < N; ++i) {
          if (s.exclude_self) mask_pairs(block + i * nn, N, i, T(0));
          if (s.causal) mask_causal(block + i * nn, N, i, T(0));
        }
        quantize_fixed_point(block, N * nn, s.score_bits);
      }
      for (int64_t i0 = 0; i0 < N; i0 += ib) {
        const int64_t ni = std::min(ib, N - i0), kmax = s.causal ? i0 + ni : N;
        T* p = (probs || whole) ? block + i0 * nn : scratch.data();
        if (!whole) scores(i0, ni, kmax, p);
        for (int64_t ii = 0; ii < ni; ++ii) {
          if (s.causal) {
            softmax_pairs_causal(p + ii * nn, N, i0 + ii);
          } else {
            softmax_pairs(p + ii * nn, N, i0 + ii, s.exclude_self);
          }
        }
        // W (ni·N × dv) = P V2, out_i = Σ_j v1_j ∘ W_(i,j) (causal: j ≤ i).
        gemm<T>(false, false, ni * N, dv, kmax, T(1), p, N, v2 + ov, ldv, T(0), W.data(), dv);
        for (int64_t ii = 0; ii < ni; ++ii) {
          T* oi = out + ov + (i0 + ii) * ldv;
          std::fill(oi, oi + dv, T(0));
          const int64_t jmax = s.causal ? i0 + ii + 1 : N;
          for (int64_t j = 0; j < jmax; ++j) {
            const T* v1j = v1 + ov + j * ldv;
            const T* w = W.data() + (ii * N + j) * dv;
            for (int64_t c = 0; c < dv; ++c) oi[c] += v1j[c] * w[c];
          }
        }
      }
    }
  }
}

template <class T>
void third_order_backward_blas(T* dq, T* dk1, T* dk2, T* dv1, T* dv2, T* dscale, const T* dout,
                               const T* q, const T* k1, const T* k2, const T* v1, const T* v2,
                               const T* probs, T scale, const ThirdOrderShape& s) {
  third_order_check(s);
  ATTN_ASSERT(probs != nullptr, "third_order_backward needs the forward's probs");
  const int64_t N = s.N, H = s.H, dk = s.dk, dv = s.dv, nn = N * N;
  const int64_t ldk = H * dk, ldv = H * dv, ib = query_block(N, s.causal);
  const bool need_scores = dq || dk1 || dk2 || dscale;
  const bool need_e = dq || dk1 || dscale;
  std::vector<T> dW(static_cast<size_t>(ib * N * dv));
  std::vector<T> W(dv1 ? static_cast<size_t>(ib * N * dv) : 0);
  std::vector<T> dS(need_scores ? static_cast<size_t>(ib * nn) : 0);
  std::vector<T> M(dk2 ? static_cast<size_t>(ib * N * dk) : 0);
  std::vector<T> E(need_e ? static_cast<size_t>(ib * N * dk) : 0);
  std::vector<T> u(static_cast<size_t>(dk));
  double dscale_acc = 0;
  for (int64_t b = 0; b < s.B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      const int64_t ok = (b * N * H + h) * dk, ov = (b * N * H + h) * dv;
      for (int64_t i0 = 0; i0 < N; i0 += ib) {
        const int64_t ni = std::min(ib, N - i0), rows = ni * N;
        const int64_t kmax = s.causal ? i0 + ni : N;  // keys the block sees
        const T* p = probs + ((b * H + h) * N + i0) * nn;
        if (dv1) {  // dv1_j += Σ_i (P_i V2)_j ∘ dout_i
          gemm<T>(false, false, rows, dv, kmax, T(1), p, N, v2 + ov, ldv, T(0), W.data(), dv);
          for (int64_t ii = 0; ii < ni; ++ii) {
            const T* go = dout + ov + (i0 + ii) * ldv;
            const int64_t jmax = s.causal ? i0 + ii + 1 : N;
            for (int64_t j = 0; j < jmax; ++j) {
              T* d = dv1 + ov + j * ldv;
              const T* w = W.data() + (ii * N + j) * dv;
              for (int64_t c = 0; c < dv; ++c) d[c] += w[c] * go[c];
            }
          }
        }
        if (!dv2 && !need_scores) continue;
        for (int64_t ii = 0; ii < ni; ++ii) {  // dW_(i,j) = v1_j ∘ dout_i
          const T* go = dout + ov + (i0 + ii) * ldv;
          for (int64_t j = 0; j < N; ++j) {
            const T* v1j = v1 + ov + j * ldv;
            T* d = dW.data() + (ii * N + j) * dv;
            for (int64_t c = 0; c < dv; ++c) d[c] = v1j[c] * go[c];
          }
        }
        if (dv2)
          gemm<T>(true, false, kmax, dv, rows, T(1), p, N, dW.data(), dv, T(1), dv2 + ov, ldv);
        if (!need_scores) continue;
        // dP = dW V2ᵀ, then per query dS = P ∘ (dP − Σ dP ∘ P) in place (causal: over the
        // pairs j, k ≤ i, the rest exactly 0).
        gemm<T>(false, true, rows, kmax, dv, T(1), dW.data(), dv, v2 + ov, ldv, T(0), dS.data(), N);
        for (int64_t ii = 0; ii < ni; ++ii) {
          T* ds = dS.data() + ii * nn;
          const T* pi = p + ii * nn;
          if (s.causal) {
            pair_grad_causal(ds, pi, N, i0 + ii);
            continue;
          }
          T dot = 0;
          for (int64_t e = 0; e < nn; ++e) dot += ds[e] * pi[e];
          for (int64_t e = 0; e < nn; ++e) ds[e] = pi[e] * (ds[e] - dot);
        }
        if (dk2) {
          pair_keys(M.data(), q + ok, k1 + ok, i0, ni, N, dk, ldk);
          gemm<T>(true, false, kmax, dk, rows, scale, dS.data(), N, M.data(), dk, T(1), dk2 + ok,
                  ldk);
        }
        if (!need_e) continue;
        gemm<T>(false, false, rows, dk, kmax, T(1), dS.data(), N, k2 + ok, ldk, T(0), E.data(), dk);
        for (int64_t ii = 0; ii < ni; ++ii) {
          const T* qi = q + ok + (i0 + ii) * ldk;
          std::fill(u.begin(), u.end(), T(0));
          const int64_t jmax = s.causal ? i0 + ii + 1 : N;
          for (int64_t j = 0; j < jmax; ++j) {
            const T* e = E.data() + (ii * N + j) * dk;
            const T* k1j = k1 + ok + j * ldk;
            if (dk1) {
              T* d = dk1 + ok + j * ldk;
              for (int64_t l = 0; l < dk; ++l) d[l] += scale * e[l] * qi[l];
            }
            for (int64_t l = 0; l < dk; ++l) u[l] += e[l] * k1j[l];
          }
          if (dq) {
            T* d = dq + ok + (i0 + ii) * ldk;
            for (int64_t l = 0; l < dk; ++l) d[l] += scale * u[l];
          }
          if (dscale) {
            T acc = 0;
            for (int64_t l = 0; l < dk; ++l) acc += u[l] * qi[l];
            dscale_acc += acc;
          }
        }
      }
    }
  }
  if (dscale) *dscale += static_cast<T>(dscale_acc);
}

template <class T>
void third_order_forward_fused(T* out, T* probs, const T* q, const T* k1, const T* k2, const T* v1,
                               const T* v2, T scale, const ThirdOrderShape& s) {
  const ThirdOrderBlock blk = third_order_block_of(s);
  const int64_t N = s.N, H = s.H, n3 = N * N * N;
  std::vector<T> work(static_cast<size_t>(third_order_fused_scratch(N, s.dk, s.dv)));
  std::vector<T> own_probs(probs ? 0 : static_cast<size_t>(n3));  // one block at a time
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t ok = (b * N * H + h) * s.dk, ov = (b * N * H + h) * s.dv;
      third_order_fused_forward<T>(out + ov, probs ? probs + (b * H + h) * n3 : own_probs.data(),
                                   q + ok, k1 + ok, k2 + ok, v1 + ov, v2 + ov, scale, blk,
                                   work.data());
    }
}

template <class T>
void third_order_backward_fused(T* dq, T* dk1, T* dk2, T* dv1, T* dv2, T* dscale, const T* dout,
                                const T* q, const T* k1, const T* k2, const T* v1, const T* v2,
                                const T* probs, T scale, const ThirdOrderShape& s) {
  const ThirdOrderBlock blk = third_order_block_of(s);
  ATTN_ASSERT(probs != nullptr, "third_order_backward needs the forward's probs");
  const int64_t N = s.N, H = s.H, n3 = N * N * N;
  std::vector<T> work(static_cast<size_t>(third_order_fused_scratch(N, s.dk, s.dv)));
  double dscale_acc = 0;
  auto at = [](T* x, int64_t o) { return x ? x + o : nullptr; };
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t ok = (b * N * H + h) * s.dk, ov = (b * N * H + h) * s.dv;
      third_order_fused_backward<T>(at(dq, ok), at(dk1, ok), at(dk2, ok), at(dv1, ov), at(dv2, ov),
                                    dscale ? &dscale_acc : nullptr, dout + ov, q + ok, k1 + ok,
                                    k2 + ok, v1 + ov, v2 + ov, probs + (b * H + h) * n3, scale, blk,
                                    work.data());
    }
  if (dscale) *dscale += static_cast<T>(dscale_acc);
}

}  // namespace

template <class T>
void third_order_forward(T* out, T* probs, const T* q, const T* k1, const T* k2, const T* v1,
                         const T* v2, T scale, const ThirdOrderShape& s) {
  if (attention_path_fused(s.path, third_order_fused_applies(s.dk, s.dv)))
    return third_order_forward_fused(out, probs, q, k1, k2, v1, v2, scale, s);
  third_order_forward_blas(out, probs, q, k1, k2, v1, v2, scale, s);
}

template <class T>
void third_order_backward(T* dq, T* dk1, T* dk2, T* dv1, T* dv2, T* dscale, const T* dout,
                          const T* q, const T* k1, const T* k2, const T* v1, const T* v2,
                          const T* probs, T scale, const ThirdOrderShape& s) {
  if (attention_path_fused(s.path, third_order_fused_applies(s.dk, s.dv)))
    return third_order_backward_fused(dq, dk1, dk2, dv1, dv2, dscale, dout, q, k1, k2, v1, v2,
                                      probs, scale, s);
  third_order_backward_blas(dq, dk1, dk2, dv1, dv2, dscale, dout, q, k1, k2, v1, v2, probs, scale,
                            s);
}

template <class T>
void third_order_forward_ref(T* out, T* probs, const T* q, const T* k1, const T* k2, const T* v1,
                             const T* v2, T scale, const ThirdOrderShape& s) {
  third_order_check(s);
  ATTN_ASSERT(s.score_bits == 0, "third_order_forward_ref has no score rounding");
  const int64_t B = s.B, N = s.N, H = s.H, dk = s.dk, dv = s.dv;
  auto at = [&](const T* x, int64_t b, int64_t t, int64_t h, int64_t d, int64_t l) {
    return x[((b * N + t) * H + h) * d + l];
  };
  std::vector<T> sc(static_cast<size_t>(N * N));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < N; ++i) {
        auto masked = [&](int64_t j, int64_t k) {
          return (s.exclude_self && (j == i || k == i || j == k)) || (s.causal && (j > i || k > i));
        };
        T mx = -std::numeric_limits<T>::infinity();
        for (int64_t j = 0; j < N; ++j)
          for (int64_t k = 0; k < N; ++k) {
            if (masked(j, k)) continue;
            T score = 0;
            for (int64_t l = 0; l < dk; ++l)
              score += at(q, b, i, h, dk, l) * at(k1, b, j, h, dk, l) * at(k2, b, k, h, dk, l);
            sc[j * N + k] = scale * score;
            if (sc[j * N + k] > mx) mx = sc[j * N + k];
          }
        T sum = 0;
        for (int64_t j = 0; j < N; ++j)
          for (int64_t k = 0; k < N; ++k) {
            sc[j * N + k] = masked(j, k) ? T(0) : std::exp(sc[j * N + k] - mx);
            sum += sc[j * N + k];
          }
        for (int64_t e = 0; e < N * N; ++e) {
          sc[e] /= sum;
          if (probs) probs[((b * H + h) * N + i) * N * N + e] = sc[e];
        }
        for (int64_t c = 0; c < dv; ++c) {
          T acc = 0;
          for (int64_t j = 0; j < N; ++j)
            for (int64_t k = 0; k < N; ++k)
              acc += sc[j * N + k] * at(v1, b, j, h, dv, c) * at(v2, b, k, h, dv, c);
          out[((b * N + i) * H + h) * dv + c] = acc;
        }
      }
}

#define ATTN_INSTANTIATE(T)                                                                      \
  template void third_order_forward<T>(T*, T*, const T*, const T*, const T*, const T*, const T*, \
                                       T, const ThirdOrderShape&);                               \
  template void third_order_forward_ref<T>(T*, T*, const T*, const T*, const T*, const T*,       \
                                           const T*, T, const ThirdOrderShape&);                 \
  template void third_order_backward<T>(T*, T*, T*, T*, T*, T*, const T*, const T*, const T*,    \
                                        const T*, const T*, const T*, const T*, T,               \
                                        const ThirdOrderShape&);
ATTN_INSTANTIATE(float)
ATTN_INSTANTIATE(double)
#undef ATTN_INSTANTIATE

}  // namespace attn
