// The first layer on [s_b; x_{b,i}] rows (see state_concat_linear.h).
#include "nn/state_concat_linear.h"

#include <algorithm>

#include "ops/blas.h"
#include "ops/linear.h"
#include "ops/sparse_relu_head.h"

namespace attn {

template <class T>
void state_concat_linear_forward(T* z, T* zs, const T* s, const T* x, const SparseRows<T>* xs,
                                 const T* w, const T* bias, const StateConcatShape& sh) {
  const int64_t B = sh.B, N = sh.N, F = sh.F, C = sh.C, n = sh.n;
  if (B == 0 || N == 0 || n == 0) return;
  linear_forward(zs, s, w, bias, B, F, n);  // zs = bias + s · w[0:F], one row per sequence
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
void state_concat_sequence_sums(T* g_sum, const T* g, const StateConcatShape& sh) {
  const int64_t N = sh.N, n = sh.n;
  for (int64_t b = 0; b < sh.B; ++b) {
    T* sum = g_sum + b * n;
    std::fill(sum, sum + n, T(0));
    for (int64_t i = 0; i < N; ++i) {
      const T* row = g + (b * N + i) * n;
      for (int64_t j = 0; j < n; ++j) sum[j] += row[j];
    }
  }
}

template <class T>
void state_concat_linear_backward(T* dw, const T* g, const T* g_sum, const T* s, const T* x,
                                  const SparseRows<T>* xs, const StateConcatShape& sh) {
  const int64_t B = sh.B, N = sh.N, F = sh.F, C = sh.C, n = sh.n;
  if (B == 0 || N == 0 || n == 0) return;
  // The weight gradients of the two parts as linear layers: of the states' with g_sum, of the
  // tokens' with every row's g.
  linear_backward<T>(nullptr, dw, nullptr, g_sum, s, nullptr, B, F, n);
  T* dwx = dw + F * n;
  if (xs) {
    sparse_rows_t_times(dwx, *xs, g, n, n);
  } else {
    linear_backward<T>(nullptr, dwx, nullptr, g, x, nullptr, B * N, C, n);
  }
}

template <class T>
void state_concat_relu_head_forward(T* y, T* zs, const T* s, const SparseRows<T>& xs, const T* w,
                                    const T* bias, const T* w1, const T* b1,
                                    const StateConcatShape& sh, int64_t n2) {
  linear_forward(zs, s, w, bias, sh.B, sh.F, sh.n);  // one row per sequence
  sparse_relu_head_forward(y, zs, xs, w + sh.F * sh.n, w1, b1,
                           SparseReluHeadShape{sh.B, sh.N, sh.n, n2});
}

template <class T>
void state_concat_relu_head_backward(T* g_sum, T* dw, T* db, T* dw1, T* db1, const T* dy,
                                     const T* zs, const T* s, const SparseRows<T>& xs, const T* w,
                                     const T* w1, const StateConcatShape& sh, int64_t n2) {
  const int64_t off = sh.F * sh.n;  // w[F:F+C], the token part
  sparse_relu_head_backward(g_sum, dw + off, db, dw1, db1, dy, zs, xs, w + off, w1,
                            SparseReluHeadShape{sh.B, sh.N, sh.n, n2});
  linear_backward<T>(nullptr, dw, nullptr, g_sum, s, nullptr, sh.B, sh.F, sh.n);  // the states'
}

template void state_concat_linear_forward<float>(float*, float*, const float*, const float*,
                                                 const SparseRows<float>*, const float*,
                                                 const float*, const StateConcatShape&);
template void state_concat_linear_forward<double>(double*, double*, const double*, const double*,
                                                  const SparseRows<double>*, const double*,
                                                  const double*, const StateConcatShape&);
template void state_concat_sequence_sums<float>(float*, const float*, const StateConcatShape&);
template void state_concat_sequence_sums<double>(double*, const double*, const StateConcatShape&);
template void state_concat_linear_backward<float>(float*, const float*, const float*,
                                                  const float*, const float*,
                                                  const SparseRows<float>*,
                                                  const StateConcatShape&);
template void state_concat_linear_backward<double>(double*, const double*, const double*,
                                                   const double*, const double*,
                                                   const SparseRows<double>*,
                                                   const StateConcatShape&);
#define ATTN_STATE_CONCAT_HEAD_INSTANTIATE(T)                                                   \
  template void state_concat_relu_head_forward<T>(T*, T*, const T*, const SparseRows<T>&,      \
                                                  const T*, const T*, const T*, const T*,      \
                                                  const StateConcatShape&, int64_t);           \
  template void state_concat_relu_head_backward<T>(T*, T*, T*, T*, T*, const T*, const T*,     \
                                                   const T*, const SparseRows<T>&, const T*,   \
                                                   const T*, const StateConcatShape&, int64_t);
ATTN_STATE_CONCAT_HEAD_INSTANTIATE(float)
ATTN_STATE_CONCAT_HEAD_INSTANTIATE(double)
#undef ATTN_STATE_CONCAT_HEAD_INSTANTIATE

}  // namespace attn
