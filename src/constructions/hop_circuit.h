// The k-hop circuit by pointer doubling (Sanford, Hsu, Telgarsky 2024, "Transformers, parallel
// computation, and logarithmic depth"; layers 1–2 are the two-layer induction head of "One-layer
// transformers fail to solve the induction heads task") as explicit causal softmax heads over one
// sequence of the hop task (tasks/hop.h). docs/hop2024.md says which parts are the papers' and
// which are attnlab's reconstruction.
//
// Positions t = 0 … N−1; position 0 holds the k token, t >= 1 the symbol s_t = σ_{t−1}. Pointers
// are input positions; 0 (the k token) stands for "undefined" and is absorbing, so
// find(t) = 1 + the largest u in [1, t) with s_u = s_t (0 if none) is the hop task's
// hop_chain(t, 1) with −1 written as 0.
//   layer 1      previous-token head: row v attends to v − 1 (quadratic position codes) and
//                copies s_{v−1}; with k, a second head copies k's binary digits from position 0
//   layer 2      match head: row t attends to the rightmost v <= t whose copied s_{v−1} equals
//                s_t (or to position 0 if none) and reads (v, s_v): P_0 = find
//   layer 2 + j  (j >= 1) lookup heads: P_j = P_{j−1}∘P_{j−1} = find^{2^j}; with k, a second head
//                R_j = P_{j−1}∘R_{j−1} when bit j−1 of k is set, else R_{j−1}
//                (R_0 = identity), so R_j = find^{k mod 2^j}
//   read-out     with L layers (J = L − 2): R_J when k mod 2^J ≠ 0 or k = 0, else P_J: exact
//                for k <= 2^J; a larger k gets the hop its low digits allow (a wrong answer
//                from the truncated circuit). Without k (the induction head): P_0.
// Every head is softmax(q kᵀ) v under the causal mask with the precision model of
// constructions/attend.h (q, k, v rounded to p bits, one scale per tensor; bits_scores rounds
// the scores); β from the head's score gap g so that the leaked mass stays below 1/(8N). Every
// rounded tensor's largest |entry| depends on N alone, so output t depends on inputs <= t at
// any bits; with bits_scores the scores' one scale spans the whole map (ops/attention.h) and a
// later position can move an earlier row's rounding. The
// per-position maps between layers (rounding a read pointer to the nearest position, argmax of a
// read symbol, threshold of a read bit, the digit selection) are computed directly, as the
// other constructions compute their token maps.
#pragma once

#include <cstdint>
#include <vector>

#include "constructions/construction.h"

namespace attn {

// One decoded sequence: N positions, A symbols, sym[t] = s_t (sym[0] = −1), k from the k token.
struct HopSequence {
  int64_t N = 0, A = 0, k = 0;
  std::vector<int64_t> sym;
};

struct HopCircuitOptions {
  int64_t layers = 2;      // L >= 1
  bool use_k = true;       // false: the induction head (no k head, no R heads, read-out P_0)
  int64_t k_bits = 1;      // binary digits of k the layer-1 broadcast carries (k_max < 2^k_bits)
  double beta_fixed = 0;   // > 0: every head's β·g (its score margin); 0: the leak rule
  double beta_factor = 1;  // multiplies the leak rule's β
};

// The circuit on one sequence: cls (N) the predicted classes (symbols 0 … A−1, blank A at
// position 0, none A + 1). probs, if non-null, gets one (N, N) map per head in evaluation order:
// layer 1 previous-token [, k broadcast], layer 2 match, then per doubling layer P [, R].
// stats, if non-null, gets one row (g, β) per query position of each head.
void hop_circuit_forward(const HopSequence& s, const HopCircuitOptions& o, const Precision& p,
                         int64_t* cls, std::vector<LayerProbs>* probs, ConstructionStats* stats);

// The hops a circuit of `layers` layers answers exactly: 0 for L = 1, else 2^(L−2).
int64_t hop_circuit_reach(int64_t layers);
// The fewest layers whose reach covers k: 1 for k = 0, else ⌈log₂ k⌉ + 2.
int64_t hop_circuit_layers_for(int64_t k);

}  // namespace attn
