// Ridge's blocks over the ranks of a Comm (ridge_stages.h): Gram accumulation and its sum,
// the n × n feature Gram and kernel assembled column block by column block, label gathers
// and read-outs of dual coefficients. On one rank every function is the plain local product.
#include <Eigen/Dense>
#include <algorithm>

#include "core/error.h"
#include "train/ridge_stages.h"

namespace attn {
namespace {

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

// Every rank's column block (N × count_r, column-major) side by side on rank 0: N × N.
ColMat columns_gather(const RidgeFitRun& run, ColMat&& cols, int64_t N) {
  const Comm& comm = *run.comm;
  if (comm.size() == 1) return std::move(cols);
  ColMat A;
  if (comm.is_root()) A.resize(N, N);
  comm.gather(cols.data(), cols.size(), comm.is_root() ? A.data() : nullptr);
  return A;
}

}  // namespace

int64_t RidgeFitRun::rank_first(int s) const {
  int64_t a, b;
  comm_block(n, s, comm->size(), &a, &b);
  return a;
}

int64_t RidgeFitRun::rank_count(int s, int64_t N) const {
  int64_t a, b;
  comm_block(n, s, comm->size(), &a, &b);
  return std::clamp<int64_t>(std::min(b, N) - a, 0, b - a);
}

void ridge_gram_accumulate(const RidgeFitRun& run, int64_t count, const ColMat& Y, ColMat& G,
                           ColMat& Bv) {
  RowMat Phi(std::min(run.B, std::max<int64_t>(count, 1)), run.features->dim());
  for (int64_t lo = 0; lo < count; lo += run.B) {
    const int64_t b = std::min(run.B, count - lo);
    run.features->features(run.local->x(lo), b, Phi.data());
    G.selfadjointView<Eigen::Lower>().rankUpdate(Phi.topRows(b).transpose());
    Bv.noalias() += Phi.topRows(b).transpose() * Y.middleRows(lo, b);
  }
}

void ridge_gram_sum_to_root(const RidgeFitRun& run, ColMat& G, ColMat& Bv) {
  const Comm& comm = *run.comm;
  if (comm.size() == 1) return;
  std::vector<double> packed = lower_pack(G);
  comm.sum_to_root(packed.data(), static_cast<int64_t>(packed.size()));
  comm.sum_to_root(Bv.data(), Bv.size());
  if (comm.is_root()) lower_unpack(packed, G);
}

ColMat ridge_feature_gram(const RidgeFitRun& run, const RowMat& Phi_mine, int64_t N) {
  const Comm& comm = *run.comm;
  const int r = comm.rank();
  const int64_t c_r = Phi_mine.rows(), lo_r = run.rank_first(r), P = Phi_mine.cols();
  // Column j of rank r's block is sample lo_r + j; rows from lo_r on (the lower triangle).
  ColMat cols = ColMat::Zero(N, c_r);
  if (c_r > 0) {
    ridge_advise_huge(cols);
    cols.block(lo_r, 0, c_r, c_r).selfadjointView<Eigen::Lower>().rankUpdate(Phi_mine);
  }
  // Every rank's features are broadcast in turn; the later ranks' give this rank's blocks
  // below its diagonal.
  RowMat theirs;
  for (int s = 0; s < comm.size() && comm.size() > 1; ++s) {
    const int64_t c_s = run.rank_count(s, N);
    if (c_s == 0) continue;
    if (s == r) {
      comm.broadcast(s, const_cast<double*>(Phi_mine.data()), c_s * P);
      continue;
    }
    theirs.resize(c_s, P);
    comm.broadcast(s, theirs.data(), c_s * P);
    if (s > r && c_r > 0)
      cols.middleRows(run.rank_first(s), c_s).noalias() = theirs * Phi_mine.transpose();
  }
  return columns_gather(run, std::move(cols), N);
}

ColMat ridge_kernel_gram(const RidgeFitRun& run, int64_t N) {
  const int r = run.comm->rank();
  const int64_t c_r = run.rank_count(r, N), lo_r = run.rank_first(r);
  const int64_t x_size = run.local->shape.x_size();
  const double* X = run.X_all.data() + lo_r * x_size;  // samples lo_r, lo_r + 1, ...
  ColMat cols;
  ridge_phase(run, [&] {
    cols = ColMat::Zero(N, c_r);
    if (c_r == 0) return;
    // Rows lo_r.. against this rank's columns; one rank: X against itself (kernels use the
    // exact symmetry of that call).
    RowMat part(N - lo_r, c_r);
    ridge_advise_huge(part);
    run.kernel->kernel(X, N - lo_r, X, c_r, part.data());
    cols.bottomRows(N - lo_r) = part;
  });
  return columns_gather(run, std::move(cols), N);
}

ColMat ridge_rows_gather(const RidgeFitRun& run, const ColMat& Y, int64_t count, int64_t N) {
  const Comm& comm = *run.comm;
  const RowMat mine = Y.topRows(count);
  RowMat all;
  if (comm.is_root()) all.resize(N, Y.cols());
  comm.gather(mine.data(), mine.size(), comm.is_root() ? all.data() : nullptr);
  return comm.is_root() ? ColMat(all) : ColMat();
}

ColMat ridge_features_t_times(const RidgeFitRun& run, const RowMat& Phi_mine, const ColMat& C,
                              int64_t N) {
  const int64_t c_r = Phi_mine.rows(), lo_r = run.rank_first(run.comm->rank());
  ColMat out = ColMat::Zero(Phi_mine.cols(), C.cols());
  if (c_r > 0) out.noalias() = Phi_mine.transpose() * C.middleRows(lo_r, c_r);
  run.comm->sum_all(out.data(), out.size());
  out /= static_cast<double>(N);
  return out;
}

}  // namespace attn
