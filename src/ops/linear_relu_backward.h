// The input gradient of a linear layer whose input came out of a relu, in one pass: what an
// MLP block's backward does between two layers (nn/mlp_block.cpp).
//
// Shapes (row-major): dout (rows, out_dim) the gradient at the layer's output, weight (in_dim,
// out_dim) the layer's weight, act (rows, in_dim) the relu's output (or its input: both are
// > 0 at the same entries), dinp (rows, in_dim), dbias (in_dim) or null:
//   dinp = (dout · weightᵀ) ∘ [act > 0]        (set: dinp is not read)
//   dbias += Σ_rows dinp                          (the relu's layer's bias gradient)
// Instead of a GEMM with β = 0 (which zeroes dinp first), a zeroed scratch, the relu's backward
// and the bias sum (four passes over rows × in_dim), the product runs in register tiles of
// ops/attention_tiles.h a block of rows at a time, and the mask and the bias sum follow while
// the block is in cache. Every entry of the product is one accumulator summed over out_dim in
// order (the order of linear_backward_ref), and dbias adds the rows in order, so no ISA copy and
// no thread count changes a bit. (NaN in act: masked to 0, as activation_backward does.)
// Above kLinearReluTiledMaxOut terms (out_dim) the tiles, which do not block for cache, are no
// faster than OpenBLAS (measured by bench_phi_gemms: ahead at 16 terms, behind at 32, even at 64,
// 1.6x behind at 128): there the product is linear_backward_input_set's (OpenBLAS, or the FMA
// tiles where ops/linear.cpp's rule picks them), then the mask and the bias sum in one pass
// (docs/performance.md#relu-backward-fused).
#pragma once

#include <cstdint>

namespace attn {

inline constexpr int64_t kLinearReluTiledMaxOut = 16;

// tiled_max_out: the most terms the tiles take (the default; bench_phi_gemms times both paths
// at one shape by passing 0 or a large value).
template <class T>
void linear_backward_input_relu(T* dinp, T* dbias, const T* dout, const T* weight, const T* act,
                                int64_t rows, int64_t in_dim, int64_t out_dim,
                                int64_t tiled_max_out = kLinearReluTiledMaxOut);

}  // namespace attn
