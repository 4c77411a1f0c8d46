// Softmax attention with H heads, the core of the `attention` and `transformer` models
// (spec sanford2023 §1.1–1.2): scores are plain dot products times a scale (no 1/√m unless
// the caller passes it; the models pass a learnable temperature).
//
// Shapes (row-major), B sequences of N tokens:
//   q, k   (B, N, H, dk)   per-token, per-head queries and keys (e.g. φ(X)·[Q_1 … Q_H])
//   v      (B, N, H, dv)   values
//   probs  (B, H, N, N)    the forward's cache: probs[b,h,i,:] = softmax_j(scale·<q_bih, k_bjh>)
//   out    (B, N, H, dv)   out[b,i,h,:] = Σ_j probs[b,h,i,j] · v[b,j,h,:]
// exclude_self masks j = i (row i then averages the other N−1 tokens; needs N ≥ 2).
// causal masks j > i (query i sees keys 0 … i; probs[b,h,i,j] = 0 for j > i); the fast
// kernel skips the masked work in blocks of query rows (causal_row_block). causal with
// exclude_self is refused (query 0 would see no key).
// score_bits > 0 rounds the scores scale·<q, k> of each (b, h) block to score_bits-bit fixed
// point with one scale per block (ops/quantize.h; masked entries excluded) before the
// softmax; backward then treats the rounding as the identity (straight-through). The
// reference kernel has no score rounding (score_bits must be 0 there).
// Backward accumulates (+=) into every non-null buffer: dq, dk (B, N, H, dk), dv (B, N, H, dv),
// dscale (one value: ∂L/∂scale). dout is (B, N, H, dv).
// head_sum: out_sum (B·N, dv) = Σ_h inp (B·N, H, dv), the paper's summed heads.
// shared_keys: every head uses the same keys, k (B, N, dk) (and dk (B, N, dk) accumulates the
// heads' key gradients) — a unit whose scores are φ_i Q_h K_hᵀ φ_jᵀ runs as queries Φ·(Q_h K_hᵀ)
// against the keys Φ, one projection per head instead of two.
// The *_ref functions are naive loops for the tests.
#pragma once

#include <cstdint>

namespace attn {

// Which implementation attention_forward / attention_backward run: automatic picks by the head
// sizes (attention_fused_applies, ops/attention_fused.h: the fused per-(b, h) kernel for small
// dk, dv; OpenBLAS GEMMs per (b, h) above); fused and blas force one (tests, benchmarks). Both
// compute the same products and agree to rounding.
enum class AttentionPath { automatic, fused, blas };

struct AttentionShape {
  int64_t B = 1, N = 1, H = 1, dk = 1, dv = 1;
  bool exclude_self = false;
  int64_t score_bits = 0;  // 0: exact scores; else 2..53 (ops/quantize.h)
  bool shared_keys = false;  // k is (B, N, dk), the same for every head
  bool causal = false;       // score (i, j) = −∞ for j > i
  AttentionPath path = AttentionPath::automatic;
};

// The query rows per block of the causal fast kernel: block r0 … r0 + rows − 1 computes its
// scores against keys 0 … r0 + rows − 1 only. Depends on N alone (results never depend on
// the thread count); N itself (one block) for N ≤ 16.
int64_t causal_row_block(int64_t N);

template <class T>
void attention_forward(T* out, T* probs, const T* q, const T* k, const T* v, T scale,
                       const AttentionShape& s);
template <class T>
void attention_backward(T* dq, T* dk, T* dv, T* dscale, const T* dout, const T* q, const T* k,
                        const T* v, const T* probs, T scale, const AttentionShape& s);

template <class T>
void attention_forward_ref(T* out, T* probs, const T* q, const T* k, const T* v, T scale,
                           const AttentionShape& s);

template <class T>
void head_sum_forward(T* out_sum, const T* inp, int64_t rows, int64_t H, int64_t dv);
template <class T>
void head_sum_backward(T* dinp, const T* dout_sum, int64_t rows, int64_t H, int64_t dv);

}  // namespace attn
