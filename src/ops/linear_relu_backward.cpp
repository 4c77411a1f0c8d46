// linear_backward_input_relu (see linear_relu_backward.h): up to tiled_max_out terms a
// register-tiled product per block of rows, the relu mask and the bias sum following on the block
// while it is in cache; above it OpenBLAS's GEMM over all rows, then the mask and the bias sum.
#include "ops/linear_relu_backward.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "ops/attention_tiles.h"
#include "ops/linear.h"

namespace attn {
namespace {

using attention_tiles::product;
using attention_tiles::Span;
using attention_tiles::VecOf;

// Rows per block: 32 rows of in_dim = 128 floats are 16 KiB, well inside L1 with the weight.
constexpr int64_t kBlockRows = 32;

// d[k] = act[k] > 0 ? d[k] : 0 for k < n, and dbias[k] += d[k] (when dbias is set), in vectors
// of VB bytes; each entry on its own, so the width changes no bit.
template <int VB, class T>
ATTN_COPY_BODY void mask_row(T* d, T* dbias, const T* act, int64_t n) {
  using V = typename VecOf<T, VB>::type;
  constexpr int L = static_cast<int>(VB / sizeof(T));
  int64_t k = 0;
  for (; k + L <= n; k += L) {
    V dv, av;
    std::memcpy(&dv, d + k, sizeof(V));
    std::memcpy(&av, act + k, sizeof(V));
    dv = av > V{} ? dv : V{};
    std::memcpy(d + k, &dv, sizeof(V));
    if (dbias) {
      V bv;
      std::memcpy(&bv, dbias + k, sizeof(V));
      bv += dv;
      std::memcpy(dbias + k, &bv, sizeof(V));
    }
  }
  for (; k < n; ++k) {
    d[k] = act[k] > T(0) ? d[k] : T(0);
    if (dbias) dbias[k] += d[k];
  }
}

// The mask and the bias sum alone, on a product already in dinp.
template <int VB, class T>
ATTN_COPY_BODY void mask_body(T* dinp, T* dbias, const T* act, int64_t rows, int64_t in_dim) {
  for (int64_t r = 0; r < rows; ++r)
    mask_row<VB>(dinp + r * in_dim, dbias, act + r * in_dim, in_dim);
}

// wt (out_dim × in_dim) = weightᵀ: the product's right operand, rows contiguous.
template <int VB, class T>
ATTN_COPY_BODY void input_relu_body(T* dinp, T* dbias, const T* dout, const T* wt, const T* act,
                                    int64_t rows, int64_t in_dim, int64_t out_dim) {
  for (int64_t r0 = 0; r0 < rows; r0 += kBlockRows) {
    const int64_t n = std::min(kBlockRows, rows - r0);
    T* d = dinp + r0 * in_dim;
    product<T, VB>(d, in_dim, dout + r0 * out_dim, out_dim, 1, wt, in_dim, n, in_dim, out_dim,
                   T(1), false, Span::all);
    mask_body<VB>(d, dbias, act + r0 * in_dim, n, in_dim);
  }
}

ATTN_TILES_KERNEL(InputReluKernel, input_relu_body)
ATTN_TILES_KERNEL(MaskKernel, mask_body)

}  // namespace

template <class T>
void linear_backward_input_relu(T* dinp, T* dbias, const T* dout, const T* weight, const T* act,
                                int64_t rows, int64_t in_dim, int64_t out_dim,
                                int64_t tiled_max_out) {
  ATTN_CHECK(rows >= 0 && in_dim >= 0 && out_dim >= 0,
             "linear_backward_input_relu: sizes must be non-negative (rows " +
                 std::to_string(rows) + ", in_dim " + std::to_string(in_dim) + ", out_dim " +
                 std::to_string(out_dim) + ")");
  if (rows == 0 || in_dim == 0) return;
  if (out_dim > tiled_max_out) {
    linear_backward_input_set(dinp, dout, weight, rows, in_dim, out_dim);
    attention_tiles::isa_run<MaskKernel>(dinp, dbias, act, rows, in_dim);
    return;
  }
  thread_local std::vector<T> wt;
  wt.resize(static_cast<size_t>(out_dim * in_dim));
  attention_tiles::transpose_rows(wt.data(), weight, in_dim, out_dim, out_dim);
  attention_tiles::isa_run<InputReluKernel>(dinp, dbias, dout, static_cast<const T*>(wt.data()),
                                            act, rows, in_dim, out_dim);
}

template void linear_backward_input_relu<float>(float*, float*, const float*, const float*,
                                                const float*, int64_t, int64_t, int64_t, int64_t);
template void linear_backward_input_relu<double>(double*, double*, const double*, const double*,
                                                 const double*, int64_t, int64_t, int64_t,
                                                 int64_t);

}  // namespace attn
