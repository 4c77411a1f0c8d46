// The float element-wise kernels (ops/vmath.h) in the copy ATTNLAB_ISA picks (ops/isa.h): sigmoid
// and tanh on inputs spread over [−8, 8), exp on [−16, 0], n = 4096 floats a call (an
// L1-resident block, as the kernels see in training). Counter: elements per second.
// Two more exp inputs, as softmax rows give them: a causal 64 × 64 block (the entries right of
// the diagonal −inf, as the fused attention kernel masks them) and [−16, 0] with one entry in 16
// at −90 (a very sharp row; docs/performance.md#exp-subnormal: the cost of a subnormal product).
// bench/isa_ab.sh runs it once per copy.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "google_bench_main.h"
#include "ops/isa.h"
#include "ops/vmath.h"

namespace attn {
namespace {

constexpr int64_t kN = 4096;

// Times F on the kN inputs x; the counter: elements per second.
template <void (*F)(float*, const float*, int64_t)>
void time_on(benchmark::State& state, const std::vector<float>& x) {
  std::vector<float> y(kN);
  for (auto _ : state) {
    F(y.data(), x.data(), kN);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["elements/s"] =
      benchmark::Counter(static_cast<double>(kN), benchmark::Counter::kIsIterationInvariantRate);
}

// [−8, 8), or [−16, 0] for the exp.
template <void (*F)(float*, const float*, int64_t)>
void run(benchmark::State& state, bool nonpositive) {
  std::vector<float> x(kN);
  for (int64_t i = 0; i < kN; ++i) {
    const float v = -8.0f + 16.0f * static_cast<float>(i % 1000) / 1000.0f;
    x[i] = nonpositive ? -2 * std::abs(v) : v;
  }
  time_on<F>(state, x);
}

// exp on a causal 64 × 64 block (kN entries): row i's entries j > i are −inf.
void BM_ExpCausalMasked(benchmark::State& state) {
  std::vector<float> x(kN);
  for (int64_t i = 0; i < 64; ++i)
    for (int64_t j = 0; j < 64; ++j)
      x[i * 64 + j] =
          j > i ? -INFINITY : -16.0f * static_cast<float>((i * 64 + j) % 1000) / 1000.0f;
  time_on<vmath_exp_nonpositive<float>>(state, x);
}

// exp on [−16, 0] with every 16th entry at −90 (clamped to −87: a subnormal product inside).
void BM_ExpDeepNegative(benchmark::State& state) {
  std::vector<float> x(kN);
  for (int64_t i = 0; i < kN; ++i)
    x[i] = i % 16 == 5 ? -90.0f : -16.0f * static_cast<float>(i % 1000) / 1000.0f;
  time_on<vmath_exp_nonpositive<float>>(state, x);
}

void BM_Sigmoid(benchmark::State& state) { run<vmath_sigmoid<float>>(state, false); }
void BM_Tanh(benchmark::State& state) { run<vmath_tanh<float>>(state, false); }
void BM_ExpNonpositive(benchmark::State& state) { run<vmath_exp_nonpositive<float>>(state, true); }
BENCHMARK(BM_Sigmoid);
BENCHMARK(BM_Tanh);
BENCHMARK(BM_ExpNonpositive);
BENCHMARK(BM_ExpCausalMasked);
BENCHMARK(BM_ExpDeepNegative);

}  // namespace
}  // namespace attn

int main(int argc, char** argv) { return attn::bench::google_benchmark_main(argc, argv); }
