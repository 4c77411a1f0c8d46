// PositionCodes (see positions.h).
#include "nn/positions.h"

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/fnv.h"
#include "core/rng.h"

namespace attn {

template <class T>
uint64_t positions_sequence_key(const T* x, int64_t n) {
  uint64_t h = kFnv1aOffset;
  for (int64_t e = 0; e < n; ++e) {
    const float f = static_cast<float>(x[e]);
    uint32_t bits = 0;
    std::memcpy(&bits, &f, sizeof bits);
    h = fnv1a_64(&bits, sizeof bits, h);
  }
  return h;
}

template <class T>
void PositionCodes<T>::declare(ParamSet<T>& ps, Positions kind, int64_t N, int64_t m,
                               const std::string& model) {
  kind_ = kind;
  N_ = N;
  m_ = m;
  model_ = model;
  if (kind_ == Positions::learned) id_ = ps.add("pos", {N, m});
  if (kind_ == Positions::sinusoidal) {
    table_.resize(static_cast<size_t>(N * m));
    for (int64_t i = 0; i < N; ++i)
      for (int64_t c = 0; c < m; ++c) {
        const double angle =
            static_cast<double>(i) / std::pow(10000.0, static_cast<double>(c - c % 2) / m);
        table_[i * m + c] = static_cast<T>(c % 2 == 0 ? std::sin(angle) : std::cos(angle));
      }
  }
}

template <class T>
void PositionCodes<T>::init(ParamSet<T>& ps, uint64_t seed) {
  seed_ = seed;
  seeded_ = true;
  switch (kind_) {
    case Positions::none:
    case Positions::sinusoidal:
    case Positions::random_resampled: return;
    case Positions::learned: {
      Rng rng(seed, model_ + ".init.pos", 0);
      T* v = ps.value(id_);
      for (int64_t e = 0; e < N_ * m_; ++e) v[e] = static_cast<T>(0.02 * rng.gaussian());
      return;
    }
    case Positions::random:
      table_.resize(static_cast<size_t>(N_ * m_));
      for (int64_t i = 0; i < N_; ++i) {
        Rng rng(seed, model_ + ".positions.random", static_cast<uint64_t>(i));
        for (int64_t c = 0; c < m_; ++c) table_[i * m_ + c] = static_cast<T>(rng.gaussian());
      }
      return;
  }
}

template <class T>
void PositionCodes<T>::forward(const ParamSet<T>& ps, T* h, const T* x, int64_t B, int64_t d_in) {
  const int64_t nm = N_ * m_;
  auto add = [&](const T* codes) {
    for (int64_t b = 0; b < B; ++b)
      for (int64_t e = 0; e < nm; ++e) h[b * nm + e] += codes[e];
  };
  switch (kind_) {
    case Positions::none: return;
    case Positions::learned: add(ps.value(id_)); return;
    case Positions::sinusoidal:
    case Positions::random:
      ATTN_ASSERT(table_.size() == static_cast<size_t>(nm),
                  "PositionCodes: random positions need init(seed) before forward");
      add(table_.data());
      return;
    case Positions::random_resampled: {
      ATTN_ASSERT(seeded_, "PositionCodes: random_resampled needs init(seed) before forward");
      const uint64_t stream = rng_stream_key(model_ + ".positions.resampled");
      codes_.resize(static_cast<size_t>(nm));
      for (int64_t b = 0; b < B; ++b) {
        Rng rng(seed_, stream, positions_sequence_key(x + b * N_ * d_in, N_ * d_in));
        for (int64_t e = 0; e < nm; ++e) codes_[e] = static_cast<T>(rng.gaussian());
        for (int64_t e = 0; e < nm; ++e) h[b * nm + e] += codes_[e];
      }
      return;
    }
  }
}

template <class T>
void PositionCodes<T>::backward(ParamSet<T>& ps, const T* dh, int64_t B) const {
  if (kind_ != Positions::learned) return;
  const int64_t nm = N_ * m_;
  T* g = ps.grad(id_);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t e = 0; e < nm; ++e) g[e] += dh[b * nm + e];
}

template uint64_t positions_sequence_key<float>(const float*, int64_t);
template uint64_t positions_sequence_key<double>(const double*, int64_t);
template class PositionCodes<float>;
template class PositionCodes<double>;

}  // namespace attn
