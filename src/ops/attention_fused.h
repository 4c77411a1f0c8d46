// The cache-resident softmax attention kernel of one (sequence, head) block, used by
// attention_forward / attention_backward (ops/attention.h) for small head dimensions, where a
// handful of tiny GEMM calls per block cost more in call overhead and packing than in flops.
//
// One block: q (N × dk, row stride ldq), k (N × dk, ldk), v (N × dv, ldv), p (N × N, row
// stride N: the probs of the block), o (N × dv, ldv). Every intermediate of the block (the
// transposed keys or values, the N × N score gradients, the N × dk query gradients) lives in a
// caller's scratch of attention_fused_scratch(N, dk, dv) values, so the N × N scores are
// produced, softmaxed and consumed while in L1/L2. Causal blocks skip the register tiles the
// mask zeroes; exclude_self and score_bits as in ops/attention.h.
// Summation orders are fixed by the code (terms in order, no reassociation), so a block's
// result never depends on the thread count, the batch split or the ISA copy (ops/isa.h): the
// generic, AVX2 and AVX-512 copies give the same bits.
#pragma once

#include <cstdint>

#include "ops/attention.h"

namespace attn {

// Whether attention_forward / attention_backward take the fused kernel for these sizes
// (dk and dv at most kAttentionFusedMaxDim; above it OpenBLAS's GEMMs are faster).
constexpr int64_t kAttentionFusedMaxDim = 64;
bool attention_fused_applies(int64_t dk, int64_t dv);

// Whether a kernel runs its fused path under `path`, given whether it applies to the heads
// (automatic: applies; fused: always; blas: never).
bool attention_path_fused(AttentionPath path, bool applies);

// Values of scratch one block needs.
int64_t attention_fused_scratch(int64_t N, int64_t dk, int64_t dv);

struct AttentionBlock {
  int64_t N = 1, dk = 1, dv = 1, ldq = 1, ldk = 1, ldv = 1;
  bool exclude_self = false, causal = false;
  int64_t score_bits = 0;
};

// p ← softmax rows of scale·q kᵀ (masked as configured), o ← p v.
template <class T>
void attention_fused_forward(T* o, T* p, const T* q, const T* k, const T* v, T scale,
                             const AttentionBlock& a, T* scratch);

// Accumulates (+=) into the non-null dq, dk, dv (strides ldq, ldk, ldv) and dscale_acc, with
// do_ (N × dv, ldv) the output gradient and p the forward's probs of the block.
template <class T>
void attention_fused_backward(T* dq, T* dk, T* dv, double* dscale_acc, const T* do_, const T* q,
                              const T* k, const T* v, const T* p, T scale, const AttentionBlock& a,
                              T* scratch);

}  // namespace attn
