// The recurrent products one training step of the LSTM must make, timed alone at their own shapes
// (issue #32: is "the LSTM at 2x PyTorch" within the machine's reach?). One layer, batch B, T
// steps, hidden Hd, G = 4·Hd gate columns, as ops/lstm.cpp makes them (the arrays' layouts: the
// argument below):
//   forward   per step  gates[t] += h[:, t-1] · wh       (B × Hd)·(Hd × G), h's rows strided by T
//   backward  per step  dhrec = da · whᵀ                (B × G)·(G × Hd)
//             per step  dwh += h[:, t-1]ᵀ · da           (Hd × B)·(B × G)
// with da one (B × G) block rewritten every step, as ops/lstm.cpp keeps it since 2026-12-06
// (before, da was (B, T, G) and dwh one product (Hd × B·T)·(B·T × G) after the loop: the second
// line of each round, beside dh on the register tiles).
// (the input products are on the one- and multi-hot input's non-zeros and are left out: they are
// not GEMMs). The layout argument: `op` (the default) as ops/lstm.cpp keeps its arrays since
// 2026-12-07, h batch-major (B, T, ·) and the gates time-major (T, B, ·); `batch` both (B, T, ·),
// as before (a step's gate rows T·G floats apart); `time` both (T, B, ·)
// (docs/performance.md#lstm-time-major-caches).
// Each round (bench_rates.h step_products_round) measures the 1-thread 2048³ sgemm rate, then
// prints per product the median CPU ms per training step and its GFLOP/s, their sum and its share
// of that rate, side by side: first as ops/lstm.cpp makes them since 2026-12-07, the forward and dh
// products on the FMA tiles of ops/fma_product.h with wh and whᵀ packed once per call (`*_fma`) and
// dwh on OpenBLAS; then all three per step on OpenBLAS, as before (`*_blas`); then alternatives:
// dwh on the FMA tiles with its operands in place or moved into contiguous blocks every step
// (`dwh_fma`, `dwh_fma_packed`) or transposed, dwhᵀ = daᵀ · h with da in place and h's block packed
// (`dwh_fma_t`, beside dwh_blas in a round of its own), dwh as one OpenBLAS product on a (B, T, G)
// da (rows B … T·B − 1 with `time`), and dh on the fused kernels' register tiles (no FMA). Each
// round starts with the core's own multiply-add rate (`fma_peak`: 12 independent chains of FMA
// instructions on 64-byte vectors where the CPU has AVX-512, else 32-byte ones), the ceiling every
// product here is measured against. Usage: bench_lstm_gemms [B T Hd [rounds [op|batch|time]]]
// (default 256 32 128 5 op: bench_nn_train's config c, on ops/lstm.cpp's layout)
#include <immintrin.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench_rates.h"
#include "bench_tiles.h"
#include "ops/attention_tiles.h"
#include "ops/blas.h"
#include "ops/fma_product.h"

namespace attn::bench {
namespace {

// GFLOP/s of n iterations of 12 independent FMA chains (2 · lanes · 12 flops each), on 64-byte
// and on 32-byte vectors.
[[gnu::target("avx512f")]] double fma_chains_512(int64_t n) {
  __m512 acc[12];
  for (int u = 0; u < 12; ++u) acc[u] = _mm512_set1_ps(0.001f * float(u));
  const __m512 b = _mm512_set1_ps(0.9999f), c = _mm512_set1_ps(1e-4f);
  const double c0 = cpu_s();
  for (int64_t it = 0; it < n; ++it)
#pragma GCC unroll 12
    for (int u = 0; u < 12; ++u) acc[u] = _mm512_fmadd_ps(acc[u], b, c);
  const double s = cpu_s() - c0;
  float lanes[16] = {};
  for (int u = 0; u < 12; ++u) {
    float v[16];
    _mm512_storeu_ps(v, acc[u]);
    for (int l = 0; l < 16; ++l) lanes[l] += v[l];
  }
  if (lanes[0] == 12345.f) std::printf(" ");  // keeps the chains alive
  return 2.0 * 16 * 12 * double(n) / s * 1e-9;
}

[[gnu::target("avx2,fma")]] double fma_chains_256(int64_t n) {
  __m256 acc[12];
  for (int u = 0; u < 12; ++u) acc[u] = _mm256_set1_ps(0.001f * float(u));
  const __m256 b = _mm256_set1_ps(0.9999f), c = _mm256_set1_ps(1e-4f);
  const double c0 = cpu_s();
  for (int64_t it = 0; it < n; ++it)
#pragma GCC unroll 12
    for (int u = 0; u < 12; ++u) acc[u] = _mm256_fmadd_ps(acc[u], b, c);
  const double s = cpu_s() - c0;
  float lanes[8] = {};
  for (int u = 0; u < 12; ++u) {
    float v[8];
    _mm256_storeu_ps(v, acc[u]);
    for (int l = 0; l < 8; ++l) lanes[l] += v[l];
  }
  if (lanes[0] == 12345.f) std::printf(" ");  // keeps the chains alive
  return 2.0 * 8 * 12 * double(n) / s * 1e-9;
}

// The core's multiply-add rate, float (best of 3 runs of about 0.1 s); 0 on a CPU without FMA.
double fma_peak_gflops() {
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f");
  if (!avx512 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) return 0;
  double best = 0;
  for (int r = 0; r < 3; ++r)
    best = std::max(best, avx512 ? fma_chains_512(20'000'000) : fma_chains_256(40'000'000));
  return best;
}

int bench_main(int argc, char** argv) {
  const int64_t B = argc > 3 ? std::atoll(argv[1]) : 256, T = argc > 3 ? std::atoll(argv[2]) : 32;
  const int64_t H = argc > 3 ? std::atoll(argv[3]) : 128;
  const int rounds = argc > 4 ? std::atoi(argv[4]) : 5;
  const char* layout = argc > 5 ? argv[5] : "op";
  const bool h_time = std::strcmp(layout, "time") == 0;  // h time-major
  const bool gates_time = h_time || std::strcmp(layout, "op") == 0;
  if (B < 1 || T < 2 || H < 1 || rounds < 1 || (!gates_time && std::strcmp(layout, "batch"))) {
    std::fprintf(stderr,
                 "usage: bench_lstm_gemms [B T Hd [rounds [op|batch|time]]] (B, Hd, rounds >= 1; "
                 "T >= 2; op: h (B, T, ·) and the gates (T, B, ·) as ops/lstm.cpp, batch: both "
                 "(B, T, ·), time: both (T, B, ·))\n");
    return 2;
  }
  const int64_t G = 4 * H;
  const double flops = 2.0 * double(T - 1) * double(B) * double(H) * double(G);  // each kind
  std::printf("bench_lstm_gemms B=%lld T=%lld Hd=%lld rounds=%d layout=%s (GFLOP per kind per step "
              "%.3f)\n", (long long)B, (long long)T, (long long)H, rounds, layout, flops * 1e-9);
  std::vector<float> h(B * T * H, 0.01f), gates(B * T * G, 0.02f), da(B * G, 0.03f);
  std::vector<float> da_all(B * T * G, 0.03f);  // the alternatives' da for every step
  std::vector<float> wh(H * G, 0.05f), wht(G * H), dhrec(B * H), dwh(H * G, 0.f);
  // Where step t's rows start and how far apart they are, in rows of the array (any width):
  // batch-major (B, T, ·) row t, rows T apart; time-major (T, B, ·) row t·B, rows 1 apart.
  const int64_t step_rows = h_time ? B : 1, row_gap = h_time ? 1 : T;              // h's
  const int64_t g_step_rows = gates_time ? B : 1, g_row_gap = gates_time ? 1 : T;  // the gates'
  // The products, each made for every step of one training step.
  std::vector<float> panels, block;
  // On the FMA tiles, the weights packed once a call (forward: wh; backward: whᵀ) as ops/lstm.cpp.
  const StepProduct fwd_fma{
      "fwd_fma", flops, [&] {
        const FmaPanels whp = fma_pack_panels(panels, wh.data(), G, false, H, G);
        for (int64_t t = 1; t < T; ++t)
          fma_product(gates.data() + t * g_step_rows * G, g_row_gap * G,
                      FmaOperandA{h.data() + (t - 1) * step_rows * H, row_gap * H, 1}, whp, B, H,
                      true);
      }};
  const StepProduct dh_fma{
      "dh_fma", flops, [&] {
        const FmaPanels whtp = fma_pack_panels(panels, wh.data(), G, true, G, H);
        for (int64_t t = T - 1; t >= 1; --t)
          fma_product(dhrec.data(), H, FmaOperandA{da.data(), G, 1}, whtp, B, G, false);
      }};
  // dwh on the FMA tiles, not in ops/lstm.cpp: both operands where they lie (h's block
  // transposed, da in place), and both moved first into contiguous blocks every step.
  const StepProduct dwh_fma{"dwh_fma", flops, [&] {
                              for (int64_t t = T - 1; t >= 1; --t)
                                fma_product(
                                    dwh.data(), G,
                                    FmaOperandA{h.data() + (t - 1) * step_rows * H, 1, row_gap * H},
                                    fma_panels_in_place(da.data(), G, G), H, B, true);
                            }};
  const StepProduct dwh_fma_packed{
      "dwh_fma_packed", flops, [&] {
        for (int64_t t = T - 1; t >= 1; --t) {
          const float* hp = h.data() + (t - 1) * step_rows * H;
          block.resize(H * B);
          for (int64_t bb = 0; bb < B; ++bb)
            for (int64_t r = 0; r < H; ++r) block[r * B + bb] = hp[bb * row_gap * H + r];
          fma_product(dwh.data(), G, FmaOperandA{block.data(), B, 1},
                      fma_pack_panels(panels, da.data(), G, false, B, G), H, B, true);
        }
      }};
  // dwhᵀ (G × Hd) += daᵀ · h's block: da read in place as the transposed A (8 or 6 neighbouring
  // gate columns a tile, one row of da a term), h's block packed into panels every step.
  std::vector<float> dwht(G * H, 0.f);
  const StepProduct dwh_fma_t{"dwh_fma_t", flops, [&] {
                                for (int64_t t = T - 1; t >= 1; --t) {
                                  const float* hp = h.data() + (t - 1) * step_rows * H;
                                  fma_product(dwht.data(), H, FmaOperandA{da.data(), 1, G},
                                              fma_pack_panels(panels, hp, row_gap * H, false, B, H),
                                              G, B, true);
                                }
                              }};
  // On OpenBLAS, one GEMM a step each (before 2026-12-07 all three; dwh still).
  const StepProduct fwd_blas{
      "fwd_blas", flops, [&] {
        for (int64_t t = 1; t < T; ++t)
          gemm<float>(false, false, B, G, H, 1.f, h.data() + (t - 1) * step_rows * H, row_gap * H,
                      wh.data(), G, 1.f, gates.data() + t * g_step_rows * G, g_row_gap * G);
      }};
  const StepProduct dh_blas{"dh_blas", flops, [&] {
                              for (int64_t t = T - 1; t >= 1; --t)
                                gemm<float>(false, true, B, H, G, 1.f, da.data(), G, wh.data(), G,
                                            0.f, dhrec.data(), H);
                            }};
  const StepProduct dwh_blas{"dwh_blas", flops, [&] {
                               for (int64_t t = T - 1; t >= 1; --t)
                                 gemm<float>(true, false, H, G, B, 1.f,
                                             h.data() + (t - 1) * step_rows * H, row_gap * H,
                                             da.data(), G, 1.f, dwh.data(), G);
                             }};
  // Older alternatives: dwh as one product after the loop, h's rows paired with da's one step
  // later (batch-major, the rows crossing into the next sequence are paired too, as ops/lstm.cpp
  // paired them), and the per-step dh product on the fused attention kernels' register tiles (whᵀ,
  // 4Hd × Hd, transposed once; no FMA).
  const StepProduct dwh_once{"dwh_once", flops, [&] {
                               gemm<float>(true, false, H, G, B * T - step_rows, 1.f, h.data(), H,
                                           da_all.data() + step_rows * G, G, 1.f, dwh.data(), G);
                             }};
  const StepProduct dh_tiles{"dh_tiles", flops, [&] {
                               attention_tiles::transpose_rows(wht.data(), wh.data(), H, G, G);
                               for (int64_t t = T - 1; t >= 1; --t)
                                 tiles_product(dhrec.data(), H, da.data(), G, 1, wht.data(), H, B,
                                               H, G, false);
                             }};
  for (int r = 0; r < rounds; ++r) {
    std::printf("round=%d fma_peak=%.1f GFLOP/s\n", r, fma_peak_gflops());
    step_products_round(r, 7, {fwd_fma, dh_fma, dwh_blas});    // as ops/lstm.cpp
    step_products_round(r, 7, {fwd_blas, dh_blas, dwh_blas});  // as before
    step_products_round(r, 7, {dwh_fma, dwh_fma_packed, dwh_once, dh_tiles});
    step_products_round(r, 7, {dwh_fma_t, dwh_blas});
  }
  return 0;
}

}  // namespace
}  // namespace attn::bench

int main(int argc, char** argv) {
  return attn::bench::run_main(attn::bench::bench_main, argc, argv);
}
