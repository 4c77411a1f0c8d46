// 16-bit floats: IEEE 754 binary16 (float16, "F16") and bfloat16 ("BF16") <-> float.
//
// Contract:
// - f16_to_float / bf16_to_float are exact (every 16-bit value is a float), including
//   subnormals, ±0, ±inf; a NaN stays a NaN (quiet, sign and top payload bits kept).
// - f16_from_float / bf16_from_float round to nearest, ties to even, as numpy's
//   astype(float16) and torch's .to(bfloat16) do: values beyond the largest finite half
//   (65504; bf16: ~3.39e38) after rounding become ±inf, tiny values become subnormals or ±0.
//   NaN maps to a quiet NaN with the same sign.
// Values are 16-bit patterns (uint16_t), stored little-endian in files.
#pragma once

#include <bit>
#include <cstdint>

namespace attn {

inline float f16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1F) {  // inf or NaN
    bits = sign | 0x7F800000u | (mant << 13) | (mant ? 0x00400000u : 0u);
  } else if (exp != 0) {  // normal: rebias 15 -> 127
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  } else if (mant == 0) {  // ±0
    bits = sign;
  } else {  // subnormal: mant * 2^-24, normalise
    int e = -1;
    do {
      mant <<= 1;
      ++e;
    } while ((mant & 0x400u) == 0);
    bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mant & 0x3FFu) << 13);
  }
  return std::bit_cast<float>(bits);
}

inline uint16_t f16_from_float(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u | ((abs >> 13) & 0x1FFu));  // NaN
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    if (abs < 0x33000000u) return sign;  // below 2^-25: rounds to 0 (2^-25 itself ties to 0)
    const uint32_t e = abs >> 23;  // 102 .. 112
    const uint32_t m = (abs & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126u - e;  // 14 .. 24: half subnormal units are 2^-24
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);  // q may carry into the smallest normal: correct
  }
  // Normal range: rebias 127 -> 15 and round the 13 dropped bits (a carry may bump the
  // exponent, possibly to inf, which is the correct rounding).
  uint32_t v = abs - 0x38000000u;  // exponent - 112
  const uint32_t rem = v & 0x1FFFu;
  v >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (v & 1u))) ++v;
  return static_cast<uint16_t>(sign | v);
}

inline float bf16_to_float(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu)) bits |= 0x00400000u;  // quiet NaN
  return std::bit_cast<float>(bits);
}

inline uint16_t bf16_from_float(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x0040u);  // NaN
  const uint32_t rounding = 0x7FFFu + ((x >> 16) & 1u);  // ties to even; may carry to inf
  return static_cast<uint16_t>((x + rounding) >> 16);
}

}  // namespace attn
