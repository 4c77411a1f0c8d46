// Shared pieces of the Match constructions (spec sanford2023 §3.3–3.5): reading tokens back
// from any Match encoding, the circle θ_x = 2πx/M, the read-out test of §3.3, and a retrieval
// head that copies one token's circle value into another token (a q = 1 qSA head, §3.5).
//
// Shapes: x (N, d_in) with the token encoding first (one_hot M, circle 2 or scalar 1) and
// `extra` variant columns after it; tokens (N) in [0, M).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "constructions/construction.h"

namespace attn {

class MatchLayout {
 public:
  // extra: the variant's columns after the token encoding (match3_pointer: N).
  MatchLayout(const TaskShape& shape, int64_t extra, const std::string& name);
  int64_t N() const { return N_; }
  int64_t d_in() const { return d_in_; }
  int64_t token_dim() const { return d_in_ - extra_; }
  // Tokens of one sequence; UserError if the encoding does not fit modulus M.
  std::vector<int64_t> decode(const double* x, int64_t M) const;

 private:
  int64_t N_, d_in_, extra_;
  std::string name_;
};

// g = 1 − cos(2π/M): the smallest distance between the target and the hull of the other
// points of the circle (§3.3).
inline double match_gap(int64_t M) { return 1.0 - std::cos(2.0 * M_PI / static_cast<double>(M)); }
inline double match_angle(int64_t x, int64_t M) {
  return 2.0 * M_PI * static_cast<double>(((x % M) + M) % M) / static_cast<double>(M);
}
// The token whose circle point is nearest to (c, s).
int64_t match_circle_decode(double c, double s, int64_t M);

// Temperatures read from [model]: model.beta (> 0 fixes β), model.beta_factor.
struct MatchTemperature {
  double beta_fixed, factor;
  explicit MatchTemperature(const Params& m)
      : beta_fixed(m.get_real("beta")), factor(m.get_real("beta_factor")) {}
  // β ≥ ln(4·pairs/g)/g (pairs = N for Match2, N² for third order), times the factor.
  double beta(double pairs, double g) const {
    return beta_fixed > 0 ? beta_fixed : factor * std::log(4.0 * pairs / g) / g;
  }
};

// The Match2 head of §3.3 (match2_trig; layer 2 of adjacent_match3): query token x_i against
// key tokens s_j (−1: none — zero key, value (0, 0), at distance 1 > g/2 from every target, and
// never outscoring a match). Scores β cos(θ_{x_i} + θ_{s_j}), values the points of −s_j; y_i = 1
// iff the read-out lies within g/2 of the point of x_i. Adds one row (g, β) per query to stats.
void match2_head(const std::vector<int64_t>& queries, const std::vector<int64_t>& keys, int64_t M,
                 double beta, const Precision& p, double* y, std::vector<LayerProbs>* probs,
                 ConstructionStats* stats);

// Retrieval head: row i receives ≈ values[target[i]] (values (N, 2), circle points) through
// softmax attention with position codes U (N, m', by position) and dual-certificate queries
// (q = 1); target −1 gives a zero query (uniform row; callers ignore it). β per row from the
// temperature rule with ε = sin(π/M)/2, enough to decode the token exactly. out (N, 2).
void match_retrieve(const std::vector<double>& U, int64_t m_prime,
                    const std::vector<int64_t>& target, const std::vector<double>& values,
                    int64_t M, const Params& model, const Precision& p, double* out,
                    LayerProbs* probs, ConstructionStats* stats);

}  // namespace attn
