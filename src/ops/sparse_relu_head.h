// A two-layer relu head whose first layer sees a per-sequence part plus a mostly-zero per-row
// input, run a block of rows at a time: LstmNet's "final" read-out with a hidden layer
// (nn/lstm_net.cpp; the per-sequence part is nn/state_concat_linear.h's).
//
// Shapes (row-major): rows r = b·N + i for B sequences of N; zs (B, n1) = b0 + s_b · W0[0:F],
// the caller's; x (B·N, C) given by its non-zeros xs (ops/sparse_rows.h); wx = W0[F:F+C]
// (C, n1); w1 (n1, n2), b1 (n2); y and dy (B·N, n2).
//   forward:   h[r] = relu(zs[b] + x[r] · wx)          (not kept: backward recomputes it)
//              y[r] = b1 + h[r] · w1
//   backward:  g[r] = (dy[r] · w1ᵀ) ∘ [h[r] > 0]        (the first layer's output gradient)
//              dw1 += hᵀ · dy,   db1 += Σ_r dy[r],   db0 += Σ_r g[r],
//              dwx += Σ_r x[r]ᵀ · g[r],   g_sum[b] = Σ_i g[b·N + i]
// (g_sum is set; the other gradients are added to).
// With W0[0:F], g_sum gives the states' part of W0's gradient and ∂L/∂s_b (the caller's).
// The unfused path (state_concat_linear, then MlpBlock over all B·N rows) passes about ten times
// over (B·N, n1) arrays; here every (·, n1) row stays in cache (one at a time in forward, blocks
// of 64 in backward). Op by op, given the same dy: h, g, db0, dwx, g_sum and db1 get the unfused
// path's bits when n2 <= kLinearReluTiledMaxOut (the same sums in the same order:
// sparse_rows_times, linear_backward_input_relu's tiles, sparse_rows_t_times,
// state_concat_sequence_sums, linear_backward; above it the unfused path's g is a GEMM); y and dw1
// are fixed-order sums (ops/attention_tiles.h) where the unfused path calls OpenBLAS, so they
// differ from it by rounding, and through y so does every gradient of a training step. Every ISA
// copy (ops/isa.h) and every thread count gives the same bits.
#pragma once

#include <cstdint>

#include "ops/sparse_rows.h"

namespace attn {

struct SparseReluHeadShape {
  int64_t B = 0, N = 0, n1 = 0, n2 = 0;
};

template <class T>
void sparse_relu_head_forward(T* y, const T* zs, const SparseRows<T>& xs, const T* wx, const T* w1,
                              const T* b1, const SparseReluHeadShape& sh);

// zs, xs, wx and w1 as the forward had them.
template <class T>
void sparse_relu_head_backward(T* g_sum, T* dwx, T* db0, T* dw1, T* db1, const T* dy, const T* zs,
                               const SparseRows<T>& xs, const T* wx, const T* w1,
                               const SparseReluHeadShape& sh);

}  // namespace attn
