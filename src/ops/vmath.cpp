// Vectorised sigmoid, tanh and exp (see vmath.h), compiled three times on x86-64.
//
// exp(a) for a = −min(|x|, 87): Cody–Waite range reduction a = n·ln2 + r with |r| <= ln2/2 (n
// rounded with the 1.5·2^23 trick, exact in round-to-nearest), exp(r) − 1 by its degree-8 Taylor
// polynomial (truncation < 7e-10 relative), times 2^n built in the exponent bits. tanh uses the
// same reduction for expm1(−2|x|) = 2^n·(e^r − 1) + (2^n − 1), which keeps full relative accuracy
// near 0, and tanh|x| = −expm1/(2 + expm1). Written on GCC vector types, several vectors at a time
// (see Vecs); the rounding trick needs IEEE semantics, i.e. no fast-math, as everywhere here.
//
// Instruction sets: every float kernel is compiled for plain x86-64 (SSE2), with AVX2 (twice the
// width) and with AVX-512 (16 floats a register), and ops/isa.h picks the copy (checked once).
// Multiply-adds are fused (ops/fused_madd.h: FMA instructions in the AVX2 and AVX-512 copies,
// target avx2 + fma; in the generic x86-64 copy an exact emulation through double), and nothing
// else is: -ffp-contract=off for this file, so the compiler contracts no other a·b + c. So every
// copy gives the same bits for every input (tested); a result never depends on the machine's vector
// width. On other architectures only the generic copy exists (with FMA instructions where the
// target has them, as aarch64 does). The fused multiply-adds since 2026-12-07 (before, a multiply
// then an add, two roundings): the kernels 1.25–1.45× faster on a Zen 4 core, their results
// slightly more accurate (docs/performance.md#vmath-fma).
#include "ops/vmath.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "ops/fused_madd.h"
#include "ops/isa.h"

namespace attn {
namespace {

// The copies' vectors: VB bytes of floats and of int32 (64 in the AVX-512 copy, 32 in the AVX2
// one, 16 in the generic one). The functions below take U of them at once: U independent chains
// of about 30 operations in each iteration of blocks() (4 in the AVX-512 copy, 2 in the others).
// Measured 1.03–1.19× faster than the 16-float blocks before (docs/performance.md, "More work in
// flight"); GCC still emits each vector's polynomial in one run, so which difference pays (more
// independent work per iteration, or no copy of the inputs' bits through the stack) is not known.
template <int VB>
struct Vecs {
  typedef float F __attribute__((vector_size(VB)));
  typedef int32_t I __attribute__((vector_size(VB)));
  static constexpr int kLanes = VB / 4;
};

// Branch-free with integer masks on the bits: a float compare or a conditional float multiply
// may trap, which keeps GCC from if-converting and vectorising under the default -ftrapping-math.
constexpr int32_t kAbsMask = 0x7fffffff, kInf = 0x7f800000;

#define ATTN_EACH _Pragma("GCC unroll 8") for (int u = 0; u < U; ++u)

// a·b + c rounded once (ops/fused_madd.h): an FMA instruction in the AVX2 and AVX-512 copies (and
// in a generic copy whose target has FMA), the exact emulation in the generic x86-64 one. The copy
// is known by its vector width (16 bytes only in the generic copy). These return vectors by value:
// always inlined, never through the ABI GCC's -Wpsabi warns about (it warns at the end of the file,
// so it is off for the rest of it).
#pragma GCC diagnostic ignored "-Wpsabi"
template <class F>
ATTN_COPY_BODY F lanes_of(const F& x) {
  return x;
}
template <class F>
ATTN_COPY_BODY F lanes_of(float x) {
  return F{} + x;  // a constant: folded at compile time
}
template <class F, class B, class C>
ATTN_COPY_BODY F madd(const F& a, const B& b, const C& c) {
  return fused_multiply_add_lanes<(sizeof(F) > 16 || kGenericCopyHasFma)>(a, lanes_of<F>(b),
                                                                          lanes_of<F>(c));
}

// For a = −min(k·|x|, 87) = n·ln2 + r (see neg_clamped): em1 = e^r − 1 and scale = 2^n.
template <class F, class I, int U>
ATTN_COPY_BODY void expm1_reduced(const F (&a)[U], F (&em1)[U], F (&scale)[U]) {
  F n[U], r[U], p[U];
  ATTN_EACH n[u] = madd(a[u], 1.44269504088896341f, 12582912.0f) - 12582912.0f;  // round(a/ln2)
  ATTN_EACH r[u] =
      madd(n[u], -0.693359375f, a[u]);  // ln2 = 0.693359375 − 2.12194440e-4 (Cody–Waite)
  ATTN_EACH r[u] = madd(n[u], 2.12194440e-4f, r[u]);
  ATTN_EACH p[u] = madd(r[u], 1.0f / 40320, 1.0f / 5040);
  ATTN_EACH p[u] = madd(p[u], r[u], 1.0f / 720);
  ATTN_EACH p[u] = madd(p[u], r[u], 1.0f / 120);
  ATTN_EACH p[u] = madd(p[u], r[u], 1.0f / 24);
  ATTN_EACH p[u] = madd(p[u], r[u], 1.0f / 6);
  ATTN_EACH p[u] = madd(p[u], r[u], 0.5f);
  ATTN_EACH p[u] = madd(p[u], r[u], 1.0f);
  ATTN_EACH scale[u] = (F)((__builtin_convertvector(n[u], I) + 127) << 23);
  ATTN_EACH em1[u] = p[u] * r[u];  // e^r − 1
}

// −min(factor·|x|, 87) from ab = |x|'s bits.
template <class F, class I, int U>
ATTN_COPY_BODY void neg_clamped(const I (&ab)[U], float factor, F (&out)[U]) {
  constexpr int32_t kClamp = std::bit_cast<int32_t>(87.0f);
  ATTN_EACH {
    const I aa = (I)((F)ab[u] * factor);
    out[u] = -(F)(aa < kClamp ? aa : kClamp);
  }
}

// exp(−min(|x|, 87)) from ab = |x|'s bits.
template <class F, class I, int U>
ATTN_COPY_BODY void exp_neg_abs(const I (&ab)[U], F (&out)[U]) {
  F a[U], em1[U], s[U];
  neg_clamped<F, I, U>(ab, 1.0f, a);
  expm1_reduced<F, I, U>(a, em1, s);
  ATTN_EACH out[u] = madd(s[u], em1[u], s[u]);
}

// NaN in, NaN out: out = the input's bits where |x| is a NaN, else y. (Vectors by reference: by
// value, 32- and 64-byte vectors would change the ABI between the copies, GCC's -Wpsabi.)
template <class I>
ATTN_COPY_BODY void keep_nan(const I& bits, const I& y, I& out) {
  const I nan = (kInf - (bits & kAbsMask)) >> 31;  // all ones when |x| is a NaN
  out = (bits & nan) | (y & ~nan);
}

// The three functions on U vectors: bits are the inputs' bits, ab the bits of their |x|.

template <class F, class I, int U>
struct SigmoidBlock {
  ATTN_COPY_BODY static void run(const I (&bits)[U], const I (&ab)[U], I (&out)[U]) {
    F e[U];
    exp_neg_abs<F, I, U>(ab, e);
    ATTN_EACH {
      const F s = 1.0f / (1.0f + e[u]);  // σ(|x|)
      const F es = e[u] * s;             // σ(−|x|)
      const I neg = bits[u] >> 31;       // all ones when the sign bit is set
      keep_nan(bits[u], ((I)es & neg) | ((I)s & ~neg), out[u]);
    }
  }
};

template <class F, class I, int U>
struct TanhBlock {
  ATTN_COPY_BODY static void run(const I (&bits)[U], const I (&ab)[U], I (&out)[U]) {
    F a[U], p[U], s[U];
    neg_clamped<F, I, U>(ab, 2.0f, a);
    expm1_reduced<F, I, U>(a, p, s);
    ATTN_EACH {
      const F em1 = madd(s[u], p[u], s[u] - 1.0f);  // expm1(−2|x|) ∈ (−1, 0]
      const F t = -em1 / (2.0f + em1);            // tanh|x| (−0 for x = ±0)
      const I sign = bits[u] & ~kAbsMask;         // tanh is odd: the input's sign bit
      keep_nan(bits[u], ((I)t & kAbsMask) | sign, out[u]);
    }
  }
};

// exp(x) for x <= 0 (see vmath.h): exp(−|x|), with −inf mapped to exactly 0 and NaN kept.
// A −inf (a softmax's masked entry) goes through the polynomial as 0, not as the clamp's −87:
// its result is replaced by 0 anyway. (Before the last step was fused, 2026-12-07, the product
// 2^n · (e^r − 1) at −87 was subnormal, which cost a microcode assist per vector on Intel cores:
// 7× slower rows with one entry in six masked, docs/performance.md#exp-subnormal. Fused, no
// intermediate is subnormal; the masking costs two instructions and was kept.) No other input's
// result changes.
template <class F, class I, int U>
struct ExpNonpositiveBlock {
  ATTN_COPY_BODY static void run(const I (&bits)[U], const I (&ab)[U], I (&out)[U]) {
    constexpr int32_t kNegInf = static_cast<int32_t>(0xff800000u);
    I neg_inf[U], ab_finite[U];
    F e[U];
    ATTN_EACH {
      neg_inf[u] = bits[u] == kNegInf;  // all ones at −inf
      ab_finite[u] = ab[u] & ~neg_inf[u];
    }
    exp_neg_abs<F, I, U>(ab_finite, e);
    ATTN_EACH {
      keep_nan(bits[u], (I)e[u], out[u]);
      out[u] &= ~neg_inf[u];  // −inf: exactly 0
    }
  }
};

#undef ATTN_EACH

// U vectors from in to out (all loaded before any is stored: out may alias in).
template <template <class, class, int> class Block, int VB, int U>
ATTN_COPY_BODY void run_group(float* out, const float* in) {
  using F = typename Vecs<VB>::F;
  using I = typename Vecs<VB>::I;
  constexpr int L = Vecs<VB>::kLanes;
  I x[U], ab[U], y[U];
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) {
    std::memcpy(&x[u], in + u * L, sizeof(I));
    ab[u] = x[u] & kAbsMask;
  }
  Block<F, I, U>::run(x, ab, y);
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) std::memcpy(out + u * L, &y[u], sizeof(I));
}

// Groups of U vectors, then single vectors, then the tail padded with zeros: an element's result
// depends on its value only.
template <template <class, class, int> class Block, int VB, int U>
ATTN_COPY_BODY void blocks(float* out, const float* in, int64_t n) {
  constexpr int L = Vecs<VB>::kLanes;
  int64_t k = 0;
  for (; k + U * L <= n; k += U * L) run_group<Block, VB, U>(out + k, in + k);
  for (; k + L <= n; k += L) run_group<Block, VB, 1>(out + k, in + k);
  if (k < n) {
    float x[L] = {}, y[L];
    std::copy(in + k, in + n, x);
    run_group<Block, VB, 1>(y, x);
    std::copy(y, y + (n - k), out + k);
  }
}

// The copies: 16-byte vectors in the generic one, 32 in the AVX2 one (16 registers: two chains),
// 64 in the AVX-512 one (32 registers: four chains).
template <template <class, class, int> class Block>
void blocks_generic(float* out, const float* in, int64_t n) {
  blocks<Block, 16, 2>(out, in, n);
}

#if ATTN_HAVE_ISA_COPIES
template <template <class, class, int> class Block>
ATTN_TARGET_AVX2_FMA void blocks_avx2(float* out, const float* in, int64_t n) {
  blocks<Block, 32, 2>(out, in, n);
}
template <template <class, class, int> class Block>
ATTN_TARGET_AVX512 void blocks_avx512(float* out, const float* in, int64_t n) {
  blocks<Block, 64, 4>(out, in, n);
}
#endif

template <template <class, class, int> class Block>
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
