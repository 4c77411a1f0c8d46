// Multi-head softmax attention and the head sum (see attention.h), fast path and naive
// reference.
//
// Shapes: q, k (B, N, H, dk); v, out, dout (B, N, H, dv); probs (B, H, N, N).
// The rows of head h of sequence b start at q + ((b·N)·H + h)·dk with row stride H·dk, so
// each (b, h) block is a strided matrix that cblas reads directly (lda = H·dk):
//   S = scale · Q Kᵀ (N × N), P = row softmax of S (masked diagonal under exclude_self),
//   O = P V.
// With score_bits, S is rounded (ops/quantize.h, one scale per (b, h)) before the softmax.
// Backward per (b, h), with G = dS·K (straight-through: P is the rounded scores' softmax):
//   dV += Pᵀ dO,  dP = dO Vᵀ,  dS = P ∘ (dP − rowsum(dP ∘ P)),
//   dQ += scale · G,  dK += scale · dSᵀ Q,  dscale += Σ dS ∘ (Q Kᵀ) = Σ G ∘ Q.
// causal: the products run per block of query rows r0 … r1 − 1 (causal_row_block) against
// keys 0 … r1 − 1 only; entries j > i of P and dS are exactly 0. Without causal there is one
// block of all N rows and all N keys (the same products as before causal existed).
// Small heads (dk, dv ≤ kAttentionFusedMaxDim) take the fused per-(b, h) kernel of
// ops/attention_fused.h instead of the GEMM calls: the same products in loops that keep the
// block's N × N scores in cache, without OpenBLAS's per-call overhead and packing.
#include "ops/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "ops/attention_fused.h"
#include "ops/blas.h"
#include "ops/quantize.h"
#include "ops/vmath.h"

namespace attn {
namespace {

void attention_check(const AttentionShape& s) {
  ATTN_CHECK(s.B >= 0 && s.N >= 1 && s.H >= 1 && s.dk >= 1 && s.dv >= 1,
             "attention: sizes must be positive (got B=" + std::to_string(s.B) +
                 ", N=" + std::to_string(s.N) + ", H=" + std::to_string(s.H) +
                 ", dk=" + std::to_string(s.dk) + ", dv=" + std::to_string(s.dv) + ")");
  ATTN_CHECK(!s.exclude_self || s.N >= 2,
             "attention: exclude_self needs at least 2 tokens (got N=" + std::to_string(s.N) +
                 "); use N >= 2 or turn exclude_self off");
  ATTN_CHECK(!(s.causal && s.exclude_self),
             "attention: causal and exclude_self together leave query 0 no key; turn one off");
  quantize_check_bits(s.score_bits, "attention: score_bits");
}

// The rows of query block r0 … (r0 + rows − 1) and the keys 0 … keys − 1 they see.
struct RowBlock {
  int64_t r0, rows, keys;
};

std::vector<RowBlock> row_blocks(int64_t N, bool causal) {
  if (!causal) return {{0, N, N}};
  const int64_t rb = causal_row_block(N);
  std::vector<RowBlock> blocks;
  for (int64_t r0 = 0; r0 < N; r0 += rb) {
    const int64_t rows = std::min(rb, N - r0);
    blocks.push_back({r0, rows, r0 + rows});
  }
  return blocks;
}

// In place: each of the n rows of p (row stride n) becomes its softmax; with exclude_self
// entry (i, i) is masked (exactly 0); with causal row i is the softmax of its entries
// 0 … i and its entries j > i (not read) are set to exactly 0.
template <class T>
void softmax_rows(T* p, int64_t n, bool exclude_self, bool causal) {
  const T neg_inf = -std::numeric_limits<T>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    T* row = p + i * n;
    const int64_t len = causal ? i + 1 : n;
    if (exclude_self) row[i] = neg_inf;
    T mx = neg_inf;
    for (int64_t j = 0; j < len; ++j) mx = std::max(mx, row[j]);
    for (int64_t j = 0; j < len; ++j) row[j] -= mx;
    vmath_exp_nonpositive(row, row, len);  // the masked entry: exp(−inf) = 0 exactly
    T sum = 0;
    for (int64_t j = 0; j < len; ++j) sum += row[j];
    const T inv = T(1) / sum;
    for (int64_t j = 0; j < len; ++j) row[j] *= inv;
    std::fill(row + len, row + n, T(0));
  }
}

// The fused kernel's view of one (b, h) block of shape s (checked).
AttentionBlock attention_block_of(const AttentionShape& s) {
  attention_check(s);
  const int64_t H = s.H;
  return {s.N,      s.dk,           s.dv,     H * s.dk,    s.shared_keys ? s.dk : H * s.dk,
          H * s.dv, s.exclude_self, s.causal, s.score_bits};
}

}  // namespace

int64_t causal_row_block(int64_t N) {
  return N <= 16 ? std::max<int64_t>(N, 1) : std::max<int64_t>(16, (N + 7) / 8);
}

namespace {

template <class T>
void attention_forward_fused(T* out, T* probs, const T* q, const T* k, const T* v, T scale,
                             const AttentionShape& s) {
  const AttentionBlock blk = attention_block_of(s);
  const int64_t N = s.N, H = s.H, dk = s.dk, dv = s.dv;
  std::vector<T> work(static_cast<size_t>(attention_fused_scratch(N, dk, dv)));
  std::vector<T> own_probs(probs ? 0 : static_cast<size_t>(N * N));  // one block at a time
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < H; ++h)
      attention_fused_forward<T>(
          out + (b * N * H + h) * dv, probs ? probs + (b * H + h) * N * N : own_probs.data(),
          q + (b * N * H + h) * dk, k + (s.shared_keys ? b * N * dk : (b * N * H + h) * dk),
          v + (b * N * H + h) * dv, scale, blk, work.data());
}

template <class T>
void attention_forward_blas(T* out, T* probs, const T* q, const T* k, const T* v, T scale,
                            const AttentionShape& s) {
  attention_check(s);
  const int64_t N = s.N, H = s.H, dk = s.dk, dv = s.dv;
  const int64_t ldq = H * dk, ldk = s.shared_keys ? dk : H * dk, ldv = H * dv;
  std::vector<T> scratch(probs ? 0 : static_cast<size_t>(N * N));
  const std::vector<RowBlock> blocks = row_blocks(N, s.causal);
  for (int64_t b = 0; b < s.B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      const T* qb = q + (b * N * H + h) * dk;
      const T* kb = k + (s.shared_keys ? b * N * dk : (b * N * H + h) * dk);
      const T* vb = v + (b * N * H + h) * dv;
      T* ob = out + (b * N * H + h) * dv;
      T* p = probs ? probs + (b * H + h) * N * N : scratch.data();
      for (const RowBlock& r : blocks)
        gemm<T>(false, true, r.rows, r.keys, dk, scale, qb + r.r0 * ldq, ldq, kb, ldk, T(0),
                p + r.r0 * N, N);
      if (s.score_bits > 0) {
        // Masked entries (set to −∞ by the softmax) must not set the scale: zero them first.
        if (s.exclude_self)
          for (int64_t i = 0; i < N; ++i) p[i * N + i] = T(0);
        if (s.causal)
          for (int64_t i = 0; i < N; ++i) std::fill(p + i * N + i + 1, p + (i + 1) * N, T(0));
        quantize_fixed_point(p, N * N, s.score_bits);
      }
      softmax_rows(p, N, s.exclude_self, s.causal);
      for (const RowBlock& r : blocks)
        gemm<T>(false, false, r.rows, dv, r.keys, T(1), p + r.r0 * N, N, vb, ldv, T(0),
                ob + r.r0 * ldv, ldv);
    }
  }
}

template <class T>
void attention_backward_fused(T* dq, T* dk, T* dv, T* dscale, const T* dout, const T* q, const T* k,
                              const T* v, const T* probs, T scale, const AttentionShape& s) {
  const AttentionBlock blk = attention_block_of(s);
  ATTN_ASSERT(probs != nullptr, "attention_backward needs the forward's probs");
  const int64_t N = s.N, H = s.H;
  std::vector<T> work(static_cast<size_t>(attention_fused_scratch(N, s.dk, s.dv)));
  double dscale_acc = 0;
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t ok = (b * N * H + h) * s.dk, ov = (b * N * H + h) * s.dv;
      const int64_t oks = s.shared_keys ? b * N * s.dk : ok;
      attention_fused_backward<T>(dq ? dq + ok : nullptr, dk ? dk + oks : nullptr,
                                  dv ? dv + ov : nullptr, dscale ? &dscale_acc : nullptr, dout + ov,
                                  q + ok, k + oks, v + ov, probs + (b * H + h) * N * N, scale, blk,
                                  work.data());
    }
  if (dscale) *dscale += static_cast<T>(dscale_acc);
}

template <class T>
void attention_backward_blas(T* dq, T* dk, T* dv, T* dscale, const T* dout, const T* q, const T* k,
                             const T* v, const T* probs, T scale, const AttentionShape& s) {
  attention_check(s);
  ATTN_ASSERT(probs != nullptr, "attention_backward needs the forward's probs");
  const int64_t N = s.N, H = s.H, dkk = s.dk, dvv = s.dv;
  const int64_t ldk = H * dkk, ldv = H * dvv, ldks = s.shared_keys ? dkk : H * dkk;
  const bool need_scores = dq || dk || dscale;
  double dscale_acc = 0;
  std::vector<T> dS(need_scores ? static_cast<size_t>(N * N) : 0);
  std::vector<T> G((dq || dscale) ? static_cast<size_t>(N * dkk) : 0);
  const std::vector<RowBlock> blocks = row_blocks(N, s.causal);
  for (int64_t b = 0; b < s.B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      const int64_t ok = (b * N * H + h) * dkk, ov = (b * N * H + h) * dvv;
      const int64_t oks = s.shared_keys ? b * N * dkk : ok;  // offset into k and dk
      const T* p = probs + (b * H + h) * N * N;
      if (dv)
        for (const RowBlock& r : blocks)
          gemm<T>(true, false, r.keys, dvv, r.rows, T(1), p + r.r0 * N, N, dout + ov + r.r0 * ldv,
                  ldv, T(1), dv + ov, ldv);
      if (!need_scores) continue;
      // dP = dO Vᵀ, then dS = P ∘ (dP − rowsum(dP ∘ P)) in place (causal: row i over
      // j ≤ i, the rest exactly 0).
      for (const RowBlock& r : blocks)
        gemm<T>(false, true, r.rows, r.keys, dvv, T(1), dout + ov + r.r0 * ldv, ldv, v + ov, ldv,
                T(0), dS.data() + r.r0 * N, N);
      for (int64_t i = 0; i < N; ++i) {
        T* ds = dS.data() + i * N;
        const T* pr = p + i * N;
        const int64_t len = s.causal ? i + 1 : N;
        T dot = 0;
        for (int64_t j = 0; j < len; ++j) dot += ds[j] * pr[j];
        for (int64_t j = 0; j < len; ++j) ds[j] = pr[j] * (ds[j] - dot);
        std::fill(ds + len, ds + N, T(0));
      }
      if (dk)
        for (const RowBlock& r : blocks)
          gemm<T>(true, false, r.keys, dkk, r.rows, scale, dS.data() + r.r0 * N, N,
                  q + ok + r.r0 * ldk, ldk, T(1), dk + oks, ldks);
      if (!dq && !dscale) continue;
      for (const RowBlock& r : blocks)
        gemm<T>(false, false, r.rows, dkk, r.keys, T(1), dS.data() + r.r0 * N, N, k + oks, ldks,
                T(0), G.data() + r.r0 * dkk, dkk);
      for (int64_t i = 0; i < N; ++i) {
        const T* g = G.data() + i * dkk;
        if (dq) {
          T* dqi = dq + ok + i * ldk;
          for (int64_t l = 0; l < dkk; ++l) dqi[l] += scale * g[l];
        }
        if (dscale) {
          const T* qi = q + ok + i * ldk;
          T acc = 0;
          for (int64_t l = 0; l < dkk; ++l) acc += g[l] * qi[l];
          dscale_acc += acc;
        }
      }
    }
  }
  if (dscale) *dscale += static_cast<T>(dscale_acc);
}

}  // namespace

template <class T>
void attention_forward(T* out, T* probs, const T* q, const T* k, const T* v, T scale,
                       const AttentionShape& s) {
  if (attention_path_fused(s.path, attention_fused_applies(s.dk, s.dv)))
    return attention_forward_fused(out, probs, q, k, v, scale, s);
  attention_forward_blas(out, probs, q, k, v, scale, s);
}

template <class T>
void attention_backward(T* dq, T* dk, T* dv, T* dscale, const T* dout, const T* q, const T* k,
                        const T* v, const T* probs, T scale, const AttentionShape& s) {
  if (attention_path_fused(s.path, attention_fused_applies(s.dk, s.dv)))
    return attention_backward_fused(dq, dk, dv, dscale, dout, q, k, v, probs, scale, s);
  attention_backward_blas(dq, dk, dv, dscale, dout, q, k, v, probs, scale, s);
}

template <class T>
void attention_forward_ref(T* out, T* probs, const T* q, const T* k, const T* v, T scale,
                           const AttentionShape& s) {
  attention_check(s);
  ATTN_ASSERT(s.score_bits == 0, "attention_forward_ref has no score rounding");
  const int64_t B = s.B, N = s.N, H = s.H, dk = s.dk, dv = s.dv;
  std::vector<T> row(static_cast<size_t>(N));
  auto masked = [&s](int64_t i, int64_t j) {
    return (s.exclude_self && j == i) || (s.causal && j > i);
  };
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < N; ++i) {
        T mx = -std::numeric_limits<T>::infinity();
        for (int64_t j = 0; j < N; ++j) {
          if (masked(i, j)) continue;
          T dot = 0;
          for (int64_t l = 0; l < dk; ++l)
            dot += q[((b * N + i) * H + h) * dk + l] *
                   k[(s.shared_keys ? b * N + j : (b * N + j) * H + h) * dk + l];
          row[j] = scale * dot;
          if (row[j] > mx) mx = row[j];
        }
        T sum = 0;
        for (int64_t j = 0; j < N; ++j) {
          row[j] = masked(i, j) ? T(0) : std::exp(row[j] - mx);
          sum += row[j];
        }
        for (int64_t j = 0; j < N; ++j) {
          row[j] /= sum;
          if (probs) probs[((b * H + h) * N + i) * N + j] = row[j];
        }
        for (int64_t c = 0; c < dv; ++c) {
          T acc = 0;
          for (int64_t j = 0; j < N; ++j) acc += row[j] * v[((b * N + j) * H + h) * dv + c];
          out[((b * N + i) * H + h) * dv + c] = acc;
        }
      }
}

template <class T>
void head_sum_forward(T* out_sum, const T* inp, int64_t rows, int64_t H, int64_t dv) {
  ATTN_CHECK(rows >= 0 && H >= 1 && dv >= 1,
             "head_sum: sizes must be positive (got rows=" + std::to_string(rows) +
                 ", H=" + std::to_string(H) + ", dv=" + std::to_string(dv) + ")");
  for (int64_t r = 0; r < rows; ++r) {
    T* o = out_sum + r * dv;
    const T* x = inp + r * H * dv;
    std::copy(x, x + dv, o);
    for (int64_t h = 1; h < H; ++h)
      for (int64_t c = 0; c < dv; ++c) o[c] += x[h * dv + c];
  }
}

template <class T>
void head_sum_backward(T* dinp, const T* dout_sum, int64_t rows, int64_t H, int64_t dv) {
  ATTN_CHECK(rows >= 0 && H >= 1 && dv >= 1,
             "head_sum: sizes must be positive (got rows=" + std::to_string(rows) +
                 ", H=" + std::to_string(H) + ", dv=" + std::to_string(dv) + ")");
  for (int64_t r = 0; r < rows; ++r) {
    const T* g = dout_sum + r * dv;
    for (int64_t h = 0; h < H; ++h) {
      T* d = dinp + (r * H + h) * dv;
      for (int64_t c = 0; c < dv; ++c) d[c] += g[c];
    }
  }
}

#define ATTN_INSTANTIATE(T)                                                                   \
  template void attention_forward<T>(T*, T*, const T*, const T*, const T*, T,                 \
                                     const AttentionShape&);                                  \
  template void attention_backward<T>(T*, T*, T*, T*, const T*, const T*, const T*, const T*, \
                                      const T*, T, const AttentionShape&);                    \
  template void attention_forward_ref<T>(T*, T*, const T*, const T*, const T*, T,             \
                                         const AttentionShape&);                              \
  template void head_sum_forward<T>(T*, const T*, int64_t, int64_t, int64_t);                 \
  template void head_sum_backward<T>(T*, const T*, int64_t, int64_t, int64_t);
ATTN_INSTANTIATE(float)
ATTN_INSTANTIATE(double)
#undef ATTN_INSTANTIATE
// Long double: the exact (bits = 0) evaluation of constructions (constructions/attend.h).
template void attention_forward_ref<long double>(long double*, long double*, const long double*,
                                                 const long double*, const long double*,
                                                 long double, const AttentionShape&);

}  // namespace attn
