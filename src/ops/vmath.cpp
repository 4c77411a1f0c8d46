// Vectorised sigmoid and tanh in fixed blocks of 16 (see vmath.h).
//
// Float sigmoid needs exp(−|x|) ∈ (0, 1]: Cody–Waite range reduction a = n·ln2 + r with
// |r| <= ln2/2 (n rounded with the 1.5·2^23 trick, exact in round-to-nearest), exp(r) by its
// degree-7 Taylor polynomial (truncation 2.6e-9 relative), times 2^n built in the exponent
// bits. Plain float arithmetic the compiler vectorises (SSE2 is enough; the rounding trick
// needs IEEE semantics, i.e. no fast-math, as everywhere here); a is clamped at −87
// so 2^n stays a normal number (σ(x) for x < −87 is returned as exp(−87)·(1 − …) ≈ 1.6e-38
// instead of a denormal).
#include "ops/vmath.h"

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace attn {
namespace {

constexpr int kBlock = 16;

// Applies f(out, in) — which handles exactly kBlock values — to every full block, and to the
// tail padded with zeros.
template <class T, class F>
void vmath_blocks(T* out, const T* in, int64_t n, F f) {
  int64_t k = 0;
  for (; k + kBlock <= n; k += kBlock) f(out + k, in + k);
  if (k < n) {
    T x[kBlock] = {}, y[kBlock];
    std::copy(in + k, in + n, x);
    f(y, x);
    std::copy(y, y + (n - k), out + k);
  }
}

// Branch-free with integer masks on the bits: a float compare or a conditional float multiply
// may trap, which keeps GCC from if-converting and vectorising the loop under the default
// -ftrapping-math.
constexpr int32_t kAbsMask = 0x7fffffff, kInf = 0x7f800000;

// exp(−min(|x|, 87)) from the bits of |x| (ab = bits & kAbsMask): Cody–Waite range reduction
// and the degree-7 polynomial. Inlined into the block loops, which the compiler vectorises.
inline float exp_neg_abs(int32_t ab) {
  constexpr int32_t kClamp = std::bit_cast<int32_t>(87.0f);
  const float a = -std::bit_cast<float>(ab < kClamp ? ab : kClamp);  // −min(|x|, 87)
  const float n = (a * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round(a/ln2)
  float r = a - n * 0.693359375f;  // ln2 = 0.693359375 − 2.12194440e-4 (Cody–Waite)
  r = r + n * 2.12194440e-4f;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  return p * std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);  // exp(a)
}

void sigmoid_block_float(float* out, const float* in) {
  int32_t bits[kBlock];  // copy first: out may alias in
  for (int k = 0; k < kBlock; ++k) bits[k] = std::bit_cast<int32_t>(in[k]);
  for (int k = 0; k < kBlock; ++k) {
    const int32_t ab = bits[k] & kAbsMask;  // |x|, NaN > kInf
    const float e = exp_neg_abs(ab);
    const float s = 1.0f / (1.0f + e);  // σ(|x|)
    const float es = e * s;             // σ(−|x|)
    // Blend on the bits: σ(x) = es for x < 0, s otherwise; a NaN x is passed through.
    const int32_t neg = bits[k] >> 31;        // all ones when the sign bit is set
    const int32_t nan = (kInf - ab) >> 31;    // all ones when |x| is a NaN
    const int32_t y = (std::bit_cast<int32_t>(es) & neg) | (std::bit_cast<int32_t>(s) & ~neg);
    out[k] = std::bit_cast<float>((bits[k] & nan) | (y & ~nan));
  }
}

// exp(x) for x <= 0 (see vmath.h): exp(−|x|), with −inf mapped to exactly 0 and NaN kept.
void exp_nonpositive_block_float(float* out, const float* in) {
  constexpr int32_t kNegInf = static_cast<int32_t>(0xff800000u);
  int32_t bits[kBlock];  // copy first: out may alias in
  for (int k = 0; k < kBlock; ++k) bits[k] = std::bit_cast<int32_t>(in[k]);
  for (int k = 0; k < kBlock; ++k) {
    const int32_t ab = bits[k] & kAbsMask;
    const int32_t e = std::bit_cast<int32_t>(exp_neg_abs(ab));
    const int32_t nan = (kInf - ab) >> 31;                           // all ones when x is a NaN
    const int32_t zero = -static_cast<int32_t>(bits[k] == kNegInf);  // all ones for −inf
    out[k] = std::bit_cast<float>(((bits[k] & nan) | (e & ~nan)) & ~zero);
  }
}

void tanh_block_float(float* out, const float* in) {
  using Block = Eigen::Array<float, kBlock, 1>;
  const Block y = Eigen::Map<const Block>(in).tanh();
  Eigen::Map<Block> dst(out);
  dst = y;
}

}  // namespace

template <>
void vmath_sigmoid<float>(float* out, const float* in, int64_t n) {
  vmath_blocks(out, in, n, sigmoid_block_float);
}

template <>
void vmath_sigmoid<double>(double* out, const double* in, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    const double x = in[k];
    const double e = std::exp(-std::abs(x));
    const double s = 1.0 / (1.0 + e);
    out[k] = x >= 0 ? s : e * s;
  }
}

template <>
void vmath_tanh<float>(float* out, const float* in, int64_t n) {
  vmath_blocks(out, in, n, tanh_block_float);
}

template <>
void vmath_tanh<double>(double* out, const double* in, int64_t n) {
  for (int64_t k = 0; k < n; ++k) out[k] = std::tanh(in[k]);
}

template <>
void vmath_exp_nonpositive<float>(float* out, const float* in, int64_t n) {
  vmath_blocks(out, in, n, exp_nonpositive_block_float);
}

template <>
void vmath_exp_nonpositive<double>(double* out, const double* in, int64_t n) {
  for (int64_t k = 0; k < n; ++k) out[k] = std::exp(in[k]);
}

}  // namespace attn
