// The LSTM's "final" read-out head alone, forward and backward, two ways alternated in one
// process: on the formed rows [s_b; x_{b,i}] (B·N rows of F + C values, MlpBlock::forward on
// them, as LstmNet did before 2026-12-06) and with the first layer on s and x apart
// (nn/state_concat_linear.h, MlpBlock::forward_after_first, as it does now). Both compute every
// head parameter's gradient and the per-sequence sums of the first layer's output gradient that
// the state's gradient needs. With a hidden layer (head_width > 0) and x sparse, a third way: the
// fused head LstmNet runs since 2026-12-06 (state_concat_relu_head_*, ops/sparse_relu_head.h).
// x has `nnz` distinct non-zero columns a row; its non-zero list is built outside the timed part
// (LstmNet builds it for the first layer anyway).
// Defaults: bench_nn_train's config c (B 256, N 32, F 128, C 68, 7 non-zeros, a linear head to
// 4 outputs); head_width 128 is config k's head (the shipped experiments'). Each round: `reps`
// times formed, split (and fused), the median CPU ms of each and the ratios.
// Usage: bench_lstm_head [B N F C nnz head_width [rounds [reps]]]  (default 256 32 128 68 7 0 5 15)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "bench_rates.h"
#include "nn/mlp_block.h"
#include "nn/param_set.h"
#include "nn/state_concat_linear.h"
#include "ops/sparse_rows.h"

namespace attn::bench {
namespace {

constexpr int64_t kOut = 4;  // d' of the qsa configs

int bench_main(int argc, char** argv) {
  const bool shape = argc > 6;
  const int64_t B = shape ? std::atoll(argv[1]) : 256, N = shape ? std::atoll(argv[2]) : 32;
  const int64_t F = shape ? std::atoll(argv[3]) : 128, C = shape ? std::atoll(argv[4]) : 68;
  const int64_t nnz = shape ? std::atoll(argv[5]) : 7, hw = shape ? std::atoll(argv[6]) : 0;
  const int rounds = argc > 7 ? std::atoi(argv[7]) : 5, reps = argc > 8 ? std::atoi(argv[8]) : 15;
  if (B < 1 || N < 1 || F < 1 || C < 1 || nnz < 1 || nnz > C || hw < 0 || rounds < 1 ||
      reps < 1) {
    std::fprintf(stderr, "usage: bench_lstm_head [B N F C nnz head_width [rounds [reps]]] (all "
                         ">= 1 but head_width >= 0, nnz <= C)\n");
    return 2;
  }
  const int64_t R = B * N, W = F + C;
  std::printf("bench_lstm_head B=%lld N=%lld F=%lld C=%lld nnz=%lld head_width=%lld rounds=%d "
              "reps=%d\n",
              (long long)B, (long long)N, (long long)F, (long long)C, (long long)nnz,
              (long long)hw, rounds, reps);
  std::vector<int64_t> dims{W};
  if (hw > 0) dims.push_back(hw);
  dims.push_back(kOut);
  ParamSet<float> ps;
  MlpBlock<float> formed, split, fused;  // fused: only its parameters
  formed.declare(ps, "formed", dims, Activation::relu);
  split.declare(ps, "split", dims, Activation::relu);
  fused.declare(ps, "fused", dims, Activation::relu);
  ps.allocate();
  formed.init(ps, 1, "bench");
  for (int l = 0; l < formed.layers(); ++l)  // the same weights on both sides
    for (auto [from, to] : {std::pair{formed.weight_id(l), split.weight_id(l)},
                            std::pair{formed.bias_id(l), split.bias_id(l)},
                            std::pair{formed.weight_id(l), fused.weight_id(l)},
                            std::pair{formed.bias_id(l), fused.bias_id(l)}})
      std::copy(ps.value(from), ps.value(from) + ps.entry(from).size, ps.value(to));
  const int64_t o1 = dims[1];

  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  std::vector<float> s(B * F), x(R * C, 0.f), dout(R * kOut);
  std::vector<int64_t> cols(C);
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t k = 0; k < C; ++k) cols[k] = k;
    std::shuffle(cols.begin(), cols.end(), rng);
    for (int64_t k = 0; k < nnz; ++k) x[r * C + cols[k]] = 1.f + u(rng);
  }
  for (auto* v : {&s, &dout})
    for (float& e : *v) e = u(rng);
  SparseRows<float> xs;
  const bool sparse = sparse_rows_build(xs, x.data(), R, C);
  std::vector<float> rows(R * W), y(R * kOut), zs(B * o1), g_sum(B * o1);
  const StateConcatShape sh{B, N, F, C, o1};
  auto run_formed = [&] {
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < N; ++i) {
        float* row = rows.data() + (b * N + i) * W;
        std::memcpy(row, s.data() + b * F, sizeof(float) * F);
        std::memcpy(row + F, x.data() + (b * N + i) * C, sizeof(float) * C);
      }
    formed.forward(ps, rows.data(), R, y.data());
    formed.backward(ps, dout.data(), nullptr);
    state_concat_sequence_sums(g_sum.data(), formed.first_layer_dout(), sh);
  };
  auto run_split = [&] {
    state_concat_linear_forward(split.first_output(R), zs.data(), s.data(), x.data(),
                                sparse ? &xs : nullptr, ps.value(split.weight_id(0)),
                                ps.value(split.bias_id(0)), sh);
    split.forward_after_first(ps, R, y.data());
    split.backward(ps, dout.data(), nullptr);
    state_concat_sequence_sums(g_sum.data(), split.first_layer_dout(), sh);
    state_concat_linear_backward(ps.grad(split.weight_id(0)), split.first_layer_dout(),
                                 g_sum.data(), s.data(), x.data(), sparse ? &xs : nullptr, sh);
  };
  const bool with_fused = hw > 0 && sparse;
  auto run_fused = [&] {
    const float* w0 = ps.value(fused.weight_id(0));
    const float* w1 = ps.value(fused.weight_id(1));
    state_concat_relu_head_forward(y.data(), zs.data(), s.data(), xs, w0,
                                   ps.value(fused.bias_id(0)), w1, ps.value(fused.bias_id(1)), sh,
                                   kOut);
    state_concat_relu_head_backward(g_sum.data(), ps.grad(fused.weight_id(0)),
                                    ps.grad(fused.bias_id(0)), ps.grad(fused.weight_id(1)),
                                    ps.grad(fused.bias_id(1)), dout.data(), zs.data(), s.data(), xs,
                                    w0, w1, sh, kOut);
  };
  for (int r = 0; r < rounds; ++r) {
    std::vector<double> tf, ts, tu;
    for (int k = 0; k < reps; ++k) {
      ps.zero_grad();
      const double c0 = cpu_s();
      run_formed();
      const double c1 = cpu_s();
      run_split();
      const double c2 = cpu_s();
      if (with_fused) run_fused();
      tu.push_back(cpu_s() - c2);
      ts.push_back(c2 - c1);
      tf.push_back(c1 - c0);
    }
    std::printf("round=%d x_sparse=%d formed_ms=%.3f split_ms=%.3f ratio=%.2f", r, int(sparse),
                1e3 * median(tf), 1e3 * median(ts), median(tf) / median(ts));
    if (with_fused)
      std::printf(" fused_ms=%.3f split_over_fused=%.2f", 1e3 * median(tu),
                  median(ts) / median(tu));
    std::printf("\n");
  }
  // The two ways' gradients of the last pair (same weights, same data): their largest difference.
  float diff = 0;
  for (size_t l = 0; l < dims.size() - 1; ++l) {
    const int ids[2][2] = {{formed.weight_id(int(l)), split.weight_id(int(l))},
                           {formed.bias_id(int(l)), split.bias_id(int(l))}};
    for (const auto& id : ids)
      for (int64_t k = 0; k < ps.entry(id[0]).size; ++k)
        diff = std::max(diff, std::abs(ps.grad(id[0])[k] - ps.grad(id[1])[k]));
  }
  std::printf("largest gradient difference formed vs split: %.3g\n", diff);
  if (with_fused) {
    float dfu = 0;
    for (size_t l = 0; l < dims.size() - 1; ++l)
      for (const auto& id : {std::pair{split.weight_id(int(l)), fused.weight_id(int(l))},
                             std::pair{split.bias_id(int(l)), fused.bias_id(int(l))}})
        for (int64_t k = 0; k < ps.entry(id.first).size; ++k)
          dfu = std::max(dfu, std::abs(ps.grad(id.first)[k] - ps.grad(id.second)[k]));
    std::printf("largest gradient difference split vs fused: %.3g\n", dfu);
  }
  return 0;
}

}  // namespace
}  // namespace attn::bench

int main(int argc, char** argv) {
  return attn::bench::run_main(attn::bench::bench_main, argc, argv);
}
