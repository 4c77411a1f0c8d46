// p-bit fixed-point quantisation (spec sanford2023 §1.3, §7 A4): the precision model of
// `model.bits` for constructions and trained attention alike.
//
// A tensor of n values is stored as sign + (p − 1) magnitude bits with one shared scale:
//   scale = max_k |x_k| / L,  L = 2^{p−1} − 1 levels,   x_k ← round(x_k / scale) · scale.
// So every value is one of 2L + 1 points, the largest |x_k| is kept exactly, and the
// rounding error of each value is at most scale / 2 = max|x| / (2L). bits = 0 means exact
// (no rounding); bits must be 0 or in [2, 53] (one bit leaves no magnitude levels, more
// than 53 exceeds a double's mantissa). A zero tensor stays zero.
// "Per tensor" is per sequence in attnlab: every sample's queries (or keys, values, scores)
// get their own scale, so a prediction never depends on the other samples of its batch.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "core/error.h"

namespace attn {

// Rejects a bits value outside {0} ∪ [2, 53] with a message naming `what` (e.g. "model.bits").
inline void quantize_check_bits(int64_t bits, const std::string& what) {
  ATTN_CHECK(bits == 0 || (bits >= 2 && bits <= 53),
             what + " = " + std::to_string(bits) +
                 " is not a precision: use 0 (exact) or 2..53 bits (sign + bits-1 magnitude bits)");
}

// Number of magnitude levels L = 2^{bits−1} − 1 of a `bits`-bit fixed-point number.
inline double quantize_levels(int64_t bits) {
  return std::ldexp(1.0, static_cast<int>(bits) - 1) - 1.0;
}

// Rounds x[0..n) in place to `bits`-bit fixed point with one shared scale; returns the scale
// (0 for an all-zero tensor or bits = 0). Strided: element k is x[k * stride].
template <class T>
T quantize_fixed_point(T* x, int64_t n, int64_t bits, int64_t stride = 1) {
  if (bits == 0 || n == 0) return T(0);
  T max_abs = 0;
  for (int64_t k = 0; k < n; ++k)
    max_abs = std::max(max_abs, static_cast<T>(std::fabs(x[k * stride])));
  if (!(max_abs > 0)) return T(0);
  const T levels = static_cast<T>(quantize_levels(bits));
  const T scale = max_abs / levels;
  for (int64_t k = 0; k < n; ++k) {
    T& v = x[k * stride];
    // Clamp guards the largest value against rounding of v / scale slightly above L.
    const T level = std::clamp(std::nearbyint(v / scale), -levels, levels);
    v = level * scale;
  }
  return scale;
}

}  // namespace attn
