// Position codes and query certificates of the finite-precision qSA construction
// (spec sanford2023 §3.1).
//
//   U    (N, m')  key code u_j of position j: i.i.d. ±1/√m' entries (sign) or N(0, 1/m')
//                 (gaussian), drawn from the stream "<stream>" of the seed.
//   w_S  (m')     query code of a set S (|S| = q):
//                 dual  w_S = U_S (U_Sᵀ U_S)⁻¹ 1_q, so <w_S, u_j> = 1 exactly for j ∈ S;
//                 sum   w_S = Σ_{l∈S} u_l (no inverse; in-set scores only ≈ 1).
//   margin γ_S = min_{l∈S} <w_S, u_l> − max_{j∉S} <w_S, u_j>  (for dual codes: 1 − max_{j∉S});
//                 γ_S > 0 means the set is exactly the row's arg-max.
// Temperature rule (spec §3): with ties on S and every other score ≥ βγ lower, the leaked
// softmax mass is ≤ (N−q)e^{−βγ}/q and the qSA error ≤ 2·leak, so
//   β = ln(2(N−q)/(qε)) / γ   gives max-error ≤ ε.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

enum class QsaCodeDist { sign, gaussian };
enum class QsaQueryCode { dual, sum };

// The N × m' code book of positions 0..N-1 (row j = u_j).
std::vector<double> qsa_codebook(int64_t N, int64_t m_prime, QsaCodeDist dist, uint64_t seed,
                                 const std::string& stream);

// Rotational position codes (the retrieval heads of §3.5): m' even, u_j[2l], u_j[2l+1] =
// (cos, sin)(2π f_l j / N) / √(m'/2) with integer frequencies f_l uniform in [1, N−1] from the
// stream "<stream>". ‖u_j‖ = 1, and shifting position by δ is a rotation of each pair: a fixed
// linear map Q_δ with Q_δ u_i = u_{(i+δ) mod N}, so one shared φ serves every offset head.
std::vector<double> position_codes_rotational(int64_t N, int64_t m_prime, uint64_t seed,
                                              const std::string& stream);

// Writes w_S (m'); returns false when U_Sᵀ U_S is singular to rounding (e.g. two equal codes),
// in which case no dual certificate exists and w is left as the sum code.
bool qsa_query_code(const double* U, int64_t m_prime, const int64_t* set, int64_t q,
                    QsaQueryCode mode, double* w);

// γ_S of the query code w over positions 0..N-1 (the set's members must be distinct).
double qsa_margin(const double* U, int64_t N, int64_t m_prime, const int64_t* set, int64_t q,
                  const double* w);

// β of the temperature rule for margin γ > 0, N positions, sets of size q, error ε.
double qsa_temperature(int64_t N, int64_t q, double epsilon, double gamma);

}  // namespace attn
