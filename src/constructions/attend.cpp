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
namespace {

// Scores rounded to p bits, then softmax and the value average (the one path ops/attention.h
// has no hook for).
template <class T>
void attend_rounded_scores(int64_t N, int64_t dk, int64_t dv, const T* q, const T* k, const T* v,
                           int64_t bits, T* out, T* probs) {
  std::vector<T> s(static_cast<size_t>(N * N));
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < N; ++j) {
      T dot = 0;
      for (int64_t l = 0; l < dk; ++l) dot += q[i * dk + l] * k[j * dk + l];
      s[i * N + j] = dot;
    }
  quantize_fixed_point(s.data(), N * N, bits);
  for (int64_t i = 0; i < N; ++i) {
    T* row = s.data() + i * N;
    const T mx = *std::max_element(row, row + N);
    T sum = 0;
    for (int64_t j = 0; j < N; ++j) sum += (row[j] = std::exp(row[j] - mx));
    for (int64_t j = 0; j < N; ++j) row[j] /= sum;
    for (int64_t c = 0; c < dv; ++c) {
      T acc = 0;
      for (int64_t j = 0; j < N; ++j) acc += row[j] * v[j * dv + c];
      out[i * dv + c] = acc;
    }
    if (probs) std::copy(row, row + N, probs + i * N);
  }
}

}  // namespace

template <class T>
void construction_attend(int64_t N, int64_t dk, int64_t dv, std::vector<T> q, std::vector<T> k,
                         std::vector<T> v, const Precision& p, T* out, T* probs) {
  quantize_fixed_point(q.data(), N * dk, p.bits);
  quantize_fixed_point(k.data(), N * dk, p.bits);
  quantize_fixed_point(v.data(), N * dv, p.bits);
  if (p.bits > 0 && p.bits_scores) {
    attend_rounded_scores(N, dk, dv, q.data(), k.data(), v.data(), p.bits, out, probs);
    return;
  }
  const AttentionShape shape{1, N, 1, dk, dv, false};
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
  const ThirdOrderShape shape{1, N, 1, dk, dv, false};
  third_order_forward<double>(out, probs, q.data(), k1.data(), k2.data(), v1.data(), v2.data(),
                              1.0, shape);
}

template void construction_attend<double>(int64_t, int64_t, int64_t, std::vector<double>,
                                          std::vector<double>, std::vector<double>,
                                          const Precision&, double*, double*);
template void construction_attend<long double>(int64_t, int64_t, int64_t,
                                               std::vector<long double>, std::vector<long double>,
                                               std::vector<long double>, const Precision&,
                                               long double*, long double*);

}  // namespace attn
