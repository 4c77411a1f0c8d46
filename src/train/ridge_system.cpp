// Ridge's labels, system-assembly and spectrum stages (ridge_stages.h): the fit split's
// centred labels, the D × D Gram or kernel on rank 0, its eigendecomposition or band form
// (ridge_band.h), C = Qᵀ·(right-hand sides) and the numerical floor.
#include <Eigen/Dense>
#include <algorithm>

#include "core/error.h"
#include "train/ridge_share.h"
#include "train/ridge_stages.h"

namespace attn {
namespace {

// Whether the run group's entry holds the spectrum of this fit's system already.
bool ridge_share_has_spectrum(const RidgeFitRun& run, const RidgeSolver::State& st) {
  return run.share && run.share->spectrum_n == st.n_fit && run.share->spectrum_dual == !st.primal;
}

}  // namespace

void ridge_stage_labels(RidgeFitRun& run, RidgeSolver::State& st) {
  Eigen::Map<const RowMat> Y(run.local->Y.data(), run.m, st.K);
  Eigen::VectorXd y_sum = Y.topRows(run.mf).colwise().sum().transpose();
  run.comm->sum_all(y_sum.data(), st.K);
  st.y_mean = y_sum / static_cast<double>(st.n_fit);
  st.y_mean_fit = st.y_mean;
  run.Yc = Y.rowwise() - st.y_mean.transpose();
}

void ridge_stage_system(RidgeFitRun& run, RidgeSolver::State& st, ColMat& A, ColMat& Bv) {
  const Comm& comm = *run.comm;
  const double n_fit = static_cast<double>(st.n_fit);
  if (run.kernel) {
    // Kernel rows and predictions need every rank's inputs.
    run.X_all.resize(static_cast<size_t>(run.n * st.x_size));
    comm.gather_all(run.local->X.data(), run.m * st.x_size, run.X_all.data());
    st.X_fit.assign(run.X_all.begin(), run.X_all.begin() + st.n_fit * st.x_size);
  }
  if (st.primal) {
    // G = ΦᵀΦ/n_fit, Bv = ΦᵀYc/n_fit, accumulated block by block over each rank's fit rows.
    A.resize(st.P, st.P);
    ridge_advise_huge(A);
    A.setZero();
    Bv = ColMat::Zero(st.P, st.K);
    if (run.share) {  // the run group's Gram (none when the spectrum is shared too)
      if (!ridge_share_has_spectrum(run, st))
        A = ridge_share_system(*run.share, *run.features, *run.local, false, run.mf);
      else
        A = ColMat();
      ridge_share_labels_product(*run.share, *run.features, *run.local, run.mf, run.Yc, Bv);
    } else {
      ridge_phase(run, [&] { ridge_gram_accumulate(run, run.mf, run.Yc, A, Bv); });
    }
    ridge_gram_sum_to_root(run, A, Bv);
    if (!comm.is_root()) {
      A = ColMat();
      Bv = ColMat();
      return;
    }
    A /= n_fit;
    Bv /= n_fit;
    return;
  }
  if (run.kernel) {
    A = ridge_kernel_gram(run, st.n_fit);
  } else if (run.recompute) {
    A = ridge_dual_kernel_tiled(*run.features, *run.local, st.n_fit, run.tile, run.B);
  } else if (run.share) {
    // The run group's features and kernel; no kernel when the spectrum of this split is
    // shared too.
    run.Phi_mine = ridge_share_rows(*run.share, *run.features, *run.local, run.mf);
    if (!ridge_share_has_spectrum(run, st))
      A = ridge_share_system(*run.share, *run.features, *run.local, true, run.mf);
  } else {
    ridge_phase(run, [&] {
      run.Phi_mine.resize(run.mf, st.P);
      ridge_advise_huge(run.Phi_mine);
      ridge_features_rows(*run.features, *run.local, 0, run.mf, run.B, run.Phi_mine);
    });
    A = ridge_feature_gram(run, run.Phi_mine, st.n_fit);
  }
  if (comm.is_root()) A /= n_fit;
}

void ridge_stage_spectrum(RidgeFitRun& run, RidgeSolver::State& st, ColMat&& A, const ColMat& Bv) {
  // Dual: the right-hand sides are the fit split's centred labels, gathered on rank 0.
  const ColMat Y_fit = st.primal ? ColMat() : ridge_rows_gather(run, run.Yc, run.mf, st.n_fit);
  ridge_phase(run, [&] {
    if (!run.comm->is_root()) return;
    if (ridge_share_has_spectrum(run, st)) {
      st.eig = run.share->eig;
      st.Q = run.share->Q;
    } else {
      // The band form where it is faster and equals the eigen path (ridge_band.h), else the
      // eigendecomposition.
      const int64_t kd = ridge_band_width(run.options->path, A.rows());
      if (kd == 0 || !ridge_band_make(A, st.lambdas, kd, st.Q.band))
        st.eig =
            ridge_eigen_symmetric(std::move(A), st.Q, st.primal ? "feature Gram" : "kernel matrix");
      if (run.share) {
        run.share->spectrum_dual = !st.primal;
        run.share->spectrum_n = st.n_fit;
        run.share->eig = st.eig;
        run.share->Q = st.Q;
      }
    }
    const ColMat& rhs = st.primal ? Bv : Y_fit;
    const bool band = !st.Q.band.empty();
    st.C = band ? st.Q.band.qt_times(rhs) : st.Q.qt_times(rhs);
    const double eig_max = band ? st.Q.band.eig_max
                           : st.eig.size() ? std::max(0.0, st.eig.maxCoeff())
                                           : 0.0;
    st.floor = ridge_floor(eig_max, band ? st.Q.band.size() : st.eig.size());
    run.below_floor = 0;
    for (double l : st.lambdas) run.below_floor += (l > 0 && l <= st.floor);
  });
}

}  // namespace attn
