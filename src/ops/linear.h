// Linear (affine) map applied to every row: the building block of φ, ψ, Q/K/V projections,
// MLPs and the LSTM's input products.
//
// Shapes (row-major): inp (rows, in_dim), weight (in_dim, out_dim), bias (out_dim) or null,
// out (rows, out_dim):  out = inp · weight + bias.
// Backward accumulates (+=) into every non-null d-buffer: dinp (rows, in_dim),
// dweight (in_dim, out_dim), dbias (out_dim); dout is (rows, out_dim).
// linear_backward_input_set writes dinp = dout · weightᵀ instead, without reading dinp (one
// GEMM with β = 0: no zeroing pass over a scratch buffer first).
// The *_ref functions are the naive loops the tests compare against.
#pragma once

#include <cstdint>

namespace attn {

template <class T>
void linear_forward(T* out, const T* inp, const T* weight, const T* bias, int64_t rows,
                    int64_t in_dim, int64_t out_dim);
template <class T>
void linear_backward(T* dinp, T* dweight, T* dbias, const T* dout, const T* inp,
                     const T* weight, int64_t rows, int64_t in_dim, int64_t out_dim);
template <class T>
void linear_backward_input_set(T* dinp, const T* dout, const T* weight, int64_t rows,
                               int64_t in_dim, int64_t out_dim);

template <class T>
void linear_forward_ref(T* out, const T* inp, const T* weight, const T* bias, int64_t rows,
                        int64_t in_dim, int64_t out_dim);
template <class T>
void linear_backward_ref(T* dinp, T* dweight, T* dbias, const T* dout, const T* inp,
                         const T* weight, int64_t rows, int64_t in_dim, int64_t out_dim);

}  // namespace attn
