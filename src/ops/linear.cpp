// Linear (affine) map over rows: forward/backward on the FMA tiles or GEMM, and the naive loop
// references.
//
// Shapes (row-major): inp (rows, in_dim), weight (in_dim, out_dim), bias (out_dim) or null,
// out (rows, out_dim). out = inp · weight + bias.
// Backward: dinp += dout · weightᵀ, dweight += inpᵀ · dout, dbias += Σ_rows dout.
// Float products of narrow shapes (the attention models' φ, projections and ψ, the transformer's
// layers) run on the FMA register tiles of ops/fma_product.h, every other product (and double)
// on OpenBLAS (the rule: linear_packed_on_fma_tiles, linear_weight_grad_on_fma_tiles): at most
// 64 K weights (the packed weight stays in L2), depth and width at least 16 (below that most of
// a tile's lanes or terms would idle), and at a depth under 64 at most 64 columns (φ's input
// gradient at m = 32, 8 192 × 32 · 32 × 128, took 0.96 ms a call on the tiles against OpenBLAS's
// 0.88); the weight gradient at most 256 rows and 16 to 64 columns (read in place, each of its
// panels streams the whole batch once per 8 rows). At φ's shapes alone OpenBLAS made 55-94
// GFLOP/s and the tiles 66-112, each product 1.1-1.6x shorter (1.0-1.6x a call inside a training
// step; docs/performance.md#linear-fma-tiles). The path depends on the shape only, never on the
// machine, and the tiles round alike in every ISA copy (an entry is one fused multiply-add chain
// over its terms in order, added to what out held, or written as it is: linear_forward without a
// bias, linear_backward_input_set); on a CPU without AVX2 and FMA (and on other
// architectures) they run as the generic copy's scalar loops, much slower than OpenBLAS: config
// e's step 3.5x longer in that copy, d's 2.1x (docs/performance.md#linear-fma-tiles).
#include "ops/linear.h"

#include <algorithm>
#include <string>
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

std::vector<float>& packed_weight_scratch() {
  thread_local std::vector<float> v;
  return v;
}

// Where the rule picks the tiles: out (rows × n, row stride n) = or += a (rows × k, row-major) · w,
// w (k × n) given row-major or, with trans, as wᵀ (n × k), and true; else nothing and false (the
// caller's GEMM makes it). Double never takes the tiles.
bool packed_on_tiles(float* out, const float* a, const float* w, bool trans, int64_t rows,
                     int64_t k, int64_t n, bool accumulate) {
  if (!linear_packed_on_fma_tiles(k, n)) return false;
  const FmaPanels panels = fma_pack_panels(packed_weight_scratch(), w, trans ? k : n, trans, k, n);
  fma_product(out, n, FmaOperandA{a, k, 1}, panels, rows, k, accumulate);
  return true;
}
bool packed_on_tiles(double*, const double*, const double*, bool, int64_t, int64_t, int64_t, bool) {
  return false;
}

// dweight (in_dim × out_dim) += inpᵀ · dout on the tiles where the rule picks them (true), both
// read in place; else false.
bool weight_grad_on_tiles(float* dweight, const float* inp, const float* dout, int64_t rows,
                          int64_t in_dim, int64_t out_dim) {
  if (!linear_weight_grad_on_fma_tiles(in_dim, out_dim, rows)) return false;
  fma_product(dweight, out_dim, FmaOperandA{inp, 1, in_dim},
              fma_panels_in_place(dout, out_dim, out_dim), in_dim, rows, true);
  return true;
}
bool weight_grad_on_tiles(double*, const double*, const double*, int64_t, int64_t, int64_t) {
  return false;
}

}  // namespace

bool linear_packed_on_fma_tiles(int64_t depth, int64_t width) {
  return depth >= 16 && width >= 16 && depth * width <= 65536 && (depth >= 64 || width <= 64);
}

bool linear_weight_grad_on_fma_tiles(int64_t in_dim, int64_t out_dim, int64_t rows) {
  return rows >= 16 && in_dim <= 256 && out_dim >= 16 && out_dim <= 64;
}

template <class T>
void linear_forward(T* out, const T* inp, const T* weight, const T* bias, int64_t rows,
                    int64_t in_dim, int64_t out_dim) {
  linear_check(rows, in_dim, out_dim);
  // Without a bias the tiles write out = inp · weight without reading it, instead of adding it to
  // zeros: the same numbers, but where an entry's chain ends at −0 (its terms negative products
  // that round, or are flushed, to −0) out holds −0 where +0 + (−0) gave +0.
  if (!bias && packed_on_tiles(out, inp, weight, false, rows, in_dim, out_dim, false)) return;
  // Broadcast the bias into out, then out += inp · weight in one product (tiles or GEMM).
  for (int64_t r = 0; r < rows; ++r) {
    T* o = out + r * out_dim;
    if (bias) {
      std::copy(bias, bias + out_dim, o);
    } else {
      std::fill(o, o + out_dim, T(0));
    }
  }
  if (in_dim == 0 || packed_on_tiles(out, inp, weight, false, rows, in_dim, out_dim, true)) return;
  gemm<T>(false, false, rows, out_dim, in_dim, T(1), inp, in_dim, weight, out_dim, T(1), out,
          out_dim);
}

template <class T>
void linear_backward(T* dinp, T* dweight, T* dbias, const T* dout, const T* inp,
                     const T* weight, int64_t rows, int64_t in_dim, int64_t out_dim) {
  linear_check(rows, in_dim, out_dim);
  // (rows, in_dim) += (rows, out_dim) · (in_dim, out_dim)ᵀ
  if (dinp && out_dim > 0 &&
      !packed_on_tiles(dinp, dout, weight, true, rows, out_dim, in_dim, true))
    gemm<T>(false, true, rows, in_dim, out_dim, T(1), dout, out_dim, weight, out_dim, T(1), dinp,
            in_dim);
  // (in_dim, out_dim) += (rows, in_dim)ᵀ · (rows, out_dim)
  if (dweight && rows > 0 && !weight_grad_on_tiles(dweight, inp, dout, rows, in_dim, out_dim))
    gemm<T>(true, false, in_dim, out_dim, rows, T(1), inp, in_dim, dout, out_dim, T(1), dweight,
            out_dim);
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
  if (packed_on_tiles(dinp, dout, weight, true, rows, out_dim, in_dim, false)) return;
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
