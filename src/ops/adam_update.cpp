// adam_update (see adam_update.h): the element loop in each ISA copy, and its scalar reference.
#include "ops/adam_update.h"

#include <cmath>

#include "ops/attention_tiles.h"

namespace attn {
namespace {

template <bool Decoupled, class T>
ATTN_COPY_BODY void adam_loop(T* __restrict params, const T* __restrict grads, T* __restrict m,
                              T* __restrict v, int64_t n, const AdamScalars<T>& s) {
  const T b1 = s.b1, b2 = s.b2, step_size = s.step_size, inv = s.inv_sqrt_bc2, eps = s.eps;
  const T wd = s.wd, decay = s.decay;
  for (int64_t i = 0; i < n; ++i) {
    T g = grads[i];
    if constexpr (Decoupled) {
      params[i] *= decay;
    } else {
      g += wd * params[i];
    }
    m[i] = b1 * m[i] + (1 - b1) * g;
    v[i] = b2 * v[i] + (1 - b2) * g * g;
    params[i] -= step_size * m[i] / (std::sqrt(v[i]) * inv + eps);
  }
}

template <int VB, class T>
ATTN_COPY_BODY void adam_body(T* params, const T* grads, T* m, T* v, int64_t n,
                              const AdamScalars<T>* s) {
  if (s->decoupled) {
    adam_loop<true>(params, grads, m, v, n, *s);
  } else {
    adam_loop<false>(params, grads, m, v, n, *s);
  }
}

ATTN_TILES_KERNEL(AdamKernel, adam_body)

}  // namespace

template <class T>
void adam_update(T* params, const T* grads, T* m, T* v, int64_t n, const AdamScalars<T>& s) {
  attention_tiles::isa_run<AdamKernel>(params, grads, m, v, n, &s);
}

template <class T>
void adam_update_ref(T* params, const T* grads, T* m, T* v, int64_t n, const AdamScalars<T>& s) {
  for (int64_t i = 0; i < n; ++i) {
    T g = grads[i];
    if (s.decoupled) {
      params[i] *= s.decay;
    } else {
      g += s.wd * params[i];
    }
    m[i] = s.b1 * m[i] + (1 - s.b1) * g;
    v[i] = s.b2 * v[i] + (1 - s.b2) * g * g;
    params[i] -= s.step_size * m[i] / (std::sqrt(v[i]) * s.inv_sqrt_bc2 + s.eps);
  }
}

template void adam_update<float>(float*, const float*, float*, float*, int64_t,
                                 const AdamScalars<float>&);
template void adam_update<double>(double*, const double*, double*, double*, int64_t,
                                  const AdamScalars<double>&);
template void adam_update_ref<float>(float*, const float*, float*, float*, int64_t,
                                     const AdamScalars<float>&);
template void adam_update_ref<double>(double*, const double*, double*, double*, int64_t,
                                      const AdamScalars<double>&);

}  // namespace attn
