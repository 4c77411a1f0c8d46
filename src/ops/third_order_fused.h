// The fused third-order attention kernel of one (sequence, head) block, used by
// third_order_forward / third_order_backward (ops/third_order_attention.h) for small head
// dimensions (third_order_fused_applies), where the GEMM path's calls on blocks of queries
// spend more in OpenBLAS's overhead, packing and β-scaling than in flops.
//
// One block: q, k1, k2 (N × dk, row stride ldk), v1, v2 (N × dv, ldv), p (N × N × N: query i's
// N × N pair block at p + i·N², the probs of the block), o (N × dv, ldv). All queries' scores
// are one product of Q with the block's pair keys C (N² × dk, row j·N + k = k1_j ∘ k2_k), the
// output one product of the probs with the pair values (v1_j ∘ v2_k); the pair tables and the
// gradients' N × N² buffers live in a caller's scratch of third_order_fused_scratch(N, dk, dv)
// values (N²·(2dk + 2dv + N) and a little more: 58 KB at N = 16, dk = 16, dv = 4 in float,
// 1.2 MB at N = 32, dk = dv = 64). Causal queries i get the (i + 1) × (i + 1) leading pairs
// only (the others computed, then masked: a non-finite future token can make earlier queries
// NaN, 0 · ∞, as within a query block of the GEMM path); exclude_self and
// score_bits as in ops/third_order_attention.h. Summation orders are fixed by the code
// (ops/attention_tiles.h), so a block's result never depends on the thread count, the batch
// split or the ISA copy.
#pragma once

#include <cstdint>

namespace attn {

int64_t third_order_fused_scratch(int64_t N, int64_t dk, int64_t dv);

struct ThirdOrderBlock {
  int64_t N = 1, dk = 1, dv = 1, ldk = 1, ldv = 1;
  bool exclude_self = false, causal = false;
  int64_t score_bits = 0;
};

// p ← the pair softmaxes of query 0 … N−1 (p holds all N³ entries), o ← Σ p_ijk v1_j ∘ v2_k.
template <class T>
void third_order_fused_forward(T* o, T* p, const T* q, const T* k1, const T* k2, const T* v1,
                               const T* v2, T scale, const ThirdOrderBlock& a, T* scratch);

// Accumulates (+=) into the non-null gradients and dscale_acc; do_ (N × dv, ldv).
template <class T>
void third_order_fused_backward(T* dq, T* dk1, T* dk2, T* dv1, T* dv2, double* dscale_acc,
                                const T* do_, const T* q, const T* k1, const T* k2, const T* v1,
                                const T* v2, const T* p, T scale, const ThirdOrderBlock& a,
                                T* scratch);

}  // namespace attn
