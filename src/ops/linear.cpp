// Linear (affine) map over rows: forward/backward on GEMM, and the naive loop references.
//
// Shapes (row-major): inp (rows, in_dim), weight (in_dim, out_dim), bias (out_dim) or null,
// out (rows, out_dim). out = inp · weight + bias.
// Backward: dinp += dout · weightᵀ, dweight += inpᵀ · dout, dbias += Σ_rows dout.
#include "ops/linear.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "ops/blas.h"

namespace attn {
namespace {

void linear_check(int64_t rows, int64_t in_dim, int64_t out_dim) {
  ATTN_CHECK(rows >= 0 && in_dim >= 0 && out_dim >= 0,
             "linear: sizes must be non-negative (rows " + std::to_string(rows) + ", in_dim " +
                 std::to_string(in_dim) + ", out_dim " + std::to_string(out_dim) + ")");
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
  if (in_dim > 0) {
    gemm<T>(false, false, rows, out_dim, in_dim, T(1), inp, in_dim, weight, out_dim, T(1), out,
            out_dim);
  }
}

template <class T>
void linear_backward(T* dinp, T* dweight, T* dbias, const T* dout, const T* inp,
                     const T* weight, int64_t rows, int64_t in_dim, int64_t out_dim) {
  linear_check(rows, in_dim, out_dim);
  if (dinp && out_dim > 0) {
    // (rows, in_dim) += (rows, out_dim) · (in_dim, out_dim)ᵀ
    gemm<T>(false, true, rows, in_dim, out_dim, T(1), dout, out_dim, weight, out_dim, T(1), dinp,
            in_dim);
  }
  if (dweight && rows > 0) {
    // (in_dim, out_dim) += (rows, in_dim)ᵀ · (rows, out_dim)
    gemm<T>(true, false, in_dim, out_dim, rows, T(1), inp, in_dim, dout, out_dim, T(1), dweight,
            out_dim);
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
