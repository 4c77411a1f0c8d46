// Private to src/train/ridge*.cpp: one ridge fit as named stages over a communicator. The
// local fit is the distributed fit on one rank (comm_self()): every stage runs the same code,
// and its collectives are the identity there.
//
// Rank r holds the contiguous block [first, first + m) of the n training samples
// (comm_block); the fit split is [0, n_fit), validation [n_fit, n), so the rank's fit rows are
// its local [0, mf) and its validation rows [mf, m). Stages, in order (RidgeSolver::fit_on):
//   memory plan      sizes checked before allocating; dual feature models: store Φ or
//                    recompute it per tile (one rank only)                    ridge_plan.cpp
//   labels           centred by the fit split's mean (a sum over ranks)       ridge_system.cpp
//   system assembly  the D × D Gram ΦᵀΦ/n_fit (primal) or kernel (dual), lower triangle, on
//                    rank 0; primal also ΦᵀYc/n_fit                            ridge_system.cpp
//   spectrum         eigendecomposition on rank 0 (or the band form where it is faster:
//                    ridge_band.h), C = Qᵀ·(right-hand sides), the numerical floor
//                                                                              ridge_system.cpp
//   λ choice         the path's solutions broadcast, each rank scores its validation rows,
//                    rank 0 sums the squared errors and chooses               ridge_choose.cpp
//   read-out         the solution at the chosen λ on every rank               ridge_choose.cpp
//   refit            train.refit: one direct solve on all n at that λ         ridge_refit.cpp
//   log              the fit's scalars, on rank 0                              ridge_fit.cpp
// Collectives are called in the same order on every rank; every local step runs inside
// ridge_phase, so an error on one rank fails the fit on all.
#pragma once

#include <functional>
#include <vector>

#include "mpi/comm.h"
#include "train/ridge_state.h"

namespace attn {

struct RidgeShareEntry;

// What the stages of one fit share: the inputs, this rank's place, the memory plan, and the
// intermediate results that outlive one stage.
struct RidgeFitRun {
  const FeatureMap* features = nullptr;   // feature models
  const KernelFunction* kernel = nullptr; // kernel models
  const RidgeOptions* options = nullptr;
  const Comm* comm = nullptr;
  const Batch* local = nullptr;  // this rank's samples [first, first + m) of the n
  int64_t first = 0, n = 0, m = 0;
  int64_t mf = 0;  // this rank's fit rows: local [0, mf)
  int64_t B = 1;   // samples per feature block
  // Memory plan: dual feature models recompute Φ per tile of `tile` samples (one rank).
  bool recompute = false;
  int64_t tile = 0;
  ColMat Yc;                  // m × K: local labels centred by the fit split's mean
  std::vector<double> X_all;  // kernel models: every rank's inputs, n × x_size
  RowMat Phi_mine;            // dual feature models storing Φ: this rank's fit features
  int below_floor = 0;        // λ values of the grid at or below the floor (rank 0)
  // Feature-model fits on one rank inside a run group (not recomputing Φ): the shared
  // features, Gram or kernel and spectrum of these inputs (train/ridge_share.h); else null.
  RidgeShareEntry* share = nullptr;

  bool dual_features(const RidgeSolver::State& st) const { return !st.primal && !kernel; }
  // Where rank s's rows of [0, N) start, and how many of them it holds.
  int64_t rank_first(int s) const;
  int64_t rank_count(int s, int64_t N) const;
};

// Runs f; on several ranks inside comm_phase (errors agreed on by every rank). On one rank f
// runs as it is, so its exceptions (std::bad_alloc, IoError) reach the caller unchanged.
inline void ridge_phase(const RidgeFitRun& run, const std::function<void()>& f) {
  if (run.comm->size() == 1)
    f();
  else
    comm_phase(*run.comm, f);
}

// The stages (see the top of this file).
void ridge_stage_memory(RidgeFitRun& run, const RidgeSolver::State& st);
void ridge_stage_labels(RidgeFitRun& run, RidgeSolver::State& st);
// A (D × D, lower triangle, scaled by 1/n_fit) and, primal, Bv = ΦᵀYc/n_fit (P × K); both on
// rank 0 only (empty elsewhere).
void ridge_stage_system(RidgeFitRun& run, RidgeSolver::State& st, ColMat& A, ColMat& Bv);
void ridge_stage_spectrum(RidgeFitRun& run, RidgeSolver::State& st, ColMat&& A, const ColMat& Bv);
void ridge_stage_choose(RidgeFitRun& run, RidgeSolver::State& st, FitLog& log);
void ridge_stage_readout(RidgeFitRun& run, RidgeSolver::State& st);
void ridge_stage_refit(RidgeFitRun& run, RidgeSolver::State& st, FitLog& log);
void ridge_stage_log(const RidgeFitRun& run, const RidgeSolver::State& st, FitLog& log);

// Blocks over ranks (ridge_blocks.cpp), shared by the system assembly and the refit.
// ΦᵀΦ (lower triangle, added to G) and ΦᵀY (added to Bv) over local rows [0, count).
void ridge_gram_accumulate(const RidgeFitRun& run, int64_t count, const ColMat& Y, ColMat& G,
                           ColMat& Bv);
// Sums a lower-triangle Gram and a P × K matrix on rank 0 (in place there).
void ridge_gram_sum_to_root(const RidgeFitRun& run, ColMat& G, ColMat& Bv);
// The lower triangle of ΦΦᵀ over samples [0, N) (N × N, unscaled) on rank 0, from each rank's
// features of its rows (Phi_mine: rank_count(rank, N) × P): rank r forms the columns of its
// rows, the diagonal block by a rank update, the blocks below it against the later ranks'
// features (broadcast in turn). One rank: rankUpdate(Φ) itself.
ColMat ridge_feature_gram(const RidgeFitRun& run, const RowMat& Phi_mine, int64_t N);
// The kernel matrix over samples [0, N) (N × N, unscaled; lower triangle at least) on rank 0:
// rank r forms the columns of its rows from the diagonal down (inside ridge_phase), then they
// are gathered. One rank: one kernel call on the whole set.
ColMat ridge_kernel_gram(const RidgeFitRun& run, int64_t N);
// Rows [0, count) of Y (local), stacked over ranks on rank 0 (N × K); empty elsewhere.
ColMat ridge_rows_gather(const RidgeFitRun& run, const ColMat& Y, int64_t count, int64_t N);
// Σ over ranks of Φ_mineᵀ·C[rows of this rank] / N on every rank (P × C.cols()): the
// read-outs of dual coefficients C (N × m, on every rank) for stored features Phi_mine.
ColMat ridge_features_t_times(const RidgeFitRun& run, const RowMat& Phi_mine, const ColMat& C,
                              int64_t N);

}  // namespace attn
