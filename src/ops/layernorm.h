// Layer normalisation over the last dimension, with a learned gain and bias.
//
// Shapes: inp, out (rows, dim); gamma, beta (dim); the forward's cache mean, rstd (rows)
// with rstd = 1/sqrt(var + eps) (biased variance, as PyTorch).
// out = (inp − mean) · rstd · gamma + beta. Backward accumulates into dinp (rows, dim),
// dgamma, dbeta (dim); any of them may be null.
#pragma once

#include <cstdint>

namespace attn {

template <class T>
void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* gamma, const T* beta,
                       int64_t rows, int64_t dim, T eps);
template <class T>
void layernorm_backward(T* dinp, T* dgamma, T* dbeta, const T* dout, const T* inp,
                        const T* gamma, const T* mean, const T* rstd, int64_t rows, int64_t dim);

template <class T>
void layernorm_forward_ref(T* out, const T* inp, const T* gamma, const T* beta, int64_t rows,
                           int64_t dim, T eps);

}  // namespace attn
