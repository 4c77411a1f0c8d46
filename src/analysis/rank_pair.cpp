// rank_pair: a null direction of a first layer on z_h .. z_{2h−1} (SVD), and the pair of
// inputs it gives. Shapes: W₁ width × N·d_in row-major; Δ h × d'.
#include "analysis/rank_pair.h"

#include <Eigen/Dense>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
#include "tasks/qsa.h"

namespace attn {

RankPairDirection rank_pair_direction(const double* W1, int64_t width, const Params& task_params) {
  const TaskShape shape = qsa_make(task_params)->shape();
  RankPairDirection dir;
  dir.N = shape.T;
  dir.d_in = shape.d_in;
  dir.d_out = shape.d_out;
  dir.q = task_params.get_int("q");
  const int64_t h = dir.N / 2, dz = dir.d_out, K = h * dz;
  ATTN_CHECK(width >= 1, "rank pair: the first layer has no rows (width = " +
                             std::to_string(width) + ")");

  // W_B: the columns of W₁ that read z_h .. z_{2h−1}, column c = (j − h)·d' + k.
  Eigen::MatrixXd WB(width, K);
  for (int64_t r = 0; r < width; ++r)
    for (int64_t j = 0; j < h; ++j)
      for (int64_t k = 0; k < dz; ++k)
        WB(r, j * dz + k) = W1[r * dir.N * dir.d_in + (h + j) * dir.d_in + k];
  Eigen::BDCSVD<Eigen::MatrixXd> svd(WB, Eigen::ComputeFullV);
  // With width < K the last right singular vector spans part of the null space exactly;
  // otherwise it is the direction of the smallest singular value, accepted only if ≈ 0.
  const Eigen::VectorXd& sv = svd.singularValues();
  if (width >= K) {
    const double smallest = sv(K - 1), largest = sv(0);
    ATTN_CHECK(smallest <= 1e-9 * largest,
               "rank pair: the first layer (width " + std::to_string(width) +
                   ") has no null direction on the h·d' = " + std::to_string(K) +
                   " coordinates of z_h..z_{2h-1} (smallest singular value " +
                   std::to_string(smallest) + "); Thm 10's pair needs width < " +
                   std::to_string(K));
  }
  Eigen::VectorXd delta = svd.matrixV().col(K - 1);

  double largest_norm = 0;
  for (int64_t j = 0; j < h; ++j) {
    const double norm = delta.segment(j * dz, dz).norm();
    if (norm > largest_norm) {
      largest_norm = norm;
      dir.position = j;
    }
  }
  ATTN_ASSERT(largest_norm > 0, "a right singular vector has unit norm");
  delta /= largest_norm;
  // Exactly 1 at the chosen position despite rounding in the division.
  delta.segment(dir.position * dz, dz) /= delta.segment(dir.position * dz, dz).norm();
  dir.delta.assign(delta.data(), delta.data() + K);
  dir.residual = (WB * delta).cwiseAbs().maxCoeff();
  return dir;
}

RankPair rank_pair_build(const RankPairDirection& dir, const Batch& batch, int64_t row) {
  const int64_t N = dir.N, d_in = dir.d_in, dz = dir.d_out, q = dir.q, h = N / 2;
  ATTN_CHECK(batch.shape.T == N && batch.shape.d_in == d_in && batch.shape.d_out == dz,
             "rank pair: the batch's shape (T " + std::to_string(batch.shape.T) + ", d_in " +
                 std::to_string(batch.shape.d_in) + ", d_out " + std::to_string(batch.shape.d_out) +
                 ") is not the one the direction was computed for");
  ATTN_CHECK(row >= 0 && row < batch.n, "rank pair: row " + std::to_string(row) +
                                            " is outside the batch of " + std::to_string(batch.n));
  const RawArray& z_raw = batch.find("z");
  const RawArray& sets_raw = batch.find("sets");
  const double* x = batch.x(row);
  const int64_t* sets = sets_raw.i64.data() + row * N * q;
  RankPair pair;
  pair.x_plus.assign(x, x + N * d_in);
  pair.x_minus = pair.x_plus;
  std::vector<double> z_plus(z_raw.f64.begin() + row * N * dz,
                             z_raw.f64.begin() + (row + 1) * N * dz);
  std::vector<double> z_minus = z_plus;
  for (int64_t j = 0; j < h; ++j)
    for (int64_t k = 0; k < dz; ++k) {
      const double v = dir.delta[j * dz + k];
      pair.x_plus[(h + j) * d_in + k] = z_plus[(h + j) * dz + k] = v;
      pair.x_minus[(h + j) * d_in + k] = z_minus[(h + j) * dz + k] = -v;
    }
  pair.y_plus.resize(N * dz);
  pair.y_minus.resize(N * dz);
  qsa_targets(N, q, dz, z_plus.data(), sets, pair.y_plus.data());
  qsa_targets(N, q, dz, z_minus.data(), sets, pair.y_minus.data());
  return pair;
}

}  // namespace attn
