// The rank_pair probe (see probe_rank_pair.h). Shapes: mlp.w0 (N·d_in, width) row-major, W₁
// its transpose (width × N·d_in); predictions 2 × N × d′.
#include "analysis/probe_rank_pair.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "analysis/rank_pair.h"

namespace attn {

void probe_rank_pair(const ProbeInput& in, FitLog& log) {
  const Batch& test = in.test;
  if (test.n == 0) return;
  ModelTensors saved;
  saved.model = in.model_name;
  in.model.save(saved);
  const ModelTensor* w0 = saved.find("mlp.w0");
  ATTN_ASSERT(w0 != nullptr && w0->shape.size() == 2, "an mlp saves its first layer as mlp.w0");
  const int64_t inputs = w0->shape[0], width = w0->shape[1];
  const int64_t N = test.shape.T, dz = test.shape.d_out, h = N / 2;
  ATTN_ASSERT(inputs == test.shape.x_size(), "mlp.w0 reads the flattened sample");
  if (width >= h * dz) {
    log.scalar("rank_pair_applies", 0);
    return;
  }
  std::vector<double> W1(static_cast<size_t>(width * inputs));
  for (int64_t r = 0; r < width; ++r)
    for (int64_t col = 0; col < inputs; ++col) W1[r * inputs + col] = w0->data[col * width + r];
  const RankPairDirection dir = rank_pair_direction(W1.data(), width, in.test_task_params);
  const RankPair pair = rank_pair_build(dir, test, 0);

  Batch both;
  both.n = 2;
  both.shape = test.shape;
  both.X = pair.x_plus;
  both.X.insert(both.X.end(), pair.x_minus.begin(), pair.x_minus.end());
  both.Y = pair.y_plus;
  both.Y.insert(both.Y.end(), pair.y_minus.begin(), pair.y_minus.end());
  const std::vector<double> f = in.model.predict(both);
  const int64_t size = N * dz;
  double output_gap = 0, certified = 0, target_gap = 0;
  for (int64_t k = 0; k < size; ++k)
    output_gap = std::max(output_gap, std::fabs(f[k] - f[size + k]));
  for (int64_t s = 0; s < 2; ++s)
    for (int64_t i = 0; i < N; ++i) {
      double e2 = 0;
      for (int64_t k = 0; k < dz; ++k) {
        const double e = f[s * size + i * dz + k] - both.Y[s * size + i * dz + k];
        e2 += e * e;
      }
      certified = std::max(certified, std::sqrt(e2));
    }
  for (int64_t k = 0; k < dz; ++k) {
    const double g = pair.y_plus[dir.position * dz + k] - pair.y_minus[dir.position * dz + k];
    target_gap += g * g;
  }
  log.scalar("rank_pair_applies", 1);
  log.scalar("rank_pair_output_gap", output_gap);
  log.scalar("rank_pair_target_gap", std::sqrt(target_gap));
  log.scalar("rank_pair_certified_error", certified);
  log.scalar("rank_pair_null_residual", dir.residual);
}

}  // namespace attn
