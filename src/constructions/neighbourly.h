// The infinite-precision qSA construction's geometry (spec sanford2023 §3.2): keys on the
// trigonometric moment curve in R^{2q}, whose every q-subset is a face, evaluated in long double.
//
//   θ_j = 2πj/N,  u_j = (cos θ_j, sin θ_j, cos 2θ_j, sin 2θ_j, …, cos qθ_j, sin qθ_j)   (2q)
//   P_S(θ) = Π_{l∈S} (1 − cos(θ − θ_l)) = a₀ + Σ_{k=1..q} (a_k cos kθ + b_k sin kθ) ≥ 0,
//            zero exactly on {θ_l : l ∈ S}
//   w_S = −(a₁, b₁, …, a_q, b_q)  ⇒  <w_S, u_j> = a₀ − P_S(θ_j): a₀ on S, smaller elsewhere.
//   Gap Δ_S = min_{j∉S} P_S(θ_j) — the margin of the temperature rule.
// The expansion multiplies the Laurent polynomial of each factor in e^{iθ}:
//   1 − cos(θ − θ_l) = 1 − ½e^{−iθ_l}·e^{iθ} − ½e^{iθ_l}·e^{−iθ}.
#pragma once

#include <cstdint>
#include <vector>

namespace attn {

// u_j (2q values).
void neighbourly_key(int64_t j, int64_t N, int64_t q, long double* u);
// w_S (2q values) for the set (|set| = q, members distinct); returns a₀.
long double neighbourly_query(const int64_t* set, int64_t q, int64_t N, long double* w);
// P_S(θ_j) by the product formula (the reference the expansion is tested against).
long double neighbourly_poly_ref(const int64_t* set, int64_t q, int64_t N, int64_t j);
// Δ_S = min over j ∉ S of P_S(θ_j), by the product formula; +inf if S = [N].
long double neighbourly_gap(const int64_t* set, int64_t q, int64_t N);

}  // namespace attn
