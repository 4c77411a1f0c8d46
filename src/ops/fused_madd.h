// fma(a, b, c) = a·b + c rounded once, as every ISA copy of ops/isa.h makes it, so that a kernel
// which multiplies and adds in one gives the same bits in all of them: one FMA instruction where
// the copy's target has FMA (the AVX2 copy, target avx2 + fma; the AVX-512 one; a build for this
// CPU, -march=native; aarch64, where FMA is part of the base architecture), else the generic x86-64
// copy's exact emulation below. Scalars and GCC vectors of float (ops/vmath.cpp,
// ops/fma_product.cpp): a vector's lanes one by one through __builtin_fmaf, which GCC compiles into
// vector FMA instructions at -O2 and above in a copy whose target has FMA (not always: in each of
// vmath's three functions it left one multiply-add as scalar FMAs lane by lane; at -O1, as the
// sanitizer build compiles, scalar FMAs throughout; the same bits, slower).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ops/isa.h"

namespace attn {

// Whether the generic copy's target has FMA instructions (see above); the AVX2 and AVX-512 copies
// always do.
#if defined(__FP_FAST_FMAF) || defined(__FMA__) || defined(__ARM_FEATURE_FMA)
inline constexpr bool kGenericCopyHasFma = true;
#else
inline constexpr bool kGenericCopyHasFma = false;
#endif

// fma(a, b, c) for float. Hardware = true: the instruction (call it only from a copy whose target
// has FMA: elsewhere GCC calls libm's fmaf, exact but slow). Hardware = false: a·b is exact in
// double (24 + 24 significant bits), so a·b + c in double is the exact value rounded once, to the
// nearest double; rounding that double to float gives fma's float unless it lies exactly halfway
// between two floats (its 29 low significand bits 1 then 28 zeros), where the first rounding may
// have decided the tie, or in the float's subnormal range (other low bits): std::fma decides those
// few. An exact 0 is 0 either way, with the same sign rules. (Callers' files are compiled with
// -ffp-contract=off: the double multiply and add are not fused. Without FMA instructions std::fma
// is a call into libm: config l's step took 1.3 s in the generic copy with it, 0.64 s with this.)
template <bool Hardware>
ATTN_COPY_BODY float fused_multiply_add(float a, float b, float c) {
  if constexpr (Hardware) {
    return __builtin_fmaf(a, b, c);
  } else {
    const double r = double(a) * double(b) + double(c);
    const uint64_t bits = std::bit_cast<uint64_t>(r);
    constexpr uint64_t kLow = (uint64_t(1) << 29) - 1, kHalf = uint64_t(1) << 28;
    if ((bits & kLow) == kHalf ||
        (r != 0 && std::abs(r) < double(std::numeric_limits<float>::min())))
      return std::fma(a, b, c);
    return static_cast<float>(r);
  }
}

// The same on every lane of GCC float vectors (V: float __attribute__((vector_size(…)))). Always
// inlined, so a vector it returns never goes through the ABI (GCC's -Wpsabi warns about 32- and
// 64-byte vectors returned by value all the same, here and at each call: off for this function,
// a caller's file silences its own calls).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
template <bool Hardware, class V>
ATTN_COPY_BODY V fused_multiply_add_lanes(const V& a, const V& b, const V& c) {
  constexpr int L = static_cast<int>(sizeof(V) / sizeof(float));
  V r;
#pragma GCC unroll 16
  for (int l = 0; l < L; ++l) r[l] = fused_multiply_add<Hardware>(a[l], b[l], c[l]);
  return r;
}
#pragma GCC diagnostic pop

}  // namespace attn
