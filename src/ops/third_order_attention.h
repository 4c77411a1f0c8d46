// Third-order (tensor) attention, spec sanford2023 §1.4 (the form of Alman & Song 2023):
// each query attends to ordered pairs (j, k) of tokens.
//
// Shapes (row-major), B sequences of N tokens, H heads:
//   q, k1, k2  (B, N, H, dk)     queries and the two key factors
//   v1, v2     (B, N, H, dv)     the two value factors
//   probs      (B, H, N, N, N)   cache: probs[b,h,i,j,k] = softmax over (j,k) of
//                                scale · Σ_l q[b,i,h,l] · k1[b,j,h,l] · k2[b,k,h,l]
//   out        (B, N, H, dv)     out[b,i,h,:] = Σ_{j,k} probs[b,h,i,j,k] · (v1[b,j,h,:] ∘
//   v2[b,k,h,:])
// Softmax domain: all N² ordered pairs, or with exclude_self only pairs with j ≠ i, k ≠ i
// and j ≠ k (spec §7 A9/A11; needs N ≥ 3); with causal only pairs with j ≤ i and k ≤ i
// (probs is exactly 0 elsewhere; refused together with exclude_self, which would leave query
// 0 no pair). Cost Θ(B·H·N³·(dk + dv)), memory B·H·N³ for probs; on the GEMM path causal
// skips about half of the products (queries in blocks, each against keys below the block's
// end), the fused path (dk, dv ≤ kThirdOrderFusedMaxDim) computes all pairs and masks them.
// Backward accumulates (+=) into every non-null buffer (dq, dk1, dk2, dv1, dv2, dscale).
// score_bits > 0 rounds the N³ scores of each (b, h) to score_bits-bit fixed point with one
// scale per (b, h) (ops/quantize.h; masked pairs excluded) before the softmax; backward
// treats the rounding as the identity (straight-through). Without probs this needs an
// N³ scratch per call. The reference kernel has no score rounding (score_bits must be 0).
#pragma once

#include <cstdint>

#include "ops/attention.h"

namespace attn {

struct ThirdOrderShape {
  int64_t B = 1, N = 1, H = 1, dk = 1, dv = 1;
  bool exclude_self = false;
  int64_t score_bits = 0;  // 0: exact scores; else 2..53 (ops/quantize.h)
  bool causal = false;     // pairs (j, k) with j > i or k > i masked
  AttentionPath path = AttentionPath::automatic;  // as for AttentionShape (ops/attention.h)
};

template <class T>
void third_order_forward(T* out, T* probs, const T* q, const T* k1, const T* k2, const T* v1,
                         const T* v2, T scale, const ThirdOrderShape& s);
template <class T>
void third_order_backward(T* dq, T* dk1, T* dk2, T* dv1, T* dv2, T* dscale, const T* dout,
                          const T* q, const T* k1, const T* k2, const T* v1, const T* v2,
                          const T* probs, T scale, const ThirdOrderShape& s);

// The head size up to which third_order_forward / _backward take the fused per-(b, h) kernel
// of ops/third_order_fused.h (AttentionPath::automatic; ops/attention.h); OpenBLAS GEMMs over
// blocks of queries above.
constexpr int64_t kThirdOrderFusedMaxDim = 64;
bool third_order_fused_applies(int64_t dk, int64_t dv);

template <class T>
void third_order_forward_ref(T* out, T* probs, const T* q, const T* k1, const T* k2,
                             const T* v1, const T* v2, T scale, const ThirdOrderShape& s);

}  // namespace attn
