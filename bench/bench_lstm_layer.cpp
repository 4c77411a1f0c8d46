// One LSTM layer's forward and backward alone (ops/lstm.h), on bench_nn_train's config c shapes
// by default: batch B, T steps, C inputs of which `nnz` a row are non-zero (config c: 68 inputs,
// about 8 non-zeros, so the input products take the sparse path; nnz = C gives a dense input, as a
// second layer's), hidden Hd. The backward computes dwx, dwh and db, and dx only for a dense input
// (nnz = C, a second layer's case: LstmNet never asks its first layer for dx). Without the head,
// the loss and Adam the layer's own changes are measured with less around them than in the step.
// Each round: the 1-thread 2048³ sgemm rate, then `reps` forward + backward pairs; prints the
// median CPU ms of each and the recurrent GEMMs' share of the sgemm rate they would take alone
// (3 · 2·(T−1)·B·Hd·4Hd flops).
// Usage: bench_lstm_layer [B T C nnz Hd [rounds [reps]]]   (default 256 32 68 8 128 5 9)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "bench_rates.h"
#include "ops/lstm.h"

namespace attn::bench {
namespace {

int bench_main(int argc, char** argv) {
  const bool shape = argc > 5;
  const int64_t B = shape ? std::atoll(argv[1]) : 256, T = shape ? std::atoll(argv[2]) : 32;
  const int64_t C = shape ? std::atoll(argv[3]) : 68, nnz = shape ? std::atoll(argv[4]) : 8;
  const int64_t H = shape ? std::atoll(argv[5]) : 128;
  const int rounds = argc > 6 ? std::atoi(argv[6]) : 5, reps = argc > 7 ? std::atoi(argv[7]) : 9;
  if (B < 1 || T < 1 || C < 1 || nnz < 1 || nnz > C || H < 1 || rounds < 1 || reps < 1) {
    std::fprintf(stderr, "usage: bench_lstm_layer [B T C nnz Hd [rounds [reps]]] (all >= 1, "
                         "nnz <= C)\n");
    return 2;
  }
  const int64_t G = 4 * H, rows = B * T;
  std::printf("bench_lstm_layer B=%lld T=%lld C=%lld nnz=%lld Hd=%lld rounds=%d reps=%d\n",
              (long long)B, (long long)T, (long long)C, (long long)nnz, (long long)H, rounds,
              reps);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-0.1f, 0.1f);
  // x: nnz distinct columns a row, values near 1 (one-hot-like); weights and dh small.
  std::vector<float> x(rows * C, 0.f), wx(C * G), wh(H * G), b(G), dh(rows * H);
  std::vector<int64_t> cols(C);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < C; ++k) cols[k] = k;
    std::shuffle(cols.begin(), cols.end(), rng);
    for (int64_t k = 0; k < nnz; ++k) x[r * C + cols[k]] = 1.f + u(rng);
  }
  for (auto* v : {&wx, &wh, &b, &dh})
    for (float& e : *v) e = u(rng);
  std::vector<float> h(rows * H), c(rows * H), tanh_c(rows * H), gates(rows * G);
  std::vector<float> dx(rows * C), dwx(C * G), dwh(H * G), db(G);
  const bool with_dx = nnz == C;  // a second layer's dense input; a first layer has no dx
  const LstmShape s{B, T, C, H, false};
  const double gemm_flops = 3 * 2.0 * double(T - 1) * double(B) * double(H) * double(G);
  for (int r = 0; r < rounds; ++r) {
    const double sgemm = sgemm_gflops();
    std::vector<double> fwd, bwd;
    for (int k = 0; k < reps; ++k) {
      const double c0 = cpu_s();
      lstm_forward(h.data(), c.data(), tanh_c.data(), gates.data(), x.data(), wx.data(),
                   wh.data(), b.data(), s);
      const double c1 = cpu_s();
      lstm_backward(with_dx ? dx.data() : nullptr, dwx.data(), dwh.data(), db.data(), dh.data(),
                    x.data(), wx.data(), wh.data(), h.data(), c.data(), tanh_c.data(),
                    gates.data(), s);
      fwd.push_back(c1 - c0);
      bwd.push_back(cpu_s() - c1);
    }
    const double f = median(fwd), bw = median(bwd);
    std::printf("round=%d sgemm_2048=%.1f forward_ms=%.3f backward_ms=%.3f total_ms=%.3f "
                "(recurrent GEMMs at the sgemm rate: %.3f ms, %.0f %% of the total)\n",
                r, sgemm, 1e3 * f, 1e3 * bw, 1e3 * (f + bw), gemm_flops / sgemm * 1e-6,
                100 * gemm_flops / sgemm * 1e-9 / (f + bw));
  }
  std::printf("checksum dwh[0]=%.6g dwx[0]=%.6g\n", dwh[0], dwx[0]);
  return 0;
}

}  // namespace
}  // namespace attn::bench

int main(int argc, char** argv) {
  return attn::bench::run_main(attn::bench::bench_main, argc, argv);
}
