// The shared forward of the constructions: quantise, then ops/attention.h.
#include "constructions/attend.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "ops/attention.h"
#include "ops/quantize.h"
#include "ops/third_order_attention.h"

namespace attn {
template <class T>
void construction_attend(int64_t N, int64_t dk, int64_t dv, std::vector<T> q, std::vector<T> k,
                         std::vector<T> v, const Precision& p, T* out, T* probs, bool causal) {
  if constexpr (!std::is_same_v<T, double>) {
    // Rounded to at most 53 bits, the values are doubles: evaluate in double, where the
    // attention op can round the scores too. Long double is for exact (bits = 0) evaluation.
    if (p.bits > 0) {
      std::vector<double> qd(q.begin(), q.end()), kd(k.begin(), k.end()), vd(v.begin(), v.end());
      std::vector<double> od(static_cast<size_t>(N * dv)),
          pd(probs ? static_cast<size_t>(N * N) : 0);
      construction_attend<double>(N, dk, dv, std::move(qd), std::move(kd), std::move(vd), p,
                                  od.data(), probs ? pd.data() : nullptr, causal);
      std::copy(od.begin(), od.end(), out);
      if (probs) std::copy(pd.begin(), pd.end(), probs);
      return;
    }
  }
  quantize_fixed_point(q.data(), N * dk, p.bits);
  quantize_fixed_point(k.data(), N * dk, p.bits);
  quantize_fixed_point(v.data(), N * dv, p.bits);
  AttentionShape shape{1, N, 1, dk, dv, false};
  shape.causal = causal;
  if (p.bits > 0 && p.bits_scores) shape.score_bits = p.bits;
  std::vector<T> local;
  if (!probs) {
    local.resize(static_cast<size_t>(N * N));
    probs = local.data();
  }
  if constexpr (std::is_same_v<T, double>)
    attention_forward<double>(out, probs, q.data(), k.data(), v.data(), 1.0, shape);
  else
    attention_forward_ref<T>(out, probs, q.data(), k.data(), v.data(), T(1), shape);
}

void construction_attend_third_order(int64_t N, int64_t dk, int64_t dv, std::vector<double> q,
                                     std::vector<double> k1, std::vector<double> k2,
                                     std::vector<double> v1, std::vector<double> v2,
                                     const Precision& p, double* out, double* probs) {
  for (auto* t : {&q, &k1, &k2}) quantize_fixed_point(t->data(), N * dk, p.bits);
  for (auto* t : {&v1, &v2}) quantize_fixed_point(t->data(), N * dv, p.bits);
  std::vector<double> local;
  if (!probs) {
    local.resize(static_cast<size_t>(N * N * N));
    probs = local.data();
  }
  ThirdOrderShape shape{1, N, 1, dk, dv, false};
  if (p.bits > 0 && p.bits_scores) shape.score_bits = p.bits;
  third_order_forward<double>(out, probs, q.data(), k1.data(), k2.data(), v1.data(), v2.data(),
                              1.0, shape);
}

template void construction_attend<double>(int64_t, int64_t, int64_t, std::vector<double>,
                                          std::vector<double>, std::vector<double>,
                                          const Precision&, double*, double*, bool);
template void construction_attend<long double>(int64_t, int64_t, int64_t,
                                               std::vector<long double>, std::vector<long double>,
                                               std::vector<long double>, const Precision&,
                                               long double*, long double*, bool);

}  // namespace attn
