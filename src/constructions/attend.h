// One softmax attention head over one sequence with the precision model applied: the forward
// every construction shares (ops/attention.h does the attention itself).
//
//   q, k (N, dk), v (N, dv) in arithmetic T (double, or long double for exact constructions);
//   queries carry the temperature (scale 1). With p.bits > 0, q, k and v are each rounded to
//   p-bit fixed point with one scale per tensor (ops/quantize.h); with p.bits_scores the
//   attention op rounds the N × N scores too (AttentionShape::score_bits). A long double
//   head with bits > 0 is evaluated in double (the rounded values are doubles).
//   out (N, dv); probs (N, N) if non-null. causal: query i sees keys 0 … i only.
// Third-order heads: q, k1, k2 (N, dk), v1, v2 (N, dv), probs (N, N·N), the N³ scores rounded
// with bits_scores.
#pragma once

#include <cstdint>
#include <vector>

#include "constructions/construction.h"

namespace attn {

template <class T>
void construction_attend(int64_t N, int64_t dk, int64_t dv, std::vector<T> q, std::vector<T> k,
                         std::vector<T> v, const Precision& p, T* out, T* probs,
                         bool causal = false);

void construction_attend_third_order(int64_t N, int64_t dk, int64_t dv, std::vector<double> q,
                                     std::vector<double> k1, std::vector<double> k2,
                                     std::vector<double> v1, std::vector<double> v2,
                                     const Precision& p, double* out, double* probs);

}  // namespace attn
