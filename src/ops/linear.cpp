// Linear (affine) map over rows: forward/backward on GEMM, and the naive loop references.
//
// Shapes (row-major): inp (rows, in_dim), weight (in_dim, out_dim), bias (out_dim) or null,
// out (rows, out_dim). out = inp · weight + bias.
// Backward: dinp += dout · weightᵀ, dweight += inpᵀ · dout, dbias += Σ_rows dout.
// Float products of narrow shapes (the attention models' φ, projections and ψ, the transformer's
// layers) run on the FMA register tiles of ops/fma_product.h, every other product (and double)
// on OpenBLAS: with at most 64K weights (the packed weight stays in L2) and each of the product's
// width and depth at least 16 (below that most of a tile's lanes or terms would be idle), and for
// a depth under 64 only up to 64 columns (φ's input gradient at m = 32, 8 192 × 32 · 32 × 128,
// took 0.96 ms a call on the tiles against OpenBLAS's 0.88); the weight gradient when it has at
// most 256 rows and 16 to 64 columns (read in place, each of its 32-column panels streams the
// whole batch once per 8 rows). Measured at the shipped models' shapes in
// docs/performance.md#linear-fma-tiles: OpenBLAS's rate at these shapes was 65-92 GFLOP/s, the
// tiles' 85-116. Which path a product takes depends on its shape only, never on the machine, and
// the tiles round alike in every ISA copy (an entry is one fused multiply-add chain over its terms
// in order, added to what out held).
#include "ops/linear.h"

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "ops/blas.h"
#include "ops/fma_product.h"

namespace attn {
namespace {

void linear_check(int64_t rows, int64_t in_dim, int64_t out_dim) {
  ATTN_CHECK(rows >= 0 && in_dim >= 0 && out_dim >= 0,
             "linear: sizes must be non-negative (rows " + std::to_string(rows) + ", in_dim " +
                 std::to_string(in_dim) + ", out_dim " + std::to_string(out_dim) + ")");
}

// Whether a product of depth k and width n with a packed weight (the forward, the input
// gradient) runs on the tiles (see the file comment).
bool tiles_for_packed(int64_t k, int64_t n) {
  return k >= 16 && n >= 16 && k * n <= 65536 && (k >= 64 || n <= 64);
}
// Whether the weight gradient (m × n over `rows` terms) runs on the tiles.
bool tiles_for_weight_grad(int64_t m, int64_t n, int64_t rows) {
  return rows >= 16 && m <= 256 && n >= 16 && n <= 64;
}

std::vector<float>& packed_weight_scratch() {
  thread_local std::vector<float> v;
  return v;
}

// out (rows × n, row stride n) = or += a (rows × k, row-major) · w, w (k × n) given row-major or,
// with trans, as wᵀ (n × k).
void tiles_product(float* out, const float* a, const float* w, bool trans, int64_t rows, int64_t k,
                   int64_t n, bool accumulate) {
  const FmaPanels panels = fma_pack_panels(packed_weight_scratch(), w, trans ? k : n, trans, k, n);
  fma_product(out, n, FmaOperandA{a, k, 1}, panels, rows, k, accumulate);
}

}  // namespace

template <class T>
void linear_forward(T* out, const T* inp, const T* weight, const T* bias, int64_t rows,
                    int64_t in_dim, int64_t out_dim) {
  linear_check(rows, in_dim, out_dim);
  // Broadcast the bias into out, then out += inp · weight in one GEMM.
  for (int64_t r = 0; r < rows; ++r) {
    T* o = out + r * out_dim;
    if (bias) {
      std::copy(bias, bias + out_dim, o);
    } else {
      std::fill(o, o + out_dim, T(0));
    }
  }
  if (in_dim == 0) return;
  if constexpr (std::is_same_v<T, float>) {
    if (tiles_for_packed(in_dim, out_dim))
      return tiles_product(out, inp, weight, false, rows, in_dim, out_dim, true);
  }
  gemm<T>(false, false, rows, out_dim, in_dim, T(1), inp, in_dim, weight, out_dim, T(1), out,
          out_dim);
}

template <class T>
void linear_backward(T* dinp, T* dweight, T* dbias, const T* dout, const T* inp,
                     const T* weight, int64_t rows, int64_t in_dim, int64_t out_dim) {
  linear_check(rows, in_dim, out_dim);
  constexpr bool kFloat = std::is_same_v<T, float>;
  if (dinp && out_dim > 0) {
    // (rows, in_dim) += (rows, out_dim) · (in_dim, out_dim)ᵀ
    if (kFloat && tiles_for_packed(out_dim, in_dim)) {
      if constexpr (kFloat) tiles_product(dinp, dout, weight, true, rows, out_dim, in_dim, true);
    } else {
      gemm<T>(false, true, rows, in_dim, out_dim, T(1), dout, out_dim, weight, out_dim, T(1), dinp,
              in_dim);
    }
  }
  if (dweight && rows > 0) {
    // (in_dim, out_dim) += (rows, in_dim)ᵀ · (rows, out_dim)
    if (kFloat && tiles_for_weight_grad(in_dim, out_dim, rows)) {
      if constexpr (kFloat)
        fma_product(dweight, out_dim, FmaOperandA{inp, 1, in_dim},
                    fma_panels_in_place(dout, out_dim, out_dim), in_dim, rows, true);
    } else {
      gemm<T>(true, false, in_dim, out_dim, rows, T(1), inp, in_dim, dout, out_dim, T(1), dweight,
              out_dim);
    }
  }
  if (dbias) {
    for (int64_t r = 0; r < rows; ++r) {
      const T* g = dout + r * out_dim;
      for (int64_t j = 0; j < out_dim; ++j) dbias[j] += g[j];
    }
  }
}

template <class T>
void linear_backward_input_set(T* dinp, const T* dout, const T* weight, int64_t rows,
                               int64_t in_dim, int64_t out_dim) {
  linear_check(rows, in_dim, out_dim);
  if (out_dim == 0) {
    std::fill(dinp, dinp + rows * in_dim, T(0));
    return;
  }
  // (rows, in_dim) = (rows, out_dim) · (in_dim, out_dim)ᵀ
  if constexpr (std::is_same_v<T, float>) {
    if (tiles_for_packed(out_dim, in_dim))
      return tiles_product(dinp, dout, weight, true, rows, out_dim, in_dim, false);
  }
  gemm<T>(false, true, rows, in_dim, out_dim, T(1), dout, out_dim, weight, out_dim, T(0), dinp,
          in_dim);
}

template <class T>
void linear_forward_ref(T* out, const T* inp, const T* weight, const T* bias, int64_t rows,
                        int64_t in_dim, int64_t out_dim) {
  linear_check(rows, in_dim, out_dim);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < out_dim; ++j) {
      T s = bias ? bias[j] : T(0);
      for (int64_t k = 0; k < in_dim; ++k) s += inp[r * in_dim + k] * weight[k * out_dim + j];
      out[r * out_dim + j] = s;
    }
  }
}

template <class T>
void linear_backward_ref(T* dinp, T* dweight, T* dbias, const T* dout, const T* inp,
                         const T* weight, int64_t rows, int64_t in_dim, int64_t out_dim) {
  linear_check(rows, in_dim, out_dim);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < out_dim; ++j) {
      const T g = dout[r * out_dim + j];
      if (dbias) dbias[j] += g;
      for (int64_t k = 0; k < in_dim; ++k) {
        if (dinp) dinp[r * in_dim + k] += g * weight[k * out_dim + j];
        if (dweight) dweight[k * out_dim + j] += g * inp[r * in_dim + k];
      }
    }
  }
}

template void linear_forward<float>(float*, const float*, const float*, const float*, int64_t,
                                    int64_t, int64_t);
template void linear_forward<double>(double*, const double*, const double*, const double*,
                                     int64_t, int64_t, int64_t);
template void linear_backward<float>(float*, float*, float*, const float*, const float*,
                                     const float*, int64_t, int64_t, int64_t);
template void linear_backward<double>(double*, double*, double*, const double*, const double*,
                                      const double*, int64_t, int64_t, int64_t);
template void linear_backward_input_set<float>(float*, const float*, const float*, int64_t,
                                               int64_t, int64_t);
template void linear_backward_input_set<double>(double*, const double*, const double*, int64_t,
                                                int64_t, int64_t);
template void linear_forward_ref<float>(float*, const float*, const float*, const float*, int64_t,
                                        int64_t, int64_t);
template void linear_forward_ref<double>(double*, const double*, const double*, const double*,
                                         int64_t, int64_t, int64_t);
template void linear_backward_ref<float>(float*, float*, float*, const float*, const float*,
                                         const float*, int64_t, int64_t, int64_t);
template void linear_backward_ref<double>(double*, double*, double*, const double*,
                                          const double*, const double*, int64_t, int64_t,
                                          int64_t);

}  // namespace attn
