// token_selection: sparse token selection STS_q (Wang, Wei, Hsu, Lee 2024, "Transformers
// provably learn sparse token selection while fully-connected nets cannot"; after Sanford et al.
// 2023; docs/sep2025.md says which details are the papers' and which are ours).
//
// Tokens x_0 … x_{N−1} i.i.d. N(0, I_d) and S a uniform q-subset of [N] (the paper's); target
//   STS_q = (1/q) Σ_{j ∈ S} x_j,
// read at a query token that names S through positional codes p_0 … p_{N−1} ∈ R^{code_dim}:
// its code is Σ_{j ∈ S} p_j (task.query_code = sum; mean: divided by q). Codes (task.codes):
//   stochastic  redrawn for every sequence from the sample's own stream (the papers' stochastic
//               positional encoding; code distribution ours)
//   fixed       p_j drawn once per dataset seed and position j (stream token_selection.
//               fixed_codes, index j): a dataset constant, the same p_j at every length
// task.code_dist: p_j uniform on the unit sphere (ours, default) or N(0, I/code_dim).
// Layout (ours: attnlab reads a single output at token 0; the paper appends the query last):
//   X  n × (N+1) × (d + code_dim + 1): row 0 the query [0, query code, 1], row j+1 the data
//      token [x_j, p_j, 0]                       (widths independent of N: eval.N works)
//   Y  n × 1 × d
// Raw: selected (q,) int64, S sorted. Constant (fixed codes): codes (N, code_dim) float64.
// Streams: token_selection.x, token_selection.subset, token_selection.codes (stochastic),
// token_selection.fixed_codes (fixed: code j drawn at index j, so a longer sequence keeps the
// first N).
#pragma once

#include <memory>
#include <vector>

#include "core/params.h"
#include "tasks/task.h"

namespace attn {

std::vector<ParamSpec> token_selection_schema();
std::unique_ptr<Task> token_selection_make(const Params& params);

// The registry's reference (TaskReference): the average of the data tokens of X whose
// positions the sample's raw `selected` names.
void token_selection_batch_reference(const Params& params, const Batch& batch, int64_t row,
                                     double* y);

}  // namespace attn
