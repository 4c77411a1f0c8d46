// Dual ridge without storing the n × P feature matrix: the kernel ΦΦᵀ and the read-outs Φᵀ·C
// from tiles of `tile` samples whose features are recomputed when needed (ridge_state.h).
#include <algorithm>

#include "core/error.h"
#include "core/memory.h"
#include "train/ridge_state.h"

namespace attn {

int64_t ridge_dual_tile_rows(int64_t n, int64_t P, int64_t block, uint64_t budget_bytes) {
  // Two tiles of features (rows I and J) at once, in a quarter of the budget (other runs of a
  // sweep may be sizing their tiles from the same free memory), at most kMaxRows: larger tiles
  // save little recomputation once a tile is a good fraction of n.
  constexpr int64_t kMaxRows = 4096;
  const uint64_t per_row = 2 * 8 * static_cast<uint64_t>(std::max<int64_t>(P, 1));
  const int64_t rows =
      static_cast<int64_t>(std::min<uint64_t>(budget_bytes / 4 / per_row, kMaxRows));
  const int64_t lo = std::max<int64_t>(1, block);
  return std::min(std::max(rows, lo), std::max(lo, n));
}

void ridge_features_rows(const FeatureMap& features, const Batch& data, int64_t first,
                         int64_t count, int64_t block, RowMat& F) {
  for (int64_t b = 0; b < count; b += block) {
    const int64_t k = std::min(block, count - b);
    features.features(data.x(first + b), k, F.data() + b * F.cols());
  }
}

ColMat ridge_dual_kernel_tiled(const FeatureMap& features, const Batch& data, int64_t n,
                               int64_t tile, int64_t block) {
  ATTN_ASSERT(tile >= 1 && block >= 1 && n <= data.n, "bad tile");
  const int64_t P = features.dim();
  ColMat A(n, n);
  ridge_advise_huge(A);
  A.setZero();
  RowMat FI(std::min(tile, n), P), FJ(std::min(tile, n), P);
  ridge_advise_huge(FI);
  ridge_advise_huge(FJ);
  for (int64_t i0 = 0; i0 < n; i0 += tile) {
    const int64_t mi = std::min(tile, n - i0);
    ridge_features_rows(features, data, i0, mi, block, FI);
    // Diagonal tile: its lower triangle (the eigensolver reads the lower triangle only).
    A.block(i0, i0, mi, mi).selfadjointView<Eigen::Lower>().rankUpdate(FI.topRows(mi));
    for (int64_t j0 = 0; j0 < i0; j0 += tile) {
      const int64_t mj = std::min(tile, i0 - j0);
      ridge_features_rows(features, data, j0, mj, block, FJ);
      A.block(i0, j0, mi, mj).noalias() = FI.topRows(mi) * FJ.topRows(mj).transpose();
    }
  }
  return A;
}

ColMat ridge_features_t_times_tiled(const FeatureMap& features, const Batch& data, int64_t n,
                                    int64_t tile, int64_t block, const ColMat& C) {
  ATTN_ASSERT(C.rows() == n, "C must have one row per sample");
  const int64_t P = features.dim();
  ColMat out = ColMat::Zero(P, C.cols());
  RowMat F(std::min(tile, std::max<int64_t>(n, 1)), P);
  ridge_advise_huge(F);
  for (int64_t i0 = 0; i0 < n; i0 += tile) {
    const int64_t mi = std::min(tile, n - i0);
    ridge_features_rows(features, data, i0, mi, block, F);
    out.noalias() += F.topRows(mi).transpose() * C.middleRows(i0, mi);
  }
  return out;
}

}  // namespace attn
