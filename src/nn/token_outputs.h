// Per-token outputs of the sequence networks (attention, transformer, lstm): a network
// computes one d_out vector per token, (B, N, d_out); the task wants either all of them
// (T_out = N) or token 0's alone (T_out = 1, e.g. rf_target), (B, T_out, d_out).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/error.h"

namespace attn {

// UserError unless T_out is N or 1.
inline void token_outputs_check(const std::string& model, int64_t N, int64_t T_out) {
  ATTN_CHECK(T_out == N || T_out == 1,
             "model " + model +
                 " outputs one vector per token (or token 0's alone), but the task has " +
                 std::to_string(N) + " tokens and " + std::to_string(T_out) + " outputs");
}

// y (B, T_out, d_out) from per_token (B, N, d_out).
template <class T>
void token_outputs_gather(T* y, const T* per_token, int64_t B, int64_t N, int64_t T_out,
                          int64_t d_out) {
  if (B == 0) return;  // an empty batch: y and per_token may be null (memcpy must not see them)
  if (T_out == N) {
    std::memcpy(y, per_token, sizeof(T) * B * N * d_out);
    return;
  }
  for (int64_t b = 0; b < B; ++b)
    std::memcpy(y + b * d_out, per_token + b * N * d_out, sizeof(T) * d_out);
}

// The gradient of gather: d_per_token (B, N, d_out) from dy (B, T_out, d_out), zero elsewhere.
template <class T>
void token_outputs_scatter(T* d_per_token, const T* dy, int64_t B, int64_t N, int64_t T_out,
                           int64_t d_out) {
  if (B == 0) return;  // an empty batch, as in gather
  if (T_out == N) {
    std::memcpy(d_per_token, dy, sizeof(T) * B * N * d_out);
    return;
  }
  std::fill(d_per_token, d_per_token + B * N * d_out, T(0));
  for (int64_t b = 0; b < B; ++b)
    std::memcpy(d_per_token + b * N * d_out, dy + b * d_out, sizeof(T) * d_out);
}

}  // namespace attn
