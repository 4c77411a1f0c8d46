// 16-bit floats: IEEE 754 binary16 (float16, "F16") and bfloat16 ("BF16") <-> float, by
// Eigen's Eigen::half and Eigen::bfloat16 (io/half.cpp, so that Eigen stays out of the
// files that include this header).
//
// Contract:
// - f16_to_float / bf16_to_float are exact (every 16-bit value is a float), including
//   subnormals, ±0, ±inf; a NaN stays a NaN with its sign.
// - f16_from_float / bf16_from_float round to nearest, ties to even, as numpy's
//   astype(float16) and torch's .to(bfloat16) do: values beyond the largest finite half
//   (65504; bf16: ~3.39e38) after rounding become ±inf, tiny values become subnormals or ±0.
//   NaN maps to a quiet NaN with the same sign.
// Values are 16-bit patterns (uint16_t), stored little-endian in files.
#pragma once

#include <cstdint>

namespace attn {

float f16_to_float(uint16_t h);
uint16_t f16_from_float(float f);
float bf16_to_float(uint16_t b);
uint16_t bf16_from_float(float f);

}  // namespace attn
