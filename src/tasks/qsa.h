// qsa: q-sparse averaging (Sanford et al. 2023, spec §2.1).
//
// N positions; z_i ∈ R^{d'} on the unit sphere (or uniform in the unit ball); y_i a uniform
// q-subset of [N] (0-based; optionally excluding i). Target at every position:
//   qSA(X)_i = (1/q) Σ_{j ∈ y_i} z_j.
// Encodings of token i:
//   multi_hot  [z_i, multi-hot of y_i ∈ {0,1}^N, one-hot of i ∈ {0,1}^N]   d_in = d' + 2N
//   indices    [z_i, the q indices of y_i (sorted, 0-based), i]            d_in = d' + q + 1
// Shapes: X n × N × d_in, Y n × N × d'. Raw: z (n, N, d') float64, sets (n, N, q) int64.
// Constant: success_threshold = 1/(2q).
// instances (qsa_instances.h): random (above), or the hard instances disj, index, rank_pair of
// the lower-bound proofs; disj adds raw disjoint (n,) int64 and the constants query_position
// = 2q (int64) and disj_threshold = −1 + 1/q (float64).
#pragma once

#include <memory>
#include <vector>

#include "core/params.h"
#include "tasks/task.h"

namespace attn {

std::vector<ParamSpec> qsa_schema();
std::unique_ptr<Task> qsa_make(const Params& params);

// The targets: y_i = (1/q) Σ_{j ∈ y_i} z_j for i < N (y N × d', z N × d', sets N × q), summed
// in set order then multiplied by 1/q — the task's own formula, for every instance kind.
void qsa_targets(int64_t N, int64_t q, int64_t d_out, const double* z, const int64_t* sets,
                 double* y);

// Brute-force reference for tests: targets y (N × d') from z (N × d') and sets (N × q).
void qsa_reference(int64_t N, int64_t q, int64_t d_out, const double* z, const int64_t* sets,
                   double* y);
// The registry's reference (TaskReference): qsa_reference on the sample's raw z and sets.
void qsa_batch_reference(const Params& params, const Batch& batch, int64_t row, double* y);

}  // namespace attn
