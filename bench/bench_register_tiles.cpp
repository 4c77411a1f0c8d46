// Which register tile the fused kernels' products (ops/attention_tiles.h) should use in the
// AVX-512 copy: tile_vec<float, R, W, 64> (R rows × W columns of 16-float vectors, multiply then
// add, as the kernels sum) timed alone on hot data, C (48 × 256) = A (48 × K) · B (K × 256), for
// K = 16, 64 and 256 (third order's scores at N = 16 have K = 16; its U and the attention units'
// products run longer). Prints G multiply-adds/s per tile, the best of the rounds, the tiles
// alternated within each round. The products give the same bits in every tile (one accumulator
// per entry, summed over k in order): only the speed differs. Compiled with -ffp-contract=off as
// the kernels are (bench/CMakeLists.txt). Needs a CPU with AVX-512 (F, BW, DQ, VL) and a build
// with ISA copies (not -march=native).
//   bench_register_tiles [rounds (3)]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_rates.h"
#include "ops/attention_tiles.h"
#include "ops/isa.h"

namespace {

using namespace attn;
using namespace attn::attention_tiles;

constexpr int64_t kM = 48, kN = 256;

#if ATTN_HAVE_ISA_COPIES
template <int R, int W>
ATTN_TARGET_AVX512 __attribute__((noinline)) void run(float* c, const float* a, const float* b,
                                                      int64_t K, int reps) {
  for (int rep = 0; rep < reps; ++rep)
    for (int64_t r0 = 0; r0 + R <= kM; r0 += R)
      for (int64_t j = 0; j + W <= kN; j += W)
        tile_vec<float, R, W, 64>(c + r0 * kN + j, kN, a + r0 * K, K, 1, b + j, kN, 0, K, 0.25f,
                                  false);
}

// G multiply-adds/s of one timed run of the R × W tile at K terms.
template <int R, int W>
double rate(int64_t K) {
  std::vector<float> c(kM * kN), a(kM * K), b(K * kN);
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.001f * float(i % 97) - 0.04f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.002f * float(i % 89) - 0.08f;
  const int reps = int(3e8 / double(kM * kN * K));
  run<R, W>(c.data(), a.data(), b.data(), K, 1);  // warm
  const double t0 = bench::cpu_s();
  run<R, W>(c.data(), a.data(), b.data(), K, reps);
  const double t = bench::cpu_s() - t0;
  return double(kM * kN * K) * reps / t / 1e9;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
#if ATTN_HAVE_ISA_COPIES
  if (!isa_cpu_has(IsaCopy::avx512)) {
    std::printf("bench_register_tiles: this CPU has no AVX-512 (F, BW, DQ, VL); nothing to time\n");
    return 0;
  }
  struct Row {
    const char* name;
    double (*fn)(int64_t);
  };
  const Row rows[] = {
      {"8x32", rate<8, 32>}, {"4x32", rate<4, 32>}, {"8x16", rate<8, 16>}, {"16x16", rate<16, 16>}};
  for (const int64_t K : {int64_t(16), int64_t(64), int64_t(256)}) {
    double best[4] = {};
    for (int r = 0; r < rounds; ++r)
      for (int i = 0; i < 4; ++i) best[i] = std::max(best[i], rows[i].fn(K));
    for (int i = 0; i < 4; ++i)
      std::printf("tile=%s M=%lld n=%lld K=%lld gmadds_per_s=%.1f\n", rows[i].name,
                  static_cast<long long>(kM), static_cast<long long>(kN), static_cast<long long>(K),
                  best[i]);
  }
#else
  (void)rounds;
  std::printf(
      "bench_register_tiles: built without ISA copies (x86-64 with GCC, no -march=native)\n");
#endif
  return 0;
}
