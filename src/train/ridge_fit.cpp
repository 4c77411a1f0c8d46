// RidgeSolver::fit and fit_distributed: both are fit_on, the stages of ridge_stages.h over a
// communicator (fit: comm_self()), followed by the log stage.
#include <algorithm>

#include "core/error.h"
#include "core/log.h"
#include "train/ridge_share.h"
#include "train/ridge_stages.h"

namespace attn {

void ridge_stage_log(const RidgeFitRun& run, const RidgeSolver::State& st, FitLog& log) {
  if (!run.comm->is_root()) return;
  log.scalar("lambda", st.lambda);
  log.scalar("lambda_index", st.chosen);
  log.scalar("lambdas_below_floor", run.below_floor);
  log.scalar("ridge_primal", st.primal ? 1 : 0);
  if (run.dual_features(st)) log.scalar("dual_features_recomputed", run.recompute ? 1 : 0);
  log.scalar("n_fit", static_cast<double>(st.n_fit));
  if (!run.kernel) log.scalar("param_count", static_cast<double>(st.P * st.K));
  if (run.comm->size() > 1) log.scalar("fit_ranks", run.comm->size());
  if (run.below_floor > 0)
    log_warn(
        "attnlab: %d of the λ values are below the numerical floor %.3g of the %s; "
        "they are solved as the minimum-norm (pseudo-inverse) solution\n",
        run.below_floor, st.floor, st.primal ? "Gram" : "kernel");
}

void RidgeSolver::fit(const Batch& train, FitLog& log) {
  fit_on(train, 0, train.n, comm_self(), log);
}

void RidgeSolver::fit_distributed(const Batch& local, int64_t first, int64_t n, const Comm& comm,
                                 FitLog& log) {
  int64_t a, b;
  comm_block(n, comm.rank(), comm.size(), &a, &b);
  ATTN_ASSERT(a == first && b - a == local.n,
              "fit_distributed: this rank's samples are not its block");
  fit_on(local, first, n, comm, log);
}

void RidgeSolver::fit_on(const Batch& local, int64_t first, int64_t n, const Comm& comm,
                        FitLog& log) {
  auto s = state_begin(local.shape, n);
  RidgeFitRun run;
  run.features = features_.get();
  run.kernel = kernel_.get();
  run.options = &options_;
  run.comm = &comm;
  run.local = &local;
  run.first = first;
  run.n = n;
  run.m = local.n;
  run.mf = run.rank_count(comm.rank(), s->n_fit);
  run.B = std::max<int64_t>(1, options_.block);

  ridge_stage_memory(run, *s);
  if (comm.size() == 1 && !run.kernel && (s->primal || !run.recompute))
    run.share = ridge_share_features(*features_, local, n, run.B, !s->primal);
  ridge_stage_labels(run, *s);
  {
    ColMat A, Bv;
    ridge_stage_system(run, *s, A, Bv);
    ridge_stage_spectrum(run, *s, std::move(A), Bv);
  }
  ridge_stage_choose(run, *s, log);
  ridge_stage_readout(run, *s);
  if (options_.refit && s->n_val > 0) ridge_stage_refit(run, *s, log);
  // One rank storing the dual features keeps them for the λ path (evaluate()).
  if (comm.size() == 1 && run.dual_features(*s) && !run.recompute)
    s->Phi_fit = std::move(run.Phi_mine);
  ridge_stage_log(run, *s, log);
  state_ = std::move(s);
}

}  // namespace attn
