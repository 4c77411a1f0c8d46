// The GEMMs of one training step of the `mlp` model, timed alone at their own shapes (issue #32:
// "the MLP within 5 % of the GEMMs' own time"). Depth 3 on B samples: X (B × D0) → H1 (B × W) →
// H2 (B × W) → Z (B × D3). Forward X·W0, H1·W1, H2·W2; backward the weight gradients H2ᵀ·dZ,
// H1ᵀ·dH2, Xᵀ·dH1 and the input gradients dZ·W2ᵀ, dH2·W1ᵀ (no dX: the input is data). The
// step's other work (bias broadcasts and sums, relu forward and masks, Adam) is what is left
// out. Each round (bench_rates.h step_products_round): the 2048³ sgemm rate, then per product
// the median CPU ms per training step and its GFLOP/s, their sum and its share of that rate.
// Compare the sum with bench_nn_train's config j (the same model) run alternately. (Since
// 2026-12-07 the trainer makes the last layer's forward and input gradient, 1 024 × 64 weights,
// on the FMA tiles of ops/linear.cpp's rule; here all products are OpenBLAS's.)
// Usage: bench_mlp_gemms [B D0 W D3 [rounds]]   (default 256 576 1024 64 5: config j)
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_rates.h"
#include "ops/blas.h"

namespace attn::bench {
namespace {

int bench_main(int argc, char** argv) {
  const bool sized = argc > 4;
  const int64_t B = sized ? std::atoll(argv[1]) : 256, D0 = sized ? std::atoll(argv[2]) : 576;
  const int64_t W = sized ? std::atoll(argv[3]) : 1024, D3 = sized ? std::atoll(argv[4]) : 64;
  const int rounds = argc > 5 ? std::atoi(argv[5]) : 5;
  if (B < 1 || D0 < 1 || W < 1 || D3 < 1 || rounds < 1) {
    std::fprintf(stderr, "usage: bench_mlp_gemms [B D0 W D3 [rounds]] (all >= 1)\n");
    return 2;
  }
  std::vector<float> x(B * D0, 0.01f), h1(B * W, 0.02f), h2(B * W, 0.03f), z(B * D3);
  std::vector<float> w0(D0 * W, 0.01f), w1(W * W, 0.01f), w2(W * D3, 0.01f);
  std::vector<float> dz(B * D3, 0.02f), dh2(B * W), dh1(B * W);
  std::vector<float> dw0(D0 * W, 0.f), dw1(W * W, 0.f), dw2(W * D3, 0.f);
  const double f0 = 2.0 * double(B) * double(D0) * double(W);
  const double f1 = 2.0 * double(B) * double(W) * double(W);
  const double f2 = 2.0 * double(B) * double(W) * double(D3);
  std::printf("bench_mlp_gemms B=%lld D0=%lld W=%lld D3=%lld rounds=%d (GFLOP a step %.4f)\n",
              (long long)B, (long long)D0, (long long)W, (long long)D3, rounds,
              (3 * (f0 + f1 + f2) - f0) * 1e-9);
  const float* X = x.data();
  const std::vector<StepProduct> products = {
      {"fwd0", f0, [&] { gemm<float>(false, false, B, W, D0, 1.f, X, D0, w0.data(), W, 1.f,
                                     h1.data(), W); }},
      {"fwd1", f1, [&] { gemm<float>(false, false, B, W, W, 1.f, h1.data(), W, w1.data(), W, 1.f,
                                     h2.data(), W); }},
      {"fwd2", f2, [&] { gemm<float>(false, false, B, D3, W, 1.f, h2.data(), W, w2.data(), D3,
                                     1.f, z.data(), D3); }},
      {"dw2", f2, [&] { gemm<float>(true, false, W, D3, B, 1.f, h2.data(), W, dz.data(), D3, 1.f,
                                    dw2.data(), D3); }},
      {"dh2", f2, [&] { gemm<float>(false, true, B, W, D3, 1.f, dz.data(), D3, w2.data(), D3,
                                    0.f, dh2.data(), W); }},
      {"dw1", f1, [&] { gemm<float>(true, false, W, W, B, 1.f, h1.data(), W, dh2.data(), W, 1.f,
                                    dw1.data(), W); }},
      {"dh1", f1, [&] { gemm<float>(false, true, B, W, W, 1.f, dh2.data(), W, w1.data(), W, 0.f,
                                    dh1.data(), W); }},
      {"dw0", f0, [&] { gemm<float>(true, false, D0, W, B, 1.f, X, D0, dh1.data(), W, 1.f,
                                    dw0.data(), W); }}};
  for (int r = 0; r < rounds; ++r) step_products_round(r, 11, products);
  return 0;
}

}  // namespace
}  // namespace attn::bench

int main(int argc, char** argv) {
  return attn::bench::run_main(attn::bench::bench_main, argc, argv);
}
