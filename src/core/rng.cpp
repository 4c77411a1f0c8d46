// Philox-based counter RNG and the distribution helpers built on it.
#include "core/rng.h"

#include <Random123/philox.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.h"
#include "core/fnv.h"

namespace attn {
namespace {

// SplitMix64 finaliser: a bijective mixer used to derive the Philox key.
uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

uint64_t rng_stream_key(std::string_view name) { return fnv1a_64(name.data(), name.size()); }

Rng::Rng(uint64_t seed, std::string_view stream, uint64_t index)
    : Rng(seed, rng_stream_key(stream), index) {}

Rng::Rng(uint64_t seed, uint64_t stream_key, uint64_t index) : index_(index) {
  const uint64_t key = mix64(mix64(seed) ^ stream_key);
  key_[0] = static_cast<uint32_t>(key);
  key_[1] = static_cast<uint32_t>(key >> 32);
}

void Rng::refill() {
  using Philox = r123::Philox4x32;
  Philox::ctr_type ctr = {{static_cast<uint32_t>(index_), static_cast<uint32_t>(index_ >> 32),
                           static_cast<uint32_t>(block_), static_cast<uint32_t>(block_ >> 32)}};
  Philox::key_type key = {{key_[0], key_[1]}};
  Philox::ctr_type out = Philox()(ctr, key);
  for (int k = 0; k < 4; ++k) buffer_[k] = out.v[k];
  ++block_;
  pos_ = 0;
}

double Rng::gaussian() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  const double u1 = uniform_open();
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double angle = 2.0 * std::numbers::pi * u2;
  spare_ = r * std::sin(angle);
  has_spare_ = true;
  return r * std::cos(angle);
}

uint64_t Rng::uniform_int(uint64_t n) {
  ATTN_ASSERT(n > 0);
  // Reject the top partial copy of [0, n) so every residue is equally likely.
  const uint64_t limit = UINT64_MAX - (UINT64_MAX % n + 1) % n;
  uint64_t x;
  do {
    x = next_u64();
  } while (x > limit);
  return x % n;
}

void rng_gaussian(Rng& rng, double* out, int64_t n) {
  for (int64_t k = 0; k < n; ++k) out[k] = rng.gaussian();
}

void rng_sphere(Rng& rng, double* out, int64_t d, double radius) {
  ATTN_ASSERT(d >= 1);
  double norm2 = 0.0;
  do {
    norm2 = 0.0;
    for (int64_t k = 0; k < d; ++k) {
      out[k] = rng.gaussian();
      norm2 += out[k] * out[k];
    }
  } while (norm2 == 0.0);
  const double scale = radius / std::sqrt(norm2);
  for (int64_t k = 0; k < d; ++k) out[k] *= scale;
}

void rng_ball(Rng& rng, double* out, int64_t d, double radius) {
  rng_sphere(rng, out, d, 1.0);
  // P(|x| <= r) = r^d for the uniform ball, so |x| = U^(1/d).
  const double r = radius * std::pow(rng.uniform(), 1.0 / static_cast<double>(d));
  for (int64_t k = 0; k < d; ++k) out[k] *= r;
}

void rng_subset(Rng& rng, int64_t N, int64_t q, int64_t* out) {
  ATTN_ASSERT(0 <= q && q <= N, "subset size out of range");
  // Floyd's algorithm: q draws, each subset equally likely.
  int64_t count = 0;
  for (int64_t j = N - q; j < N; ++j) {
    const int64_t t = static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(j) + 1));
    const bool taken = std::find(out, out + count, t) != out + count;
    out[count++] = taken ? j : t;
  }
  std::sort(out, out + q);
}

void rng_subset_excluding(Rng& rng, int64_t N, int64_t q, int64_t excluded, int64_t* out) {
  ATTN_ASSERT(0 <= excluded && excluded < N && q <= N - 1);
  rng_subset(rng, N - 1, q, out);
  for (int64_t k = 0; k < q; ++k)
    if (out[k] >= excluded) ++out[k];  // still sorted: the map is monotone
}

}  // namespace attn
