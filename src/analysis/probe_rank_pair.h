// The rank_pair probe (analysis/probes.h): Thm 10's rank pair on a trained MLP (spec
// sanford2023 §3.6, claim C7), logged beside the test metrics of a run whose spec names it
// ([eval] probes = ["rank_pair"]; model = mlp, task = qsa, eval.instances = rank_pair).
//
// The MLP reads X only through its first layer W₁ (width × N·d_in, the transpose of the
// saved tensor mlp.w0). With h = ⌊N/2⌋ and width < h·d′, W₁ has a null direction Δ on the z
// coordinates of positions h .. 2h−1 (analysis/rank_pair.h); the two inputs made from test
// sample 0 with z_j = ±Δ_j get the same outputs while their targets differ by 2/q at one
// position, so one of them has error at least 1/q there, however the net was trained.
// Scalars (every such run with a test set):
//   rank_pair_applies           1 when width < h·d′ (the pair exists), else 0 and no others
//   rank_pair_output_gap        max |f(x₊) − f(x₋)| over all outputs (0 up to the net's float
//                               rounding)
//   rank_pair_target_gap        ‖y₊ − y₋‖ at the pair's position (2/q)
//   rank_pair_certified_error   max over x₊, x₋ and positions of ‖f(x)_i − y_i‖ (≥ 1/q − gap/2)
//   rank_pair_null_residual     max |(W₁Δ)_r| in double (≈ 0)
#pragma once

#include "analysis/probes.h"

namespace attn {

void probe_rank_pair(const ProbeInput& in, FitLog& log);

}  // namespace attn
