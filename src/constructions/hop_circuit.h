// The k-hop circuit by pointer doubling (Sanford, Hsu, Telgarsky 2024, "Transformers, parallel
// computation, and logarithmic depth"; layers 1–2 are the two-layer induction head of "One-layer
// transformers fail to solve the induction heads task") as explicit causal softmax heads over one
// sequence of the hop task (tasks/hop.h). docs/hop2024.md says which parts are the papers' and
// which are attnlab's reconstruction.
//
// Positions t = 0 … N−1; position 0 holds the k token, t >= 1 the symbol s_t = σ_{t−1}. Pointers
// are input positions; 0 (the k token) stands for "undefined" and is absorbing, so
// find(t) = 1 + the largest u in [1, t) with s_u = s_t (0 if none) is the hop task's
// hop_chain(t, 1) with −1 written as 0. Each position keeps a pointer P and a symbol R.
//   layer 1      previous-token head (row v copies s_{v−1}); with k, a head copying k's binary
//                digits from position 0; with L >= 3, a count head (c_t = occurrences of s_t in
//                [1, t]) and one head per symbol a (1 + its last occurrence in [1, t])
//   layer 2      match head: row t attends to the rightmost v <= t whose copied s_{v−1} equals
//                s_t (position 0 if none) and reads s_v = hop_1; with L >= 3 an occurrence
//                head reads, at the previous occurrence u* = find(t) − 1 (matched by symbol and
//                count c_t − 1), the per-symbol pointers there, and P = the one for s_{find(t)}
//                = find∘find. R = hop_1 if bit 0 of k is set, else hop_0.
//   layer l >= 3 one lookup head at P: P ← P(P) = find^(2^(l−1)); R ← R(P) =
//                hop_(k mod 2^(l−2) + 2^(l−2)) when bit l−2 of k is set
//   read-out     R = hop_(k mod 2^(L−1)): exact for k <= 2^(L−1) − 1 (the paper's depth
//                ⌊log₂ k⌋ + 2); a larger k gets hop_(k mod 2^(L−1)), a wrong answer from the
//                truncated circuit. Without k (the induction head): layers 1–2, R = hop_1.
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
// layer 1 previous-token [, k broadcast] [, count, last occurrence of 0 … A−1], layer 2 match
// [, occurrence], then one lookup per layer l >= 3 ([…]: with k; with L >= 3).
// stats, if non-null, gets one row (g, β) per query position of each head.
void hop_circuit_forward(const HopSequence& s, const HopCircuitOptions& o, const Precision& p,
                         int64_t* cls, std::vector<LayerProbs>* probs, ConstructionStats* stats);

// The hops a circuit of `layers` layers answers exactly: k <= 2^(L−1) − 1.
int64_t hop_circuit_reach(int64_t layers);
// The fewest layers whose reach covers k: 1 for k = 0, else ⌊log₂ k⌋ + 2.
int64_t hop_circuit_layers_for(int64_t k);

}  // namespace attn
