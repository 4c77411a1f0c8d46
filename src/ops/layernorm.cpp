// Layer normalisation over the last dimension: forward (with mean/rstd cache), backward, and
// the naive reference.
//
// Shapes: inp, out (rows, dim); gamma, beta (dim); mean, rstd (rows).
// norm = (inp − mean) · rstd with rstd = 1/sqrt(var + eps), var the biased variance
// (two passes over the row, so no cancellation); out = norm · gamma + beta.
// Backward (per row, with dnorm = dout · gamma):
//   dinp += rstd · (dnorm − mean(dnorm) − norm · mean(dnorm · norm)),
//   dgamma += dout · norm,  dbeta += dout.
// Null gamma / beta act as 1 / 0; null mean / rstd skip the cache (inference);
// null dinp / dgamma / dbeta are skipped.
#include "ops/layernorm.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"

namespace attn {
namespace {

void layernorm_check(int64_t rows, int64_t dim, double eps) {
  ATTN_CHECK(rows >= 0 && dim >= 1, "layernorm: need rows >= 0 and dim >= 1 (rows " +
                                        std::to_string(rows) + ", dim " + std::to_string(dim) +
                                        ")");
  ATTN_CHECK(eps >= 0, "layernorm: eps must be non-negative, got " + std::to_string(eps));
}

}  // namespace

template <class T>
void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* gamma, const T* beta,
                       int64_t rows, int64_t dim, T eps) {
  layernorm_check(rows, dim, static_cast<double>(eps));
  for (int64_t r = 0; r < rows; ++r) {
    const T* x = inp + r * dim;
    T* o = out + r * dim;
    T m = 0;
    for (int64_t k = 0; k < dim; ++k) m += x[k];
    m /= static_cast<T>(dim);
    T v = 0;
    for (int64_t k = 0; k < dim; ++k) {
      const T d = x[k] - m;
      v += d * d;
    }
    v /= static_cast<T>(dim);
    const T s = T(1) / std::sqrt(v + eps);
    if (gamma && beta) {
      for (int64_t k = 0; k < dim; ++k) o[k] = (x[k] - m) * s * gamma[k] + beta[k];
    } else {
      for (int64_t k = 0; k < dim; ++k) {
        o[k] = (x[k] - m) * s * (gamma ? gamma[k] : T(1)) + (beta ? beta[k] : T(0));
      }
    }
    if (mean) mean[r] = m;
    if (rstd) rstd[r] = s;
  }
}

template <class T>
void layernorm_backward(T* dinp, T* dgamma, T* dbeta, const T* dout, const T* inp,
                        const T* gamma, const T* mean, const T* rstd, int64_t rows, int64_t dim) {
  layernorm_check(rows, dim, 0.0);
  std::vector<T> norm(static_cast<size_t>(dim)), dnorm(static_cast<size_t>(dim));
  for (int64_t r = 0; r < rows; ++r) {
    const T* x = inp + r * dim;
    const T* g = dout + r * dim;
    const T m = mean[r], s = rstd[r];
    for (int64_t k = 0; k < dim; ++k) norm[k] = (x[k] - m) * s;
    if (dbeta) {
      for (int64_t k = 0; k < dim; ++k) dbeta[k] += g[k];
    }
    if (dgamma) {
      for (int64_t k = 0; k < dim; ++k) dgamma[k] += g[k] * norm[k];
    }
    if (!dinp) continue;
    T sum_dn = 0, sum_dn_n = 0;
    for (int64_t k = 0; k < dim; ++k) {
      dnorm[k] = gamma ? g[k] * gamma[k] : g[k];
      sum_dn += dnorm[k];
      sum_dn_n += dnorm[k] * norm[k];
    }
    const T a = sum_dn / static_cast<T>(dim), b = sum_dn_n / static_cast<T>(dim);
    T* dx = dinp + r * dim;
    for (int64_t k = 0; k < dim; ++k) dx[k] += s * (dnorm[k] - a - norm[k] * b);
  }
}

template <class T>
void layernorm_forward_ref(T* out, const T* inp, const T* gamma, const T* beta, int64_t rows,
                           int64_t dim, T eps) {
  layernorm_check(rows, dim, static_cast<double>(eps));
  for (int64_t r = 0; r < rows; ++r) {
    T sum = 0;
    for (int64_t k = 0; k < dim; ++k) sum += inp[r * dim + k];
    const T mu = sum / T(dim);
    T ss = 0;
    for (int64_t k = 0; k < dim; ++k) ss += (inp[r * dim + k] - mu) * (inp[r * dim + k] - mu);
    const T sd = std::sqrt(ss / T(dim) + eps);
    for (int64_t k = 0; k < dim; ++k) {
      const T gk = gamma ? gamma[k] : T(1), bk = beta ? beta[k] : T(0);
      out[r * dim + k] = gk * (inp[r * dim + k] - mu) / sd + bk;
    }
  }
}

template void layernorm_forward<float>(float*, float*, float*, const float*, const float*,
                                       const float*, int64_t, int64_t, float);
template void layernorm_forward<double>(double*, double*, double*, const double*, const double*,
                                        const double*, int64_t, int64_t, double);
template void layernorm_backward<float>(float*, float*, float*, const float*, const float*,
                                        const float*, const float*, const float*, int64_t,
                                        int64_t);
template void layernorm_backward<double>(double*, double*, double*, const double*, const double*,
                                         const double*, const double*, const double*, int64_t,
                                         int64_t);
template void layernorm_forward_ref<float>(float*, const float*, const float*, const float*,
                                           int64_t, int64_t, float);
template void layernorm_forward_ref<double>(double*, const double*, const double*, const double*,
                                            int64_t, int64_t, double);

}  // namespace attn
