// Sharing between the ridge fits of one process (a run group, experiment/run_groups.h): the
// features Φ of the training inputs, the Gram ΦᵀΦ (primal) or kernel ΦΦᵀ (dual) and the
// spectrum of a fit split's system, for fits of feature models on one rank (dual fits that
// recompute Φ per tile do not share).
//
// Off unless ridge_share_enable(true) (the runner's group workers). An entry is made by the
// first fit that asks, for all of its n samples; a later fit uses it when its own inputs
// [0, n) equal the entry's first n (compared byte for byte) and its feature map gives the
// same features on the first block of them, so a fit never uses another model's or another
// data set's work. Everything shared is computed by the same operations, on the same blocks,
// as the fit computes it alone, so a shared fit is bit for bit the unshared one (whichever
// other runs were in its group: shards and resumed sweeps store the same values):
//   features  Φ of the entry's rows, `block` samples at a time from sample 0; rows [0, count)
//             are its full blocks below count plus the partial block [⌊count/block⌋·block,
//             count) computed again by one call of that size, as the fit alone calls it (a
//             feature map's rounding may depend on how many samples one call gets);
//   system    primal: the Gram ΦᵀΦ over rows [0, count), accumulated block by block as the
//             fit does, and ΦᵀY from the same blocks; dual: the kernel ΦΦᵀ of rows
//             [0, count), one rank update. The last two counts are kept (a fit split and its
//             refit), shared by the fits of the same n;
//   spectrum  of the last fit split, shared by the fits of that split (the targets of a
//             group, each with its own labels as right-hand sides, its own validation-chosen
//             λ and its own refit);
//   test      features: Φ of a whole test set (an entry of its own, made by predict() or the
//             test λ path, ridge_shared_test_features in ridge_state.h), `block` samples at a
//             time from sample 0 as they compute it alone; every run of a group has the same
//             test inputs, so the group computes them once instead of twice per run.
// Entries are dropped oldest first when a new one would not fit in half the available
// memory; none is made if it would not fit alone.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <utility>
#include <vector>

#include "train/ridge_state.h"

namespace attn {

void ridge_share_enable(bool on);
bool ridge_share_enabled();
void ridge_share_clear();     // drops every entry
int64_t ridge_share_hits();   // lookups answered from an existing entry (for tests)

struct RidgeShareEntry {
  int64_t rows = 0, x_size = 0, block = 0;
  std::vector<double> X;  // rows × x_size, the inputs
  RowMat first_block;     // features of the first min(block, rows) samples
  RowMat Phi;             // rows × P, computed `block` samples at a time
  // The last two systems made, oldest first: the lower triangle (unscaled, upper zero) of
  // ΦᵀΦ over rows [0, count) (primal, P × P) or of ΦΦᵀ of those rows (dual, count × count).
  struct System {
    bool dual;
    int64_t count;
    ColMat A;
  };
  std::vector<System> systems;
  // The spectrum of the system (primal or dual) of split [0, spectrum_n).
  bool spectrum_dual = false;
  int64_t spectrum_n = -1;
  Eigen::VectorXd eig;
  RidgeSpectrum Q;
};

// The entry for samples [0, n) of data under `features` (block: samples per feature call),
// made now if there is none and it fits in memory (dual: with room for two n × n kernels);
// null when sharing is off or it does not fit.
RidgeShareEntry* ridge_share_features(const FeatureMap& features, const Batch& data, int64_t n,
                                      int64_t block, bool dual);
// The features of samples [0, count) of data (count ≤ e.rows), bit for bit
// ridge_features_rows(features, data, 0, count, e.block, ·).
RowMat ridge_share_rows(const RidgeShareEntry& e, const FeatureMap& features, const Batch& data,
                        int64_t count);
// The system of rows [0, count) (see RidgeShareEntry::systems): primal accumulated as
// ridge_gram_accumulate does, dual as ridge_feature_gram does on one rank.
const ColMat& ridge_share_system(RidgeShareEntry& e, const FeatureMap& features,
                                 const Batch& data, bool dual, int64_t count);
// Primal: Bv += Φᵀ Y over rows [0, count), in the blocks ridge_gram_accumulate uses.
void ridge_share_labels_product(const RidgeShareEntry& e, const FeatureMap& features,
                                const Batch& data, int64_t count, const ColMat& Y, ColMat& Bv);

}  // namespace attn
