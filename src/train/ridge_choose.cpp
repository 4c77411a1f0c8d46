// Ridge's λ-choice and read-out stages (ridge_stages.h): the solutions of the whole λ path
// from rank 0's spectrum, each rank's validation error along it, the chosen λ, and the
// read-out at that λ on every rank.
#include <Eigen/Dense>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "train/ridge_stages.h"

namespace attn {
namespace {

// Dual feature models whose Φ_fit is not kept on rank 0 (recomputed per tile, or spread over
// the ranks) form the read-outs of the whole path during the fit (for evaluate()).
bool path_formed(const RidgeFitRun& run, const RidgeSolver::State& st) {
  return run.dual_features(st) && (run.recompute || run.comm->size() > 1);
}

// Squared validation errors of this rank's validation rows at every λ (L values).
std::vector<double> validation_sse(const RidgeFitRun& run, const RidgeSolver::State& st,
                                   const ColMat& coef, const ColMat& readout, int64_t L) {
  const int64_t K = st.K, mv = run.m - run.mf;
  std::vector<double> sse(static_cast<size_t>(L), 0.0);
  if (mv == 0) return sse;
  const ColMat path =
      run.kernel ? ridge_rows_times(nullptr, run.kernel, st.X_fit.data(), st.n_fit, *run.local,
                                    run.mf, mv, run.B, coef.leftCols(L * K), nullptr)
                 : ridge_rows_times(run.features, nullptr, nullptr, 0, *run.local, run.mf, mv,
                                    run.B, (st.primal ? coef : readout).leftCols(L * K), nullptr);
  const ColMat Yval = run.Yc.middleRows(run.mf, mv);
  for (int64_t l = 0; l < L; ++l)
    sse[static_cast<size_t>(l)] = (path.middleCols(l * K, K) - Yval).squaredNorm();
  return sse;
}

}  // namespace

void ridge_stage_choose(RidgeFitRun& run, RidgeSolver::State& st, FitLog& log) {
  const Comm& comm = *run.comm;
  const int64_t K = st.K, L = static_cast<int64_t>(st.lambdas.size());
  const int64_t D = st.primal ? st.P : st.n_fit;
  const bool formed = path_formed(run, st);
  double chosen = 0;
  if (L > 1 || formed) {
    // The path's solutions (plus λ → 0⁺ when the read-outs are formed), on every rank.
    std::vector<double> path_lambdas = st.lambdas;
    if (formed) path_lambdas.push_back(0.0);
    const int64_t LP = static_cast<int64_t>(path_lambdas.size());
    ColMat coef;
    ridge_phase(run, [&] {
      if (comm.is_root())
        coef = ridge_path_coefficients(st, path_lambdas);
      else
        coef.resize(D, LP * K);
    });
    comm.broadcast(0, coef.data(), coef.size());
    ColMat readout;  // dual feature models: Φ_fitᵀ coef / n_fit
    if (run.dual_features(st)) {
      if (run.recompute) {
        readout = ridge_features_t_times_tiled(*run.features, *run.local, st.n_fit, run.tile,
                                               run.B, coef);
        readout /= static_cast<double>(st.n_fit);
      } else {
        readout = ridge_features_t_times(run, run.Phi_mine, coef, st.n_fit);
      }
      if (formed) {
        st.path_lambdas = path_lambdas;
        st.path_readout = readout;
      }
    }
    if (L > 1) {
      std::vector<double> sse;
      ridge_phase(run, [&] { sse = validation_sse(run, st, coef, readout, L); });
      comm.sum_to_root(sse.data(), L);
      if (comm.is_root()) {
        double best = std::numeric_limits<double>::infinity();
        for (int64_t l = 0; l < L; ++l) {
          const double mse = sse[static_cast<size_t>(l)] / static_cast<double>(st.n_val * K);
          log.point("val_mse", l, mse);
          log.point("lambda", l, st.lambdas[static_cast<size_t>(l)]);
          if (std::isfinite(mse) && mse < best) {
            best = mse;
            chosen = static_cast<double>(l);
          }
        }
        log.scalar("val_mse", best);
      }
      comm.broadcast(0, &chosen, 1);
    }
  }
  st.chosen = static_cast<int>(chosen);
  st.lambda = st.lambdas[static_cast<size_t>(st.chosen)];
}

void ridge_stage_readout(RidgeFitRun& run, RidgeSolver::State& st) {
  const int64_t K = st.K, D = st.primal ? st.P : st.n_fit;
  if (path_formed(run, st)) {  // one of the path's read-outs, formed on every rank
    st.V = st.path_readout.middleCols(static_cast<int64_t>(st.chosen) * K, K);
    return;
  }
  // Solved on rank 0 and broadcast: primal V, dual α.
  ColMat coef(D, K);
  ridge_phase(run, [&] {
    if (run.comm->is_root()) coef = ridge_path_coefficients(st, {st.lambda});
  });
  run.comm->broadcast(0, coef.data(), coef.size());
  if (st.primal) {
    st.V = std::move(coef);
  } else if (run.kernel) {
    st.alpha = std::move(coef);
    st.n_alpha = st.n_fit;
  } else {
    st.V = ridge_features_t_times(run, run.Phi_mine, coef, st.n_fit);
  }
}

}  // namespace attn
