// rank_pair: the pair of inputs behind Thm 10 (fully connected networks need first-layer
// width ≥ N·d'/2 for qSA; spec sanford2023 §3.6, claim C7). Analysis of a trained first layer,
// used by the rank_pair probe (analysis/probe_rank_pair.h); the instances themselves are the
// task's (tasks/qsa_instances.h).
//
// On a qsa rank_pair instance (task.instances = rank_pair; h = ⌊N/2⌋), y_i = F ∪ {h + i}
// for i < h, so output i contains z_{h+i}/q. A network sees X only through its first layer
// W₁ (width × N·d_in, row-major, acting on the flattened X, row i·d_in + k = X[i][k]; the
// z of token j are columns j·d_in .. j·d_in + d' − 1 in both encodings). If width < h·d',
// W₁ has a null direction Δ on the z coordinates of positions h .. 2h−1: W₁Δ = 0, scaled
// so that max_j ‖Δ_j‖ = 1. The two inputs equal to a sample except z_j = +Δ_j and
// z_j = −Δ_j (j = h .. 2h−1) have identical first-layer pre-activations, hence identical
// outputs, while their qSA targets at position i < h differ by (2/q)·Δ_{h+i}: by exactly
// 2/q at the position whose ‖Δ_{h+i}‖ = 1 — so no such network 1/q-approximates qSA.
// (For odd N the last position N−1 is in B but no i < h points at it; Δ leaves it alone.)
#pragma once

#include <cstdint>
#include <vector>

#include "core/params.h"
#include "tasks/batch.h"

namespace attn {

struct RankPairDirection {
  int64_t N = 0, d_in = 0, d_out = 0, q = 0;
  std::vector<double> delta;  // h × d': Δ_j for j = h .. 2h−1, max_j ‖Δ_j‖ = 1
  int64_t position = 0;       // the i < h with ‖Δ_{h+i}‖ = 1
  double residual = 0;        // max over rows r of |(W₁Δ)_r|, ≈ 0 up to rounding
};

// The null direction of W₁ (width × N·d_in, row-major) on z_h .. z_{2h−1}, for the qsa task
// with these parameters (section "task"). UserError when W₁ has none (width ≥ h·d' and
// full rank on those columns: the smallest singular value is above 1e-9 of the largest).
RankPairDirection rank_pair_direction(const double* W1, int64_t width, const Params& task_params);

struct RankPair {
  std::vector<double> x_plus, x_minus;  // N × d_in: the sample with z_j = ±Δ_j, j = h .. 2h−1
  std::vector<double> y_plus, y_minus;  // N × d': their qSA targets
};

// The pair built from sample `row` of a qsa batch (a rank_pair instance for the 2/q gap).
RankPair rank_pair_build(const RankPairDirection& direction, const Batch& batch, int64_t row);

}  // namespace attn
