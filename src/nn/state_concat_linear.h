// The first linear layer of a head whose input row (b, i) is [s_b; x_{b,i}]: one state s_b per
// sequence, repeated beside each of its N tokens (LstmNet's "final" read-out), computed without
// forming the (B·N, F + C) rows.
//
//   z[b, i] = bias + s_b · w[0:F] + x_{b,i} · w[F:F+C]
// Shapes (row-major): s (B, F), x (B, N, C), w (F + C, n), bias (n), z (B, N, n).
// The state part is one (B × F)·(F × n) product, once per sequence instead of once per row; the
// token part runs on x's non-zeros when xs is given (ops/sparse_rows.h, built from x by the
// caller), else as one GEMM. Backward, from g = ∂L/∂z (B, N, n) and g_sum[b] = Σ_i g[b, i] (B, n):
//   dw[0:F] += sᵀ · g_sum,   dw[F:F+C] += Σ_{b,i} x_{b,i}ᵀ g[b, i]
// (the bias gradient and ∂L/∂s = g_sum · w[0:F]ᵀ are the caller's). The sums are ordered
// differently from a product over the formed rows, so results differ from it by rounding; each
// gives the same bits at every thread count.
#pragma once

#include <cstdint>

#include "ops/sparse_rows.h"

namespace attn {

struct StateConcatShape {
  int64_t B = 0, N = 0, F = 0, C = 0, n = 0;
};

// zs is scratch of B·n values (bias + s_b · w[0:F] per sequence).
template <class T>
void state_concat_linear_forward(T* z, T* zs, const T* s, const T* x, const SparseRows<T>* xs,
                                 const T* w, const T* bias, const StateConcatShape& sh);

// g_sum[b] = Σ_i g[b, i] (B, n), summed over i in order: the per-sequence sums the backward and
// the state's gradient take.
template <class T>
void state_concat_sequence_sums(T* g_sum, const T* g, const StateConcatShape& sh);

template <class T>
void state_concat_linear_backward(T* dw, const T* g, const T* g_sum, const T* s, const T* x,
                                  const SparseRows<T>* xs, const StateConcatShape& sh);

// A whole head of one hidden relu layer on these rows, x given by its non-zeros: the state part
// zs = bias + s · w[0:F] as above, the rest fused a row at a time (ops/sparse_relu_head.h, which
// gives the rounding): y (B, N, n2) = b1 + relu(z) · w1, w1 (n, n2). zs (B, n) is kept for the
// backward, which adds to dw, db (the first layer's), dw1 and db1 and sets g_sum as
// state_concat_sequence_sums does (∂L/∂s = g_sum · w[0:F]ᵀ is the caller's).
template <class T>
void state_concat_relu_head_forward(T* y, T* zs, const T* s, const SparseRows<T>& xs, const T* w,
                                    const T* bias, const T* w1, const T* b1,
                                    const StateConcatShape& sh, int64_t n2);

template <class T>
void state_concat_relu_head_backward(T* g_sum, T* dw, T* db, T* dw1, T* db1, const T* dy,
                                     const T* zs, const T* s, const SparseRows<T>& xs, const T* w,
                                     const T* w1, const StateConcatShape& sh, int64_t n2);

}  // namespace attn
