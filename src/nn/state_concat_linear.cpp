// The first layer on [s_b; x_{b,i}] rows (see state_concat_linear.h).
#include "nn/state_concat_linear.h"

#include <algorithm>

#include "ops/blas.h"

namespace attn {

template <class T>
void state_concat_linear_forward(T* z, T* zs, const T* s, const T* x, const SparseRows<T>* xs,
                                 const T* w, const T* bias, const StateConcatShape& sh) {
  const int64_t B = sh.B, N = sh.N, F = sh.F, C = sh.C, n = sh.n;
  if (B == 0 || N == 0 || n == 0) return;
  // zs = bias + s · w[0:F], one row per sequence.
  for (int64_t b = 0; b < B; ++b) {
    T* row = zs + b * n;
    if (bias) {
      std::copy(bias, bias + n, row);
    } else {
      std::fill(row, row + n, T(0));
    }
  }
  if (F > 0) gemm<T>(false, false, B, n, F, T(1), s, F, w, n, T(1), zs, n);
  const T* wx = w + F * n;
  if (xs) {
    for (int64_t b = 0; b < B; ++b)  // z[b, i] = zs[b] + x_{b,i} · wx on x's non-zeros
      sparse_rows_times(z + b * N * n, n, *xs, wx, n, SparseRowSet{b * N, N, 1}, zs + b * n);
    return;
  }
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < N; ++i) std::copy(zs + b * n, zs + (b + 1) * n, z + (b * N + i) * n);
  if (C > 0) gemm<T>(false, false, B * N, n, C, T(1), x, C, wx, n, T(1), z, n);
}

template <class T>
void state_concat_linear_backward(T* dw, const T* g, const T* g_sum, const T* s, const T* x,
                                  const SparseRows<T>* xs, const StateConcatShape& sh) {
  const int64_t B = sh.B, N = sh.N, F = sh.F, C = sh.C, n = sh.n;
  if (B == 0 || N == 0 || n == 0) return;
  if (F > 0) gemm<T>(true, false, F, n, B, T(1), s, F, g_sum, n, T(1), dw, n);
  T* dwx = dw + F * n;
  if (xs) {
    sparse_rows_t_times(dwx, *xs, g, n, n);
  } else if (C > 0) {
    gemm<T>(true, false, C, n, B * N, T(1), x, C, g, n, T(1), dwx, n);
  }
}

template void state_concat_linear_forward<float>(float*, float*, const float*, const float*,
                                                 const SparseRows<float>*, const float*,
                                                 const float*, const StateConcatShape&);
template void state_concat_linear_forward<double>(double*, double*, const double*, const double*,
                                                  const SparseRows<double>*, const double*,
                                                  const double*, const StateConcatShape&);
template void state_concat_linear_backward<float>(float*, const float*, const float*,
                                                  const float*, const float*,
                                                  const SparseRows<float>*,
                                                  const StateConcatShape&);
template void state_concat_linear_backward<double>(double*, const double*, const double*,
                                                   const double*, const double*,
                                                   const SparseRows<double>*,
                                                   const StateConcatShape&);

}  // namespace attn
