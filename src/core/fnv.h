// FNV-1a, 64 bits: the one byte hash of attnlab (RNG stream names, run ids, the inputs
// fingerprint of a construction's diagnostics). Run ids and random streams depend on its
// exact value: tests/test_rng.cpp and tests/test_run_ids_golden.cpp pin it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attn {

inline constexpr uint64_t kFnv1aOffset = 0xcbf29ce484222325ull;  // the FNV-1a 64 offset basis
inline constexpr uint64_t kFnv1aPrime = 0x100000001b3ull;

// FNV-1a of the n bytes at data, starting from seed (the offset basis unless chained).
inline uint64_t fnv1a_64(const void* data, size_t n, uint64_t seed = kFnv1aOffset) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  uint64_t h = seed;
  for (size_t k = 0; k < n; ++k) h = (h ^ bytes[k]) * kFnv1aPrime;
  return h;
}

}  // namespace attn
