// Ridge's refit stage (ridge_stages.h, train.refit): one direct solve on all n training
// samples at the chosen λ, centred by the mean of all n. Primal: the P × P Gram summed over
// the ranks; dual: the n × n kernel (or feature Gram) assembled as in the fit, or, for
// recomputed features on one rank, per tile after the spectrum is freed.
#include <Eigen/Dense>

#include "core/error.h"
#include "train/ridge_share.h"
#include "train/ridge_stages.h"

namespace attn {

void ridge_stage_refit(RidgeFitRun& run, RidgeSolver::State& st, FitLog& log) {
  const Comm& comm = *run.comm;
  const int64_t n = run.n, K = st.K, P = st.P;
  const double dn = static_cast<double>(n);
  Eigen::Map<const RowMat> Y(run.local->Y.data(), run.m, K);
  Eigen::VectorXd all_sum = Y.colwise().sum().transpose();
  comm.sum_all(all_sum.data(), K);
  st.y_mean = all_sum / dn;
  const ColMat Yall = Y.rowwise() - st.y_mean.transpose();
  // Rank 0's floor; only it solves (and says so).
  const double lam = comm.is_root() ? ridge_refit_lambda(st, n, log, true)
                                    : std::max(st.lambda, st.floor);  // unused off the root
  if (st.primal) {
    ColMat G = ColMat::Zero(P, P), Bl = ColMat::Zero(P, K);
    if (run.share) {  // the run group's Gram of all n
      G = ridge_share_system(*run.share, *run.features, *run.local, false, run.m);
      ridge_share_labels_product(*run.share, *run.features, *run.local, run.m, Yall, Bl);
    } else {
      ridge_phase(run, [&] { ridge_gram_accumulate(run, run.m, Yall, G, Bl); });
    }
    ridge_gram_sum_to_root(run, G, Bl);
    ColMat V(P, K);
    ridge_phase(run, [&] {
      if (!comm.is_root()) return;
      G = G.selfadjointView<Eigen::Lower>();
      G /= dn;
      G.diagonal().array() += lam;
      V = G.ldlt().solve(Bl / dn);
    });
    comm.broadcast(0, V.data(), V.size());
    st.V = std::move(V);
    return;
  }
  if (run.recompute) {
    // The path's read-outs are formed, so the spectrum is not needed any more: free it for
    // the n × n kernel, which is factored in place (LDLT reads the lower triangle only).
    st.Q = RidgeSpectrum();
    st.C = ColMat();
    ColMat Kc = ridge_dual_kernel_tiled(*run.features, *run.local, n, run.tile, run.B);
    Kc /= dn;
    Kc.diagonal().array() += lam;
    Eigen::LDLT<Eigen::Ref<ColMat>> ldlt(Kc);
    const ColMat a = ldlt.solve(Yall);
    st.V = ridge_features_t_times_tiled(*run.features, *run.local, n, run.tile, run.B, a) / dn;
    return;
  }
  RowMat Phi_all;
  ColMat Kn;
  if (run.kernel) {
    Kn = ridge_kernel_gram(run, n);
  } else if (run.share) {  // the run group's features and kernel of all n
    Phi_all = ridge_share_rows(*run.share, *run.features, *run.local, n);
    Kn = ridge_share_system(*run.share, *run.features, *run.local, true, n);
  } else {
    ridge_phase(run, [&] {
      Phi_all.resize(run.m, P);
      ridge_advise_huge(Phi_all);
      ridge_features_rows(*run.features, *run.local, 0, run.m, run.B, Phi_all);
    });
    Kn = ridge_feature_gram(run, Phi_all, n);
  }
  const ColMat Y_all = ridge_rows_gather(run, Yall, run.m, n);
  ColMat a(n, K);
  ridge_phase(run, [&] {
    if (!comm.is_root()) return;
    Kn /= dn;
    Kn.diagonal().array() += lam;
    a = Kn.ldlt().solve(Y_all);
  });
  comm.broadcast(0, a.data(), a.size());
  if (run.kernel) {
    st.alpha = std::move(a);
    st.n_alpha = n;
    st.X_fit = run.X_all;
    return;
  }
  st.V = ridge_features_t_times(run, Phi_all, a, n);
  // One rank keeps the features of all n for the λ path (its first n_fit rows).
  if (comm.size() == 1) run.Phi_mine = std::move(Phi_all);
}

}  // namespace attn
