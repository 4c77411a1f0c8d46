// 16-bit float conversions (io/half.h) by Eigen::half and Eigen::bfloat16: their
// conversions from float round to nearest, ties to even (tests/test_safetensors.cpp checks
// every 16-bit pattern and random floats against a nearest-value reference).
#include "io/half.h"

#include <Eigen/Core>
#include <bit>

namespace attn {

float f16_to_float(uint16_t h) { return static_cast<float>(std::bit_cast<Eigen::half>(h)); }

uint16_t f16_from_float(float f) { return std::bit_cast<uint16_t>(Eigen::half(f)); }

float bf16_to_float(uint16_t b) { return static_cast<float>(std::bit_cast<Eigen::bfloat16>(b)); }

uint16_t bf16_from_float(float f) { return std::bit_cast<uint16_t>(Eigen::bfloat16(f)); }

}  // namespace attn
