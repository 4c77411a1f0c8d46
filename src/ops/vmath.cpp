// Vectorised sigmoid, tanh and exp in fixed blocks of 16 (see vmath.h), compiled three times on
// x86-64.
//
// exp(a) for a = −min(|x|, 87): Cody–Waite range reduction a = n·ln2 + r with |r| <= ln2/2 (n
// rounded with the 1.5·2^23 trick, exact in round-to-nearest), exp(r) − 1 by its degree-8 Taylor
// polynomial (truncation < 7e-10 relative), times 2^n built in the exponent bits. tanh uses the
// same reduction for expm1(−2|x|) = 2^n·(e^r − 1) + (2^n − 1), which keeps full relative accuracy
// near 0, and tanh|x| = −expm1/(2 + expm1). Plain float arithmetic the compiler vectorises; the
// rounding trick needs IEEE semantics, i.e. no fast-math, as everywhere here.
//
// Instruction sets: every float kernel is compiled for plain x86-64 (SSE2), with AVX2 (twice the
// width) and with AVX-512 (a block of 16 is one register), and ops/isa.h picks the copy (checked
// once). FMA is deliberately not used (-ffp-contract=off for this file), so no multiply-add is
// contracted and every copy gives the same bits for every input (tested); a result never depends
// on the machine's vector width. On other architectures only the generic copy exists.
#include "ops/vmath.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "ops/isa.h"

namespace attn {
namespace {

constexpr int kBlock = 16;

// Branch-free with integer masks on the bits: a float compare or a conditional float multiply
// may trap, which keeps GCC from if-converting and vectorising the loop under the default
// -ftrapping-math.
constexpr int32_t kAbsMask = 0x7fffffff, kInf = 0x7f800000;

// For a = −min(k·|x|, 87) = n·ln2 + r (see neg_clamped): returns e^r − 1 and sets *scale = 2^n.
ATTN_COPY_BODY float expm1_reduced(float a, float* scale) {
  const float n = (a * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round(a/ln2)
  float r = a - n * 0.693359375f;  // ln2 = 0.693359375 − 2.12194440e-4 (Cody–Waite)
  r = r + n * 2.12194440e-4f;
  float p = 1.0f / 40320;
  p = p * r + 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  *scale = std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
  return p * r;  // e^r − 1
}

ATTN_COPY_BODY float neg_clamped(int32_t ab, float factor) {  // −min(factor·|x|, 87)
  constexpr int32_t kClamp = std::bit_cast<int32_t>(87.0f);
  const float a = std::bit_cast<float>(ab) * factor;
  const int32_t aa = std::bit_cast<int32_t>(a);
  return -std::bit_cast<float>(aa < kClamp ? aa : kClamp);
}

ATTN_COPY_BODY float exp_neg_abs(int32_t ab) {  // exp(−min(|x|, 87))
  float s;
  const float em1 = expm1_reduced(neg_clamped(ab, 1.0f), &s);
  return s * em1 + s;
}

// NaN in, NaN out: picks the input's bits where |x| is a NaN.
ATTN_COPY_BODY float keep_nan(int32_t bits, int32_t y) {
  const int32_t nan = (kInf - (bits & kAbsMask)) >> 31;  // all ones when |x| is a NaN
  return std::bit_cast<float>((bits & nan) | (y & ~nan));
}

struct SigmoidBlock {
  ATTN_COPY_BODY static void run(float* out, const float* in) {
    int32_t bits[kBlock];  // copy first: out may alias in
    for (int k = 0; k < kBlock; ++k) bits[k] = std::bit_cast<int32_t>(in[k]);
    for (int k = 0; k < kBlock; ++k) {
      const float e = exp_neg_abs(bits[k] & kAbsMask);
      const float s = 1.0f / (1.0f + e);  // σ(|x|)
      const float es = e * s;             // σ(−|x|)
      const int32_t neg = bits[k] >> 31;  // all ones when the sign bit is set
      const int32_t y = (std::bit_cast<int32_t>(es) & neg) | (std::bit_cast<int32_t>(s) & ~neg);
      out[k] = keep_nan(bits[k], y);
    }
  }
};

struct TanhBlock {
  ATTN_COPY_BODY static void run(float* out, const float* in) {
    int32_t bits[kBlock];
    for (int k = 0; k < kBlock; ++k) bits[k] = std::bit_cast<int32_t>(in[k]);
    for (int k = 0; k < kBlock; ++k) {
      float s;
      const float p = expm1_reduced(neg_clamped(bits[k] & kAbsMask, 2.0f), &s);
      const float em1 = s * p + (s - 1.0f);      // expm1(−2|x|) ∈ (−1, 0]
      const float t = -em1 / (2.0f + em1);       // tanh|x| (−0 for x = ±0)
      const int32_t sign = bits[k] & ~kAbsMask;  // tanh is odd: the input's sign bit
      out[k] = keep_nan(bits[k], (std::bit_cast<int32_t>(t) & kAbsMask) | sign);
    }
  }
};

// exp(x) for x <= 0 (see vmath.h): exp(−|x|), with −inf mapped to exactly 0 and NaN kept.
struct ExpNonpositiveBlock {
  ATTN_COPY_BODY static void run(float* out, const float* in) {
    constexpr int32_t kNegInf = static_cast<int32_t>(0xff800000u);
    int32_t bits[kBlock];
    for (int k = 0; k < kBlock; ++k) bits[k] = std::bit_cast<int32_t>(in[k]);
    for (int k = 0; k < kBlock; ++k) {
      const int32_t e = std::bit_cast<int32_t>(exp_neg_abs(bits[k] & kAbsMask));
      const int32_t zero = -static_cast<int32_t>(bits[k] == kNegInf);  // all ones for −inf
      out[k] = std::bit_cast<float>(std::bit_cast<int32_t>(keep_nan(bits[k], e)) & ~zero);
    }
  }
};

// Every full block, then the tail padded with zeros: an element's result depends on its value only.
template <class Block>
ATTN_COPY_BODY void blocks(float* out, const float* in, int64_t n) {
  int64_t k = 0;
  for (; k + kBlock <= n; k += kBlock) Block::run(out + k, in + k);
  if (k < n) {
    float x[kBlock] = {}, y[kBlock];
    std::copy(in + k, in + n, x);
    Block::run(y, x);
    std::copy(y, y + (n - k), out + k);
  }
}

template <class Block>
void blocks_generic(float* out, const float* in, int64_t n) {
  blocks<Block>(out, in, n);
}

#if ATTN_HAVE_ISA_COPIES
template <class Block>
[[gnu::target("avx2")]] void blocks_avx2(float* out, const float* in, int64_t n) {
  blocks<Block>(out, in, n);
}
template <class Block>
ATTN_TARGET_AVX512 void blocks_avx512(float* out, const float* in, int64_t n) {
  blocks<Block>(out, in, n);
}
#endif

template <class Block>
void blocks_dispatch(float* out, const float* in, int64_t n) {
#if ATTN_HAVE_ISA_COPIES
  switch (isa_active()) {
    case IsaCopy::avx512: return blocks_avx512<Block>(out, in, n);
    case IsaCopy::avx2: return blocks_avx2<Block>(out, in, n);
    default: break;
  }
#endif
  blocks_generic<Block>(out, in, n);
}

}  // namespace

template <>
void vmath_sigmoid<float>(float* out, const float* in, int64_t n) {
  blocks_dispatch<SigmoidBlock>(out, in, n);
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
  blocks_dispatch<TanhBlock>(out, in, n);
}

template <>
void vmath_tanh<double>(double* out, const double* in, int64_t n) {
  for (int64_t k = 0; k < n; ++k) out[k] = std::tanh(in[k]);
}

template <>
void vmath_exp_nonpositive<float>(float* out, const float* in, int64_t n) {
  blocks_dispatch<ExpNonpositiveBlock>(out, in, n);
}

template <>
void vmath_exp_nonpositive<double>(double* out, const double* in, int64_t n) {
  for (int64_t k = 0; k < n; ++k) out[k] = std::exp(in[k]);
}

}  // namespace attn
