// Positional information for the attention models (`model.positions`): a code p_i ∈ R^m per
// position i, added to the token embedding, h_0 = φ(X) + P (attention, third_order,
// transformer).
//
// Shapes: P (N, m), N = the task's sequence length T; h (B·N, m) row-major, sequence b's
// token i in row b·N + i; x (B, N, d_in) the batch's inputs.
//   none              no codes (h_0 = φ(X)), the models' behaviour before this key existed
//   learned           a trainable table `pos` (N, m), as GPT-2's wpe: initialised N(0, 0.02²)
//                     from the stream "<model>.init.pos" of the run seed
//   sinusoidal        fixed (Vaswani et al. 2017): P[i, 2c] = sin(i / 10000^(2c/m)),
//                     P[i, 2c+1] = cos(i / 10000^(2c/m)) (odd m: the last column is a sin)
//   random            fixed random codes drawn once per run: P[i, c] ~ N(0, 1) i.i.d. from
//                     Rng(seed, "<model>.positions.random", i)
//   random_resampled  fresh N(0, 1) codes per sequence: sequence b's codes come from
//                     Rng(seed, "<model>.positions.resampled", key_b), key_b the FNV-1a hash of
//                     its N·d_in inputs rounded to float32 (positions_sequence_key). So a
//                     sequence gets the same codes in any batch, chunk, thread count and dtype
//                     of a run, training and evaluation alike; a new sample (fresh-sample
//                     training, train.n = 0) gets new codes, while a sample of a fixed set keeps
//                     its codes across epochs.
// random and random_resampled need the run seed: init(seed) must run before forward() (the
// trainer's replicas and loaded models call it too).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/choice.h"
#include "nn/param_set.h"

namespace attn {

enum class Positions { none, learned, sinusoidal, random, random_resampled };
inline constexpr Choice<Positions> kPositions[] = {
    {Positions::none, "none"},
    {Positions::learned, "learned"},
    {Positions::sinusoidal, "sinusoidal"},
    {Positions::random, "random"},
    {Positions::random_resampled, "random_resampled"}};

// The key of one sequence's resampled codes: FNV-1a over its n inputs rounded to float32.
template <class T>
uint64_t positions_sequence_key(const T* x, int64_t n);

template <class T>
class PositionCodes {
 public:
  // Declares the learned table "pos" (N, m) in ps (kind learned only); fills a sinusoidal
  // table. Before ps.allocate().
  void declare(ParamSet<T>& ps, Positions kind, int64_t N, int64_t m, const std::string& model);
  // learned: draws the table; random: draws the fixed codes; random_resampled: keeps the seed.
  void init(ParamSet<T>& ps, uint64_t seed);
  // h (B·N, m) += the codes of each sequence of x (B, N, d_in).
  void forward(const ParamSet<T>& ps, T* h, const T* x, int64_t B, int64_t d_in);
  // learned: grad(pos) += Σ_b dh_b, dh (B·N, m). Nothing for the fixed kinds.
  void backward(ParamSet<T>& ps, const T* dh, int64_t B) const;
  Positions kind() const { return kind_; }

 private:
  Positions kind_ = Positions::none;
  int64_t N_ = 0, m_ = 0;
  int id_ = -1;           // the learned table's parameter id
  std::string model_;     // stream prefix
  std::vector<T> table_;  // (N, m): sinusoidal, random
  uint64_t seed_ = 0;
  bool seeded_ = false;
  std::vector<T> codes_;  // scratch: one sequence's resampled codes
};

}  // namespace attn
