// The dense GEMMs of φ's second layer in one training step of the attention unit, timed alone at
// their own shapes (issue #32: is "attention at N = 32 at 2x PyTorch" within reach?). R = B·N rows,
// φ of width W (128) to m: forward Z = H1 · W2 ((R × W)·(W × m)); backward dH1 = dZ · W2ᵀ
// ((R × m)·(m × W)) and dW2 = H1ᵀ · dZ ((W × R)·(R × m)). φ's first layer runs on the input's
// non-zeros and the attention products in the fused kernels (not GEMMs), so they are left out.
// Each round (bench_rates.h step_products_round): the 2048³ sgemm rate, then per product the
// median CPU ms per training step and its GFLOP/s, their sum and its share of that rate: first on
// OpenBLAS (fwd, dh1, dw2: what ops/linear.cpp ran before 2026-12-07, and runs outside its rule),
// then on the FMA register tiles of ops/fma_product.h as ops/linear.cpp makes them where its rule
// picks them (fwd_fma, dh1_fma, dw2_fma: the weight packed every call, dw2 with both operands in
// place; docs/performance.md#linear-fma-tiles).
// A line outside that sum: what MlpBlock's backward runs instead of dh1 and the relu's backward
// (ops/linear_relu_backward.h), forced onto its register tiles (relu_tiles, the trainer's path up
// to kLinearReluTiledMaxOut terms) and onto its product-then-mask path (relu_gemm: the product by
// linear_backward_input_set, OpenBLAS or the FMA tiles by ops/linear.cpp's rule, then the mask
// and the bias sum; the trainer's path above). A third line: fwd and dw2 on the same register tiles
// (fwd_tiles, dw2_tiles; built without FMA contraction, as the kernels are), measured only.
// (The trainer runs chunks of B/8 samples at this size:
// R = 1024 for config d; pass it as R to see the chunk's cache behaviour.)
// Usage: bench_phi_gemms [R W m [rounds]]   (default 8192 128 16 5: bench_nn_train's config d)
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_rates.h"
#include "bench_tiles.h"
#include "ops/blas.h"
#include "ops/fma_product.h"
#include "ops/linear_relu_backward.h"

namespace attn::bench {
namespace {

int bench_main(int argc, char** argv) {
  const int64_t R = argc > 3 ? std::atoll(argv[1]) : 8192, W = argc > 3 ? std::atoll(argv[2]) : 128;
  const int64_t m = argc > 3 ? std::atoll(argv[3]) : 16;
  const int rounds = argc > 4 ? std::atoi(argv[4]) : 5;
  if (R < 1 || W < 1 || m < 1 || rounds < 1) {
    std::fprintf(stderr, "usage: bench_phi_gemms [R W m [rounds]] (all >= 1)\n");
    return 2;
  }
  std::vector<float> h1(R * W, 0.01f), w2(W * m, 0.02f), z(R * m), dz(R * m, 0.03f);
  std::vector<float> dh1(R * W), dw2(W * m, 0.f);
  const double flops = 2.0 * double(R) * double(W) * double(m);  // each product
  std::printf("bench_phi_gemms R=%lld W=%lld m=%lld rounds=%d (GFLOP per product %.4f)\n",
              (long long)R, (long long)W, (long long)m, rounds, flops * 1e-9);
  const std::vector<StepProduct> products = {
      {"fwd", flops,
       [&] {
         gemm<float>(false, false, R, m, W, 1.f, h1.data(), W, w2.data(), m, 0.f, z.data(), m);
       }},
      {"dh1", flops,
       [&] {
         gemm<float>(false, true, R, W, m, 1.f, dz.data(), m, w2.data(), m, 0.f, dh1.data(), W);
       }},
      {"dw2", flops, [&] {
         gemm<float>(true, false, W, m, R, 1.f, h1.data(), W, dz.data(), m, 1.f, dw2.data(), m);
       }}};
  std::vector<float> packed;
  const std::vector<StepProduct> fma_products = {
      {"fwd_fma", flops,
       [&] {
         fma_product(z.data(), m, FmaOperandA{h1.data(), W, 1},
                     fma_pack_panels(packed, w2.data(), m, false, W, m), R, W, false);
       }},
      {"dh1_fma", flops,
       [&] {
         fma_product(dh1.data(), W, FmaOperandA{dz.data(), m, 1},
                     fma_pack_panels(packed, w2.data(), m, true, m, W), R, m, false);
       }},
      {"dw2_fma", flops, [&] {
         fma_product(dw2.data(), m, FmaOperandA{h1.data(), 1, W},
                     fma_panels_in_place(dz.data(), m, m), W, R, true);
       }}};
  // A relu output with about half its entries 0, and the bias gradient.
  std::vector<float> act(R * W), dbias(W, 0.f);
  for (size_t i = 0; i < act.size(); ++i) act[i] = (i * 7919 % 13) < 6 ? 0.f : 0.5f;
  const std::vector<StepProduct> relu_paths = {
      {"relu_tiles", flops,
       [&] {
         linear_backward_input_relu<float>(dh1.data(), dbias.data(), dz.data(), w2.data(),
                                           act.data(), R, W, m, m);
       }},
      {"relu_gemm", flops, [&] {
         linear_backward_input_relu<float>(dh1.data(), dbias.data(), dz.data(), w2.data(),
                                           act.data(), R, W, m, 0);
       }}};
  // fwd and dw2 on the register tiles instead of OpenBLAS.
  const std::vector<StepProduct> tile_paths = {
      {"fwd_tiles", flops,
       [&] { tiles_product(z.data(), m, h1.data(), W, 1, w2.data(), m, R, m, W, false); }},
      {"dw2_tiles", flops,
       [&] { tiles_product(dw2.data(), m, h1.data(), 1, W, dz.data(), m, W, m, R, true); }}};
  for (int r = 0; r < rounds; ++r) {
    step_products_round(r, 21, products);
    step_products_round(r, 21, fma_products);
    step_products_round(r, 21, relu_paths);
    step_products_round(r, 21, tile_paths);
  }
  return 0;
}

}  // namespace
}  // namespace attn::bench

int main(int argc, char** argv) {
  return attn::bench::run_main(attn::bench::bench_main, argc, argv);
}
