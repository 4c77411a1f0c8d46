// Linear (affine) map applied to every row: the building block of φ, ψ, Q/K/V projections,
// MLPs and the LSTM's input products.
//
// Shapes (row-major): inp (rows, in_dim), weight (in_dim, out_dim), bias (out_dim) or null,
// out (rows, out_dim):  out = inp · weight + bias.
// Backward accumulates (+=) into every non-null d-buffer: dinp (rows, in_dim),
// dweight (in_dim, out_dim), dbias (out_dim); dout is (rows, out_dim).
// linear_backward_input_set writes dinp = dout · weightᵀ instead, without reading dinp (one
// product that only writes: no zeroing pass over a scratch buffer first).
// Float products of narrow shapes run on the FMA register tiles of ops/fma_product.h, the others
// (and double) on OpenBLAS; the rule, by shape only, is linear_packed_on_fma_tiles and
// linear_weight_grad_on_fma_tiles below (ops/linear.cpp says why).
// The *_ref functions are the naive loops the tests compare against.
#pragma once

#include <cstdint>

namespace attn {

// Whether a float product with a packed weight, of depth terms and width columns (the forward:
// in_dim, out_dim; the input gradient: out_dim, in_dim), runs on the FMA tiles: depth and width
// at least 16, at most 64 K weights, and at most 64 columns where the depth is under 64.
bool linear_packed_on_fma_tiles(int64_t depth, int64_t width);
// Whether the float weight gradient (in_dim × out_dim over `rows` terms) runs on the FMA tiles:
// at least 16 terms, at most 256 rows, 16 to 64 columns.
bool linear_weight_grad_on_fma_tiles(int64_t in_dim, int64_t out_dim, int64_t rows);

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
