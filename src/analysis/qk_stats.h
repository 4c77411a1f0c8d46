// Query-key product statistics (Fu et al. 2023, spec §4.4): how close W_qᵀW_k is to c·I.
//
// Shapes: W_q, W_k are (out, in) = (H·hs, D) row-major (see qk_layout.h). Head h is rows
// [h·hs, (h+1)·hs). Per-head bilinear part A_{l,h} = (W_q^h)ᵀ W_k^h (D × D, rank ≤ hs);
// layer aggregate A_l = Σ_h A_{l,h} = W_qᵀ W_k. The attention score of head h is
// (W_q^h x + b_q^h)·(W_k^h y + b_k^h)/√hs, so xᵀA_{l,h}y is its bilinear part before the
// 1/√hs scale; biases are not part of A.
//
// Statistics of a D × D matrix A (D ≥ 2):
//   identity cosine   cos(A, I) = tr(A) / (√D ‖A‖_F)
//   diagonal ratio    mean_i A_ii / mean_{i≠j} |A_ij|     (signed: the null model gives ≈ 0)
//   |diag| ratio      mean_i |A_ii| / mean_{i≠j} |A_ij|   (the null model gives ≈ 1)
//   positive diagonal fraction of i with A_ii > 0
//   best identity fit c* = tr(A)/D, relative residual ‖A − c*I‖_F / ‖A‖_F
//                     (residual² = 1 − cos², computed directly for accuracy)
// A ratio with a zero denominator is ±inf (e.g. an exact c·I) or NaN (0/0); the
// cosine and residual of A = 0 are NaN. Never a crash.
//
// Null model: W_q, W_k replaced by i.i.d. Gaussians of the same shapes, each head block
// rescaled to the real block's Frobenius norm (so the layer norms match too); draws come
// from Rng(seed, "qk_stats.null.query" / "qk_stats.null.key", layer). Its products have
// cos ≈ 0 (sd ≈ 1/D), diagonal ratio ≈ 0 (sd ≈ 1.25/√D), |diag| ratio ≈ 1 and
// residual ≈ 1. (Spec §4.4 says "diagonal ratio ≈ 1" for the null model: that holds for
// the |diag| ratio; the signed ratio of the definition is ≈ 0, since a Gaussian diagonal
// has mean 0.)
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "analysis/qk_layout.h"

namespace attn {

struct QkMatrixStats {
  double c_star = 0.0;
  double identity_cosine = 0.0;
  double diag_ratio = 0.0;
  double abs_diag_ratio = 0.0;
  double positive_diag_fraction = 0.0;
  double residual = 0.0;
  double frobenius = 0.0;  // ‖A‖_F
};

// Statistics of the row-major D × D matrix A (D ≥ 2).
QkMatrixStats qk_matrix_stats(const double* A, int64_t D);

// A = (W_q^h)ᵀ W_k^h, row-major D × D (D = w.in), head h of size head_size.
void qk_head_product(const QkLayerWeights& w, int64_t head, int64_t head_size, double* A);

// The null-model weights of a layer (see above); heads splits the norm matching.
QkLayerWeights qk_null_weights(const QkLayerWeights& w, int64_t heads, uint64_t seed);

struct QkHeadResult {
  int64_t head = 0;
  QkMatrixStats stats, null_stats;
};

struct QkLayerResult {
  int64_t layer = 0;
  int64_t D = 0, heads = 0, head_size = 0;
  QkMatrixStats stats, null_stats;  // of A_l and of the null model's A_l
  std::vector<QkHeadResult> head_results;
  // Top-left block × block corners (row-major) kept for heat maps, when asked for.
  int64_t block = 0;
  std::vector<double> layer_block;
  std::map<int64_t, std::vector<double>> head_blocks;  // head -> corner of A_{l,h}
};

struct QkAnalyzeOptions {
  int64_t heads = 1;
  uint64_t seed = 0;                 // null model seed
  int64_t block = 0;                 // corner size to keep (clipped to D); 0: none
  std::vector<int64_t> block_heads;  // heads whose corner is kept
};

// All statistics of one layer: A_l, every A_{l,h}, and their null-model counterparts.
// Cost 4·D²·out flops (Eigen GEMM); memory 2·D² + 2·out·D doubles beyond the weights.
QkLayerResult qk_layer_analyze(const QkLayerWeights& w, const QkAnalyzeOptions& options);

// Bytes qk_layer_analyze needs beyond the layer's weights (for memory checks).
uint64_t qk_layer_analyze_bytes(int64_t out, int64_t in);

}  // namespace attn
