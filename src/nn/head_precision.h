// Finite precision of the attention networks: `model.bits`, `model.bits_scores`,
// `model.bits_in_training` (spec sanford2023 §1.3, §7 A4; docs/precision.md).
//
// With bits = p > 0 a forward pass rounds each head's queries, keys and values (third
// order: q, k1, k2, v1, v2), right after they are computed from φ(X) and before the scores,
// to p-bit fixed point (ops/quantize.h) with one scale per (sequence, head, tensor);
// with `scores` also the scores (pre-softmax, after the temperature), one scale per
// (sequence, head) (AttentionShape / ThirdOrderShape score_bits). Evaluation forwards always
// round; training forwards (Net::set_training) only with `in_training`, and the backward
// then treats rounding as the identity (straight-through estimator). bits = 0: exact.
//
// Shapes: a per-head tensor x is (B, N, H, d) as in ops/attention.h; the block of head h of
// sequence b is N rows of d values with row stride H·d.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/quantize.h"

namespace attn {

struct HeadPrecision {
  int64_t bits = 0;          // 0: exact; else 2..53
  bool scores = false;       // also round the scores
  bool in_training = false;  // also round in training forwards (straight-through backward)

  // Bits of q/k/v in a forward pass of this mode (0: exact).
  int64_t qkv_bits(bool training) const { return training && !in_training ? 0 : bits; }
  // Bits of the scores in a forward pass of this mode (0: exact).
  int64_t score_bits(bool training) const { return scores ? qkv_bits(training) : 0; }
};

// Rounds x (B, N, H, d) in place to `bits`-bit fixed point, one scale per (b, h) block of
// N·d values, so that a sequence's result never depends on the other sequences of the
// batch. bits = 0: no-op.
template <class T>
void head_quantize(T* x, int64_t B, int64_t N, int64_t H, int64_t d, int64_t bits) {
  if (bits == 0) return;
  std::vector<T> block(static_cast<size_t>(N * d));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      T* base = x + (b * N * H + h) * d;
      for (int64_t i = 0; i < N; ++i)
        for (int64_t l = 0; l < d; ++l) block[i * d + l] = base[i * H * d + l];
      quantize_fixed_point(block.data(), N * d, bits);
      for (int64_t i = 0; i < N; ++i)
        for (int64_t l = 0; l < d; ++l) base[i * H * d + l] = block[i * d + l];
    }
}

}  // namespace attn
