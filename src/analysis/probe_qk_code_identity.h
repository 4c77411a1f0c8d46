// The qk_code_identity probe (analysis/probes.h): the trained query-key product of `attention`
// read on the raw positional-code coordinates of `token_selection`, where the ground-truth
// solution of sparse token selection (Wang, Wei, Hsu, Lee 2024) is a multiple of the identity
// (issue #35, docs/sep2025.md#e3b-alignment).
//
// With a linear φ (Φ = X W_φ + b_φ, W_φ stored (d_in, m)), head h scores tokens i, j by
//   (x_i W_φ + b_φ) Q_h K_hᵀ (x_j W_φ + b_φ)ᵀ = x_iᵀ (W_φ Q_h)(W_φ K_h)ᵀ x_j + terms linear in one
// token (the bias, the query's flag), times the temperature. The probe takes the bilinear part on
// the code coordinates c = [d, d + code_dim) of token_selection's layout, where the query holds
// Σ_{j ∈ S} p_j and data token j holds p_j:
//   B_h = ((W_φ Q_h)(W_φ K_h)ᵀ)[c, c]   (code_dim × code_dim),   B = Σ_h B_h,
// i.e. qk_stats (analysis/qk_stats.h) of the weights W_q = (W_φ[c, :] Q)ᵀ, W_k = (W_φ[c, :] K)ᵀ,
// (H·dk, code_dim). Unlike qk_identity (model space, D = m), this is the space the theory's
// identity lives in. Scalars:
//   qk_code_identity_cosine      cos(B, I) = tr(B) / (√code_dim ‖B‖_F)
//   qk_code_identity_cosine_null the same for Gaussian weights of the same norms per head
//   qk_code_identity_c_star      tr(B) / code_dim (before the temperature)
//   qk_code_identity_residual    ‖B − c*·I‖_F / ‖B‖_F
//   qk_code_identity_head_cosine_max  max over heads h of cos(B_h, I)
// A model whose φ is not linear, or a code_dim < 2, logs qk_code_identity_applies = 0 and
// nothing else (else 1).
#pragma once

#include <cstdint>

#include "analysis/probes.h"
#include "analysis/qk_layout.h"

namespace attn {

// W_q, W_k of the code block (above) from a saved `attention` model with a linear φ: rows
// [first, first + count) of phi.w0 times q and k. UserError when the model has no linear φ.
QkLayerWeights qk_code_block_weights(const ModelTensors& saved, int64_t first, int64_t count);

void probe_qk_code_identity(const ProbeInput& in, FitLog& log);

}  // namespace attn
