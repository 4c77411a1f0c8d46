// The machine's rate for the fused kernels' inner step: a multiply and then an add (two
// instructions, each rounded: how attnlab's register tiles sum, the same bits in every ISA copy)
// against one fused multiply-add, in 64-byte (AVX-512) vectors as in a register tile: one vector
// loaded a step, 12 accumulators with their own factors. Prints G float multiply-adds/s for
// each, alternated over rounds. On CPUs whose adds issue beside their multiplies (separate
// pipes) the two are close; where multiply-adds and adds share two pipes, the pair runs at half
// the fused rate (docs/performance.md#blas-core-fallback).
//   bench_mul_add [rounds (3)] [steps (40000000)]
#include <immintrin.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr int kAcc = 12;

template <bool Fused>
__attribute__((noinline, target("avx512f"))) float run(long steps, const float* x, long n) {
  __m512 acc[kAcc], b[kAcc];
  for (int i = 0; i < kAcc; ++i) {
    acc[i] = _mm512_setzero_ps();
    b[i] = _mm512_set1_ps(1.0f + static_cast<float>(i) * 1e-3f);
  }
  long p = 0;
  for (long k = 0; k < steps; ++k) {
    const __m512 a = _mm512_loadu_ps(x + p);
    p = (p + 16) & (n - 1);
#pragma GCC unroll 12
    for (int i = 0; i < kAcc; ++i)
      acc[i] = Fused ? _mm512_fmadd_ps(a, b[i], acc[i])
                     : _mm512_add_ps(acc[i], _mm512_mul_ps(a, b[i]));
  }
  __m512 s = acc[0];
  for (int i = 1; i < kAcc; ++i) s = _mm512_add_ps(s, acc[i]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, s);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
  const long steps = argc > 2 ? std::atol(argv[2]) : 40000000;
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f")) {
    std::fprintf(stderr, "bench_mul_add: this CPU has no AVX-512\n");
    return 2;
  }
  const long n = 4096;  // 16 KiB of input, cycled: stays in L1
  std::vector<float> x(n, 1e-6f);
  for (int r = 0; r < rounds; ++r)
    for (int fused = 0; fused < 2; ++fused) {
      const auto t0 = std::chrono::steady_clock::now();
      const float v = fused ? run<true>(steps, x.data(), n) : run<false>(steps, x.data(), n);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("round=%d %s gmadds_per_s=%.1f (check %g)\n", r, fused ? "fma" : "mul_add",
                  steps * double(kAcc) * 16 / s * 1e-9, v);
    }
  return 0;
}
