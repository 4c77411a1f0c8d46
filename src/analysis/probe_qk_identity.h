// The qk_identity probe (analysis/probes.h): how close a trained attention layer's query-key
// product is to c·I, next to a Gaussian null of the same norms (analysis/qk_stats.h, the
// statistics `attnlab qk-stats` reports for pretrained checkpoints, Fu et al. 2023 §4.4). The
// measurement both seed papers point at: Fu et al.'s pretrained W_qᵀW_k ≈ c·I, and the
// sparse-token-selection solution of Wang et al. (2024) whose query-key product on the
// positional codes is a multiple of the identity (issue #35).
//
// A = W_qᵀW_k is taken in the space the scores read (D × D): the embedding φ(x) of `attention`
// (D = model.m), the residual stream of `transformer` and `gpt2` (D = model.m), not the raw
// tokens; the statistics are invariant under orthogonal changes of that basis, not under others.
// Scalars (layer 0, all heads summed: A_0 = Σ_h A_{0,h}):
//   qk_identity_cosine        cos(A_0, I) = tr(A_0) / (√D ‖A_0‖_F)
//   qk_identity_cosine_null   the same for the null weights (≈ 0, sd ≈ 1/D)
//   qk_identity_c_star        tr(A_0) / D, the best c
//   qk_identity_residual      ‖A_0 − c*·I‖_F / ‖A_0‖_F
//   qk_identity_head_cosine_max  max over heads h of cos(A_{0,h}, I)
// and the series qk_identity_cosine (step l: cos(A_l, I) of layer l), for every layer.
// A model with D < 2 logs qk_identity_applies = 0 and nothing else (else 1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/probes.h"
#include "analysis/qk_layout.h"

namespace attn {

// Every attention layer's W_q, W_k in qk_layout.h's (out, in) convention, from a saved model
// (`attention`: q, k (m, H·dk) stored (in, out); `transformer`: layer{l}.q, layer{l}.k the same;
// `gpt2`: h.{l}.attn.c_attn.weight (m, 3m) Conv1D). UserError for another model.
std::vector<QkLayerWeights> qk_model_layers(const ModelTensors& saved);

void probe_qk_identity(const ProbeInput& in, FitLog& log);

struct QkLayerResult;
// Logs r's statistics as the scalars <prefix>_cosine, <prefix>_cosine_null, <prefix>_c_star,
// <prefix>_residual and <prefix>_head_cosine_max (the list above, for any prefix).
void qk_identity_log_scalars(const std::string& prefix, const QkLayerResult& r, FitLog& log);

}  // namespace attn
