// Counter-based random numbers (Random123 Philox4x32-10).
//
// A draw is a pure function of (seed, named stream, index, position within the index):
// Rng(seed, "qsa.z", i) yields the same sequence for sample i whatever thread, batch or
// shard produces it. Streams are named by strings ("<task>.<what>"), hashed to 64 bits;
// give every independent random quantity its own stream.
//
// Key   = mix(seed, hash(stream))      (2 x 32 bits)
// Count = (index, draw counter)         (4 x 32 bits: index 64, draw 64)
#pragma once

#include <cstdint>
#include <string_view>

namespace attn {

// FNV-1a 64-bit hash of a stream name.
uint64_t rng_stream_key(std::string_view name);

class Rng {
 public:
  Rng(uint64_t seed, std::string_view stream, uint64_t index);
  Rng(uint64_t seed, uint64_t stream_key, uint64_t index);

  uint32_t next_u32() {
    if (pos_ == 4) refill();
    return buffer_[pos_++];
  }
  uint64_t next_u64() {
    uint64_t hi = next_u32();
    return (hi << 32) | next_u32();
  }
  // Uniform on [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // Uniform on (0, 1): never 0, so log() is safe.
  double uniform_open() { return (static_cast<double>(next_u64() >> 12) + 0.5) * 0x1.0p-52; }
  // Standard normal (Box-Muller; the second value of each pair is kept for the next call).
  double gaussian();
  // Uniform integer in [0, n), unbiased (rejection). n must be > 0.
  uint64_t uniform_int(uint64_t n);

 private:
  void refill();

  uint32_t key_[2];
  uint64_t index_;
  uint64_t block_ = 0;  // how many 4-word blocks this (seed, stream, index) has produced
  uint32_t buffer_[4];
  int pos_ = 4;
  bool has_spare_ = false;
  double spare_ = 0.0;
};

// out[0..n) i.i.d. N(0, 1).
void rng_gaussian(Rng& rng, double* out, int64_t n);
// A point uniform on the sphere of the given radius in R^d.
void rng_sphere(Rng& rng, double* out, int64_t d, double radius = 1.0);
// A point uniform in the closed ball of the given radius in R^d.
void rng_ball(Rng& rng, double* out, int64_t d, double radius = 1.0);
// A uniform q-subset of {0, ..., N-1}, written sorted to out[0..q). Requires 0 <= q <= N.
void rng_subset(Rng& rng, int64_t N, int64_t q, int64_t* out);
// A uniform q-subset of {0, ..., N-1} \ {excluded}, sorted. Requires 0 <= q <= N - 1.
void rng_subset_excluding(Rng& rng, int64_t N, int64_t q, int64_t excluded, int64_t* out);

}  // namespace attn
