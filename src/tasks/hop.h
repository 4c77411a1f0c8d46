// hop: k-hop induction heads (Sanford, Hsu, Telgarsky 2024, "Transformers, parallel
// computation, and logarithmic depth"; facts from the authors' published task generator).
//
// A string σ_0 … σ_{L−1} (L = N − 1) over A symbols: σ_0 uniform, each later σ_i uniform on the
// alphabet minus σ_{i−1}. find(i) = 1 + the largest j < i with σ_j = σ_i (undefined if none);
// find^k the k-fold iterate (undefined propagates; each iterate searches before its own
// position); hop_k(σ)_i = σ_{find^k(i)}, hop_0(σ)_i = σ_i, "none" when find^k(i) is undefined.
//
// Multi-task encoding (N positions): position 0 names k (drawn uniformly from 0 … k_max per
// sequence, or every sequence uses task.k when k >= 0), positions 1 … N−1 hold σ_0 … σ_{N−2};
// the output at position 0 is blank, at t >= 1 it is hop_k(σ)_{t−1} (so it depends only on
// inputs <= t).
//   X  n × N × (A + k_max + 1)  one-hot: column σ_{t−1} at t >= 1; column A + k at position 0
//   Y  n × N × (A + 2)          categorical, one-hot: classes 0 … A−1 the symbols, A blank,
//                               A + 1 none ("does not exist"); no position ignored (the loss
//                               sees every one)
// Raw (per sample): symbols (N−1,) int64 σ; k () int64 (a slice label: metrics per k);
// metric_mask (N,) int64, 1 where the target is a symbol (blank and none do not count for the
// metrics); hop_chain (N, k_max+1) int64, entry (t, j) the input position find^j(t−1) + 1
// holding σ_{find^j(t−1)}, −1 where undefined (row 0 all −1; entry (t, 0) = t).
// Streams: hop.symbols (σ, index i), hop.k (k, index i; not drawn when task.k >= 0).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/params.h"
#include "tasks/task.h"

namespace attn {

std::vector<ParamSpec> hop_schema();
std::unique_ptr<Task> hop_make(const Params& params);

// find over σ (L symbols): out[i] = 1 + the largest j < i with σ_j = σ_i, −1 if none. O(L + A).
void hop_find(const int64_t* sigma, int64_t L, int64_t A, int64_t* out);

// One sequence's pointer chain and targets from σ (N − 1 symbols) and k <= k_max: chain
// (N × (k_max+1)) as the raw hop_chain, cls (N) the target classes (blank A at position 0,
// none A + 1 where find^k(t − 1) is undefined, else σ_{find^k(t − 1)}).
void hop_targets(const int64_t* sigma, int64_t N, int64_t A, int64_t k, int64_t k_max,
                 int64_t* chain, int64_t* cls);

// Brute-force reference: the targets' classes of a sequence, out (N values) from σ (N − 1
// symbols) and k by scanning backwards for every position and hop: blank (A) at 0, none (A + 1)
// where find^k is undefined.
void hop_reference(const int64_t* sigma, int64_t N, int64_t A, int64_t k, int64_t* out);
// The registry's reference (TaskReference): σ and k decoded from the sample's one-hot X.
void hop_batch_reference(const Params& params, const Batch& batch, int64_t row, double* y);

}  // namespace attn
