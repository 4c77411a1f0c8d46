// qsa instances: how one qsa sample's (z, sets) are drawn (spec sanford2023 §3.6).
//
//   random     z_i uniform (sphere or ball), y_i uniform q-subsets: the default distribution
//   disj       the DISJ_q → qSA reduction of Thm 4 (needs N ≥ 2q+1): pair t ∈ [q] is positions
//              (2t, 2t+1), the query is position 2q, positions > 2q are padding;
//              y_{2q} = {2t + a_t}, z_{2t+1} = +e₁ if b_t = 1, every other z = −e₁; so
//              qSA(X)_{2q} = (−1 + 2|a∧b|/q) e₁. A fraction disj_fraction of samples is disjoint.
//   index      the INDEX → qSA reduction of Thm 11 (q = 1): positions j < ⌊N/2⌋ carry bits as
//              z_j = ±e₁; every later position i points to one of them, y_i = {j}
//   rank_pair  the rank argument of Thm 10 (q ≤ ⌊N/2⌋, exclude_self = false): with
//              h = ⌊N/2⌋, y_i = F ∪ {h + i} for i < h, F a (q−1)-subset of [h] fixed per
//              dataset (stream qsa.rank_pair.F of the seed); positions ≥ h: uniform sets
// Every set is stored sorted and has q distinct elements; targets are computed by the
// caller with the qSA formula from (z, sets). Shapes: z N × d', sets N × q.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/choice.h"

namespace attn {

// task.instances (the rows above).
enum class QsaInstances { random, disj, index, rank_pair };
inline constexpr Choice<QsaInstances> kQsaInstances[] = {{QsaInstances::random, "random"},
                                                         {QsaInstances::disj, "disj"},
                                                         {QsaInstances::index, "index"},
                                                         {QsaInstances::rank_pair, "rank_pair"}};

struct QsaConfig {
  int64_t N = 0, q = 0, d_out = 0;
  bool exclude_self = false, ball = false;
  QsaInstances instances = QsaInstances::random;
  double disj_fraction = 0.5;
};

// The instance-specific rules (UserError naming task.instances and the key to change).
void qsa_instances_check(const QsaConfig& c);

// Sample `index` of dataset `seed`. disj also writes *disjoint (1 iff a ∧ b = 0).
void qsa_draw_random(const QsaConfig& c, uint64_t seed, uint64_t index, double* z, int64_t* sets);
void qsa_draw_disj(const QsaConfig& c, uint64_t seed, uint64_t index, double* z, int64_t* sets,
                   int64_t* disjoint);
void qsa_draw_index(const QsaConfig& c, uint64_t seed, uint64_t index, double* z, int64_t* sets);
void qsa_draw_rank_pair(const QsaConfig& c, uint64_t seed, const std::vector<int64_t>& F,
                        uint64_t index, double* z, int64_t* sets);

// rank_pair's fixed set F: a uniform (q−1)-subset of [⌊N/2⌋], sorted, drawn once per seed.
std::vector<int64_t> qsa_rank_pair_fixed_set(const QsaConfig& c, uint64_t seed);

}  // namespace attn
