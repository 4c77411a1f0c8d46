// RidgeModel::fit_distributed: ridge over a λ grid with the training samples spread over
// the ranks of a Comm (train.distributed under `attnlab run --mpi`; costs per rank in
// docs/cluster.md).
//
// Rank r holds the contiguous block [lo_r, hi_r) of the n training samples. The fit split
// is [0, n_fit) and validation [n_fit, n), so low ranks hold fit rows and the highest
// ranks the validation rows. Labels are centred by the fit split's mean (a sum over ranks).
//   primal   every rank accumulates ΦᵀΦ (lower triangle) and ΦᵀYc over its fit rows;
//            both are summed on rank 0 (P(P+1)/2 + P·K values), which solves once.
//   dual     rank r forms its rows of the n_fit × n_fit kernel, from its own first row on
//            (what the lower triangle needs): feature models broadcast every rank's
//            fit features Φ_s in turn, kernel models gather the inputs on every rank.
//            Rank 0 gathers the rows and the fit labels and solves once.
// Rank 0 then broadcasts the solutions of every λ; each rank scores its validation rows
// and the squared errors are summed on rank 0, which chooses λ and broadcasts the chosen
// read-out V (feature models) or coefficients α (kernel models, with the fit inputs on
// every rank). refit repeats the accumulation over all n samples and solves at that λ.
// Every local step runs inside comm_phase, so an error on one rank fails the fit on all.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/error.h"
#include "core/log.h"
#include "core/memory.h"
#include "mpi/comm.h"
#include "train/ridge.h"
#include "train/ridge_state.h"

namespace attn {
namespace {

// Where the training rows live: rank s holds [lo(s), lo(s) + count(s, N)) of [0, N).
struct RowLayout {
  int64_t n = 0;  // all training samples
  int size = 1;
  int64_t lo(int s) const {
    int64_t a, b;
    comm_block(n, s, size, &a, &b);
    return a;
  }
  int64_t count(int s, int64_t N) const {
    int64_t a, b;
    comm_block(n, s, size, &a, &b);
    return std::clamp<int64_t>(std::min(b, N) - a, 0, b - a);
  }
};

// The lower triangle of a D × D column-major matrix, column by column (D(D+1)/2 values).
std::vector<double> lower_pack(const ColMat& A) {
  const int64_t D = A.rows();
  std::vector<double> out;
  out.reserve(static_cast<size_t>(D * (D + 1) / 2));
  for (int64_t j = 0; j < D; ++j) out.insert(out.end(), A.col(j).data() + j, A.col(j).data() + D);
  return out;
}

void lower_unpack(const std::vector<double>& packed, ColMat& A) {
  const int64_t D = A.rows();
  size_t at = 0;
  for (int64_t j = 0; j < D; ++j) {
    std::copy(packed.begin() + static_cast<std::ptrdiff_t>(at),
              packed.begin() + static_cast<std::ptrdiff_t>(at + static_cast<size_t>(D - j)),
              A.col(j).data() + j);
    at += static_cast<size_t>(D - j);
  }
}

// Features of local rows [first, first + count): count × P.
RowMat features_rows(const FeatureMap& f, const Batch& local, int64_t first, int64_t count,
                     int64_t B) {
  RowMat Phi(count, f.dim());
  ridge_features_rows(f, local, first, count, B, Phi);
  return Phi;
}

// ΦᵀΦ (lower triangle) and ΦᵀY over local rows [0, count), block by block.
void gram_accumulate(const FeatureMap& f, const Batch& local, int64_t count, const ColMat& Yc,
                     int64_t B, ColMat& G, ColMat& Bv) {
  RowMat Phi(std::min(B, std::max<int64_t>(count, 1)), f.dim());
  for (int64_t lo = 0; lo < count; lo += B) {
    const int64_t m = std::min(B, count - lo);
    f.features(local.x(lo), m, Phi.data());
    G.selfadjointView<Eigen::Lower>().rankUpdate(Phi.topRows(m).transpose());
    Bv.noalias() += Phi.topRows(m).transpose() * Yc.middleRows(lo, m);
  }
}

// Sums a lower-triangle Gram and a P × K matrix on rank 0 (in place there).
void gram_sum_to_root(ColMat& G, ColMat& Bv, const Comm& comm) {
  std::vector<double> packed = lower_pack(G);
  comm.sum_to_root(packed.data(), static_cast<int64_t>(packed.size()));
  comm.sum_to_root(Bv.data(), Bv.size());
  if (comm.is_root()) lower_unpack(packed, G);
}

// Every rank's row block (count × N, row-major) stacked on rank 0 as an N × N column-major
// matrix: column j is row j, so rows computed from their own index on fill the lower
// triangle. Empty on the other ranks.
ColMat rows_gather(const RowMat& rows, int64_t N, const Comm& comm) {
  ColMat A;
  if (comm.is_root()) A.resize(N, N);
  comm.gather(rows.data(), rows.size(), comm.is_root() ? A.data() : nullptr);
  return A;
}

// Rows of S = ΦΦᵀ (N × N) of this rank's rows Phi_mine, columns from its first row on;
// every rank's rows are broadcast in turn. Stacked on rank 0 (rows_gather).
ColMat gram_from_features(const RowMat& Phi_mine, const RowLayout& layout, int64_t N, int64_t P,
                          const Comm& comm) {
  const int r = comm.rank();
  const int64_t c_r = Phi_mine.rows();
  RowMat rows = RowMat::Zero(c_r, N), theirs;
  for (int s = 0; s < comm.size(); ++s) {
    const int64_t c_s = layout.count(s, N), lo_s = layout.lo(s);
    if (c_s == 0) continue;
    if (s != r) theirs.resize(c_s, P);
    double* data = s == r ? const_cast<double*>(Phi_mine.data()) : theirs.data();
    comm.broadcast(s, data, c_s * P);
    if (s >= r && c_r > 0)
      rows.middleCols(lo_s, c_s).noalias() =
          Phi_mine * Eigen::Map<const RowMat>(data, c_s, P).transpose();
  }
  return rows_gather(rows, N, comm);
}

// Rows of the kernel matrix (N × N) of this rank's rows, local [0, count), against the
// inputs X_all (every rank's), columns from its first row on.
RowMat kernel_rows(const KernelFunction& k, const Batch& local, int64_t count,
                   const std::vector<double>& X_all, int64_t lo_r, int64_t N, int64_t B) {
  RowMat rows = RowMat::Zero(count, N);
  const int64_t width = N - lo_r;
  RowMat part(std::min(B, std::max<int64_t>(count, 1)), std::max<int64_t>(width, 0));
  const int64_t x_size = local.shape.x_size();
  for (int64_t lo = 0; lo < count; lo += B) {
    const int64_t m = std::min(B, count - lo);
    k.kernel(local.x(lo), m, X_all.data() + lo_r * x_size, width, part.data());
    rows.block(lo, lo_r, m, width) = part.topRows(m);
  }
  return rows;
}

// Rows [0, count) of a local ColMat, stacked over ranks on rank 0 (total × K, row-major).
RowMat labels_gather(const ColMat& Yc, int64_t count, int64_t total, const Comm& comm) {
  const RowMat mine = Yc.topRows(count);
  RowMat all;
  if (comm.is_root()) all.resize(total, Yc.cols());
  comm.gather(mine.data(), mine.size(), comm.is_root() ? all.data() : nullptr);
  return all;
}

}  // namespace

void RidgeModel::fit_distributed(const Batch& local, int64_t first, int64_t n, const Comm& comm,
                                 FitLog& log) {
  if (comm.size() == 1) {
    ATTN_ASSERT(first == 0 && local.n == n, "fit_distributed on one rank needs every sample");
    fit(local, log);
    return;
  }
  const int r = comm.rank();
  const RowLayout layout{n, comm.size()};
  {
    int64_t a, b;
    comm_block(n, r, comm.size(), &a, &b);
    ATTN_ASSERT(a == first && b - a == local.n, "fit_distributed: this rank's samples are not its block");
  }
  auto s = state_begin(local.shape, n);
  const bool is_kernel = kernel_ != nullptr;
  const bool dual_features = !is_kernel && !s->primal;
  const int64_t P = s->P, K = s->K, n_fit = s->n_fit, n_val = s->n_val;
  const int64_t D = s->primal ? P : n_fit;
  const int64_t B = std::max<int64_t>(1, options_.block);
  const int64_t m = local.n, lo_r = first;
  const int64_t mf = layout.count(r, n_fit);  // fit rows: local [0, mf); validation [mf, m)

  comm_phase(comm, [&] {
    // This rank's share, plus the D × D system and its eigenvectors on rank 0.
    uint64_t doubles = static_cast<uint64_t>(B) * (P + D) + static_cast<uint64_t>(m) * K * 3;
    if (s->primal) doubles += static_cast<uint64_t>(D) * D * 3 / 2;
    if (dual_features) doubles += static_cast<uint64_t>(m) * P * 2 + static_cast<uint64_t>(mf) * n;
    if (is_kernel) doubles += static_cast<uint64_t>(n) * s->x_size + static_cast<uint64_t>(mf) * n;
    if (comm.is_root()) doubles += 2 * static_cast<uint64_t>(D) * D;
    memory_check(8 * doubles, "distributed ridge (rank " + std::to_string(r) + ") with a " +
                                  std::to_string(D) + " x " + std::to_string(D) +
                                  (s->primal ? " Gram" : " kernel"),
                 s->primal ? "lower model.heads / model.width, or use more ranks"
                           : "lower train.n, or use train.solver = primal");
  });

  // Centred labels, by the fit split's mean.
  Eigen::Map<const RowMat> Y(local.Y.data(), m, K);
  Eigen::VectorXd y_sum = Y.topRows(mf).colwise().sum().transpose();
  comm.sum_all(y_sum.data(), K);
  s->y_mean = y_sum / static_cast<double>(n_fit);
  s->y_mean_fit = s->y_mean;
  const ColMat Yc = Y.rowwise() - s->y_mean.transpose();

  // Inputs of every rank (kernel models: kernel rows and predictions need them all).
  std::vector<double> X_all;
  if (is_kernel) {
    X_all.resize(static_cast<size_t>(n * s->x_size));
    comm.gather_all(local.X.data(), m * s->x_size, X_all.data());
  }

  // The D × D system, assembled on rank 0.
  ColMat A, Bv;
  RowMat Phi_mine;  // dual feature models: this rank's fit features
  if (s->primal) {
    A = ColMat::Zero(P, P);
    Bv = ColMat::Zero(P, K);
    comm_phase(comm, [&] { gram_accumulate(*features_, local, mf, Yc, B, A, Bv); });
    gram_sum_to_root(A, Bv, comm);
  } else if (dual_features) {
    comm_phase(comm, [&] { Phi_mine = features_rows(*features_, local, 0, mf, B); });
    A = gram_from_features(Phi_mine, layout, n_fit, P, comm);
  } else {
    RowMat rows;
    comm_phase(comm, [&] { rows = kernel_rows(*kernel_, local, mf, X_all, lo_r, n_fit, B); });
    A = rows_gather(rows, n_fit, comm);
  }
  const RowMat Y_fit = s->primal ? RowMat() : labels_gather(Yc, mf, n_fit, comm);

  int below_floor = 0;
  comm_phase(comm, [&] {
    if (!comm.is_root()) return;
    A /= static_cast<double>(n_fit);
    if (s->primal) Bv /= static_cast<double>(n_fit);
    s->eig = ridge_eigen_symmetric(std::move(A), s->Q, s->primal ? "feature Gram" : "kernel matrix");
    s->C = s->primal ? s->Q.qt_times(Bv) : s->Q.qt_times(ColMat(Y_fit));
    const double eig_max = s->eig.size() ? std::max(0.0, s->eig.maxCoeff()) : 0.0;
    s->floor = eig_max * static_cast<double>(D) * std::numeric_limits<double>::epsilon();
    for (double l : s->lambdas) below_floor += (l > 0 && l <= s->floor);
  });

  // Solutions of every λ (plus λ → 0⁺ for a dual feature model's evaluate()), broadcast;
  // each rank scores its validation rows.
  const int64_t L = static_cast<int64_t>(s->lambdas.size());
  std::vector<double> path_lambdas = s->lambdas;
  if (dual_features) path_lambdas.push_back(0.0);
  const int64_t LP = static_cast<int64_t>(path_lambdas.size());
  double chosen = 0;
  if (L > 1 || dual_features) {
    ColMat coef;
    comm_phase(comm, [&] {
      if (comm.is_root())
        coef = ridge_path_coefficients(*s, path_lambdas);
      else
        coef.resize(D, LP * K);
    });
    comm.broadcast(0, coef.data(), coef.size());
    ColMat readout;  // dual feature models: Φ_fitᵀ coef / n_fit
    if (dual_features) {
      readout = ColMat::Zero(P, LP * K);
      comm_phase(comm, [&] {
        if (mf > 0) readout.noalias() = Phi_mine.transpose() * coef.middleRows(lo_r, mf);
      });
      comm.sum_all(readout.data(), readout.size());
      readout /= static_cast<double>(n_fit);
      if (comm.is_root()) {
        s->path_lambdas = path_lambdas;
        s->path_readout = readout;
      }
    }
    if (L > 1) {
      std::vector<double> sse(static_cast<size_t>(L), 0.0);
      comm_phase(comm, [&] {
        const int64_t mv = m - mf;
        RowMat F(std::min(B, std::max<int64_t>(mv, 1)), is_kernel ? n_fit : P);
        for (int64_t lo = 0; lo < mv; lo += B) {
          const int64_t b = std::min(B, mv - lo);
          ColMat pred;
          if (is_kernel) {
            kernel_->kernel(local.x(mf + lo), b, X_all.data(), n_fit, F.data());
            pred = F.topRows(b) * coef.leftCols(L * K) / static_cast<double>(n_fit);
          } else {
            features_->features(local.x(mf + lo), b, F.data());
            pred = F.topRows(b) * (s->primal ? coef : readout).leftCols(L * K);
          }
          for (int64_t l = 0; l < L; ++l)
            sse[static_cast<size_t>(l)] +=
                (pred.middleCols(l * K, K) - Yc.middleRows(mf + lo, b)).squaredNorm();
        }
      });
      comm.sum_to_root(sse.data(), L);
      if (comm.is_root()) {
        double best = std::numeric_limits<double>::infinity();
        for (int64_t l = 0; l < L; ++l) {
          const double mse = sse[static_cast<size_t>(l)] / static_cast<double>(n_val * K);
          log.point("val_mse", l, mse);
          log.point("lambda", l, s->lambdas[static_cast<size_t>(l)]);
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
  s->chosen = static_cast<int>(chosen);
  s->lambda = s->lambdas[static_cast<size_t>(s->chosen)];

  // The read-out at the chosen λ, solved on rank 0 and broadcast.
  ColMat coef(D, K);
  comm_phase(comm, [&] {
    if (!comm.is_root()) return;
    Eigen::VectorXd g(D);
    for (int64_t k = 0; k < D; ++k) g[k] = ridge_shrink(s->eig[k], s->lambda, s->floor);
    coef = s->Q.q_times(g.asDiagonal() * s->C);  // primal: V; dual: α
  });
  comm.broadcast(0, coef.data(), coef.size());
  if (s->primal) {
    s->V = coef;
  } else if (is_kernel) {
    s->alpha = coef;
    s->n_alpha = n_fit;
    s->X_fit.assign(X_all.begin(), X_all.begin() + n_fit * s->x_size);
  } else {
    s->V = ColMat::Zero(P, K);
    if (mf > 0) s->V.noalias() = Phi_mine.transpose() * coef.middleRows(lo_r, mf);
    comm.sum_all(s->V.data(), s->V.size());
    s->V /= static_cast<double>(n_fit);
  }

  if (options_.refit && n_val > 0) {
    // Solve on all n samples at the chosen λ (centred by the mean of all n).
    Eigen::VectorXd all_sum = Y.colwise().sum().transpose();
    comm.sum_all(all_sum.data(), K);
    s->y_mean = all_sum / static_cast<double>(n);
    const ColMat Yall = Y.rowwise() - s->y_mean.transpose();
    // Rank 0's floor; only it solves (and says so).
    const double lam = comm.is_root() ? ridge_refit_lambda(*s, n, log, true)
                                      : std::max(s->lambda, s->floor);  // unused off the root
    ColMat solution;
    if (s->primal) {
      ColMat G = ColMat::Zero(P, P), Bl = ColMat::Zero(P, K);
      comm_phase(comm, [&] { gram_accumulate(*features_, local, m, Yall, B, G, Bl); });
      gram_sum_to_root(G, Bl, comm);
      solution.resize(P, K);
      comm_phase(comm, [&] {
        if (!comm.is_root()) return;
        G = G.selfadjointView<Eigen::Lower>();
        G /= static_cast<double>(n);
        G.diagonal().array() += lam;
        solution = G.ldlt().solve(Bl / static_cast<double>(n));
      });
      comm.broadcast(0, solution.data(), solution.size());
      s->V = solution;
    } else {
      RowMat Phi_all, rows;
      ColMat Kn;
      if (is_kernel) {
        comm_phase(comm, [&] { rows = kernel_rows(*kernel_, local, m, X_all, lo_r, n, B); });
        Kn = rows_gather(rows, n, comm);
      } else {
        comm_phase(comm, [&] { Phi_all = features_rows(*features_, local, 0, m, B); });
        Kn = gram_from_features(Phi_all, layout, n, P, comm);
      }
      const RowMat Y_all = labels_gather(Yall, m, n, comm);
      solution.resize(n, K);
      comm_phase(comm, [&] {
        if (!comm.is_root()) return;
        Kn /= static_cast<double>(n);
        Kn.diagonal().array() += lam;
        solution = Kn.ldlt().solve(ColMat(Y_all));
      });
      comm.broadcast(0, solution.data(), solution.size());
      if (is_kernel) {
        s->alpha = solution;
        s->n_alpha = n;
        s->X_fit = X_all;
      } else {
        s->V = ColMat::Zero(P, K);
        if (m > 0) s->V.noalias() = Phi_all.transpose() * solution.middleRows(lo_r, m);
        comm.sum_all(s->V.data(), s->V.size());
        s->V /= static_cast<double>(n);
      }
    }
  }

  state_ = std::move(s);
  const State& st = *state_;
  if (!comm.is_root()) return;
  log.scalar("lambda", st.lambda);
  log.scalar("lambda_index", st.chosen);
  log.scalar("lambdas_below_floor", below_floor);
  log.scalar("ridge_primal", st.primal ? 1 : 0);
  // Each rank stores the features of its own samples (train.dual_features is not used here).
  if (!st.primal && !is_kernel) log.scalar("dual_features_recomputed", 0);
  log.scalar("n_fit", static_cast<double>(st.n_fit));
  if (!is_kernel) log.scalar("param_count", static_cast<double>(st.P * K));
  log.scalar("fit_ranks", comm.size());
  if (below_floor > 0)
    log_warn(
                 "attnlab: %d of the λ values are below the numerical floor %.3g of the %s; "
                 "they are solved as the minimum-norm (pseudo-inverse) solution\n",
                 below_floor, st.floor, st.primal ? "Gram" : "kernel");
}

}  // namespace attn
