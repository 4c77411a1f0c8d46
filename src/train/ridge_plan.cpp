// Ridge's memory-plan stage (ridge_stages.h): what the fit will hold, checked against
// available memory before anything large is allocated, and for dual feature models on one
// rank whether Φ is stored or recomputed per tile (train.dual_features).
#include <algorithm>
#include <string>

#include "core/error.h"
#include "core/memory.h"
#include "train/ridge_stages.h"

namespace attn {
namespace {

// One rank, the whole fit (doubles): the D × D system and its eigenvectors, plus stored dual
// features / inputs. A refit on all n samples needs, on top: storing, the n × P features and
// three n × n matrices; recomputing (the spectrum is freed first), one n × n matrix and the
// tiles.
void memory_one_rank(RidgeFitRun& run, const RidgeSolver::State& st, int64_t D) {
  const RidgeOptions& o = *run.options;
  const uint64_t n64 = static_cast<uint64_t>(run.n), P64 = static_cast<uint64_t>(st.P);
  const uint64_t B64 = static_cast<uint64_t>(run.B);
  const uint64_t system = 2 * static_cast<uint64_t>(D) * D + B64 * (P64 + D);
  const bool dual_features = run.dual_features(st);
  const bool refit = o.refit && st.n_val > 0;
  const uint64_t need_store =
      system + static_cast<uint64_t>(st.n_fit) * P64 + (refit ? n64 * P64 + 3 * n64 * n64 : 0);
  const uint64_t need_recompute = std::max(system, refit ? n64 * n64 : 0);
  const uint64_t budget =
      static_cast<uint64_t>(0.9 * static_cast<double>(memory_available_bytes()));
  run.recompute =
      dual_features && (o.dual_features == DualFeatures::recompute ||
                        (o.dual_features == DualFeatures::automatic && 8 * need_store > budget));
  memory_check(8 * (!dual_features ? system : run.recompute ? need_recompute : need_store),
               "ridge with a " + std::to_string(D) + " x " + std::to_string(D) +
                   (st.primal ? " Gram" : " kernel"),
               st.primal ? "lower model.heads / model.width, or use train.solver = dual"
               : dual_features && !run.recompute
                   ? "lower train.n, use train.solver = primal, or train.dual_features = recompute"
                   : "lower train.n");
  run.tile = !run.recompute ? 0
             : o.dual_tile > 0
                 ? o.dual_tile
                 : ridge_dual_tile_rows(run.n, st.P, run.B,
                                        budget > 8 * need_recompute ? budget - 8 * need_recompute
                                                                    : 0);
}

// Several ranks (doubles): this rank's share, plus the D × D system and its eigenvectors on
// rank 0. Each rank stores the features of its own samples (train.dual_features is not used).
void memory_per_rank(const RidgeFitRun& run, const RidgeSolver::State& st, int64_t D) {
  const int r = run.comm->rank();
  const uint64_t m = static_cast<uint64_t>(run.m), mf = static_cast<uint64_t>(run.mf);
  const uint64_t n = static_cast<uint64_t>(run.n), K = static_cast<uint64_t>(st.K);
  uint64_t doubles = static_cast<uint64_t>(run.B) * (st.P + D) + m * K * 3;
  if (st.primal) doubles += static_cast<uint64_t>(D) * D * 3 / 2;
  if (run.dual_features(st)) doubles += m * st.P * 2 + mf * n;
  if (run.kernel) doubles += n * st.x_size + 2 * mf * n;
  if (run.comm->is_root()) doubles += 2 * static_cast<uint64_t>(D) * D;
  memory_check(8 * doubles, "distributed ridge (rank " + std::to_string(r) + ") with a " +
                                std::to_string(D) + " x " + std::to_string(D) +
                                (st.primal ? " Gram" : " kernel"),
               st.primal ? "lower model.heads / model.width, or use more ranks"
                         : "lower train.n, or use train.solver = primal");
}

}  // namespace

void ridge_stage_memory(RidgeFitRun& run, const RidgeSolver::State& st) {
  const int64_t D = st.primal ? st.P : st.n_fit;  // size of the eigenproblem
  if (run.comm->size() == 1) {
    memory_one_rank(run, st, D);
    return;
  }
  run.recompute = false;
  ridge_phase(run, [&] { memory_per_rank(run, st, D); });
}

}  // namespace attn
