// Sparse-row products (ops/sparse_rows.h) against the dense sgemm they replace, across input
// densities: where the crossover lies that kSparseRowsMaxDensity (15 %) stands for.
//
// Workload: the LSTM benchmark's input product for one time step (bench_nn_train config c):
// x (256 rows × 68 columns, float), w (68 × 512); "times" is out = b + x · w (the forward, with a
// zero bias row as the LSTM passes its bias),
// "t_times" is dw += xᵀ · d with d (256 × 512) (the weight gradient). Non-zeros are placed at
// random with the given density (percent, the benchmark's argument); the dense side is one
// OpenBLAS sgemm on the same x (zeros included), 1 thread. The sparse side includes building
// the compressed rows (sparse_rows_build), as the LSTM does on every call.
// Counter: GFLOP/s of the dense product's work (2·256·68·512), so both rows are comparable.
// The *Steps benchmarks make the LSTM's own calls (ops/lstm.cpp): x holds all B·T rows (B = 256
// sequences of T = 32 steps, row b·T + t) and one iteration is the T calls of a forward or a
// backward, call t on the rows t, t + T, … whose outputs (gates) or inputs (gate gradients) are
// rows of a (B, T, 512) array: consecutive rows of one call lie T·512 floats (64 KB) apart.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "google_bench_main.h"
#include "core/rng.h"
#include "core/threads.h"
#include "ops/isa.h"
#include "ops/blas.h"
#include "ops/sparse_rows.h"

namespace attn {
namespace {

constexpr int64_t kRows = 256, kCols = 68, kOut = 512;

std::vector<float> random_matrix(int64_t n, double density, const char* stream) {
  Rng rng(1, stream, 0);
  std::vector<float> v(static_cast<size_t>(n), 0.0f);
  for (auto& e : v)
    if (rng.uniform() < density) e = static_cast<float>(2 * rng.uniform() - 1);
  return v;
}

// The benchmark's operands at state.range(0) percent density: x (kRows × kCols), the dense w
// (kCols × kOut) of the forward and the dense d (kRows × kOut) of the weight gradient.
struct Operands {
  explicit Operands(const benchmark::State& state)
      : x(random_matrix(kRows * kCols, static_cast<double>(state.range(0)) / 100, "x")),
        w(random_matrix(kCols * kOut, 1.0, "w")),
        d(random_matrix(kRows * kOut, 1.0, "d")) {
    threads_configure(1);
  }
  std::vector<float> x, w, d;
};

// Runs body once per iteration; the counter: GFLOP/s of the dense product's work.
template <class Body>
void timed(benchmark::State& state, Body body) {
  for (auto _ : state) body();
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * kRows * kCols * kOut * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

void BM_TimesSparse(benchmark::State& state) {
  const Operands o(state);
  std::vector<float> out(kRows * kOut), bias(kOut, 0.0f);
  SparseRows<float> s;
  timed(state, [&] {
    sparse_rows_build(s, o.x.data(), kRows, kCols, 1.0);
    sparse_rows_times(out.data(), kOut, s, o.w.data(), kOut, SparseRowSet{},
                      bias.data());  // overwrites
    benchmark::DoNotOptimize(out.data());
  });
}

void BM_TimesDense(benchmark::State& state) {
  const Operands o(state);
  std::vector<float> out(kRows * kOut);
  timed(state, [&] {
    gemm<float>(false, false, kRows, kOut, kCols, 1.0f, o.x.data(), kCols, o.w.data(), kOut, 0.0f,
                out.data(), kOut);
    benchmark::DoNotOptimize(out.data());
  });
}

void BM_TTimesSparse(benchmark::State& state) {
  const Operands o(state);
  std::vector<float> dw(kCols * kOut, 0.0f);
  SparseRows<float> s;
  timed(state, [&] {
    sparse_rows_build(s, o.x.data(), kRows, kCols, 1.0);
    sparse_rows_t_times(dw.data(), s, o.d.data(), kOut, kOut);
    benchmark::DoNotOptimize(dw.data());
  });
}

void BM_TTimesDense(benchmark::State& state) {
  const Operands o(state);
  std::vector<float> dw(kCols * kOut, 0.0f);
  timed(state, [&] {
    gemm<float>(true, false, kCols, kOut, kRows, 1.0f, o.x.data(), kCols, o.d.data(), kOut, 1.0f,
                dw.data(), kOut);
    benchmark::DoNotOptimize(dw.data());
  });
}

constexpr int64_t kSteps = 32;

// Runs body once per iteration; the counter: GFLOP/s of the T dense products' work.
template <class Body>
void timed_steps(benchmark::State& state, Body body) {
  for (auto _ : state) body();
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * kSteps * kRows * kCols * kOut * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

void BM_TimesSparseSteps(benchmark::State& state) {
  threads_configure(1);
  const std::vector<float> x = random_matrix(kSteps * kRows * kCols,
                                             static_cast<double>(state.range(0)) / 100, "x");
  const std::vector<float> w = random_matrix(kCols * kOut, 1.0, "w");
  std::vector<float> out(kSteps * kRows * kOut), bias(kOut, 0.0f);
  SparseRows<float> s;
  timed_steps(state, [&] {
    sparse_rows_build(s, x.data(), kSteps * kRows, kCols, 1.0);
    for (int64_t t = 0; t < kSteps; ++t)
      sparse_rows_times(out.data() + t * kOut, kSteps * kOut, s, w.data(), kOut,
                        SparseRowSet{t, kRows, kSteps}, bias.data());
    benchmark::DoNotOptimize(out.data());
  });
}

void BM_TTimesSparseSteps(benchmark::State& state) {
  threads_configure(1);
  const std::vector<float> x = random_matrix(kSteps * kRows * kCols,
                                             static_cast<double>(state.range(0)) / 100, "x");
  const std::vector<float> d = random_matrix(kSteps * kRows * kOut, 1.0, "d");
  std::vector<float> dw(kCols * kOut, 0.0f);
  SparseRows<float> s;
  timed_steps(state, [&] {
    sparse_rows_build(s, x.data(), kSteps * kRows, kCols, 1.0);
    for (int64_t t = 0; t < kSteps; ++t)
      sparse_rows_t_times(dw.data(), s, d.data() + t * kOut, kSteps * kOut, kOut,
                          SparseRowSet{t, kRows, kSteps});
    benchmark::DoNotOptimize(dw.data());
  });
}

// Densities in percent; the multi-hot qsa tokens of the LSTM benchmark are 8 of 68 ≈ 12 %.
#define ATTN_DENSITIES ->Arg(2)->Arg(5)->Arg(10)->Arg(12)->Arg(15)->Arg(20)->Arg(30)->Arg(50)
BENCHMARK(BM_TimesSparse) ATTN_DENSITIES;
BENCHMARK(BM_TimesDense) ATTN_DENSITIES;
BENCHMARK(BM_TTimesSparse) ATTN_DENSITIES;
BENCHMARK(BM_TTimesDense) ATTN_DENSITIES;
BENCHMARK(BM_TimesSparseSteps)->Arg(10)->Arg(12);
BENCHMARK(BM_TTimesSparseSteps)->Arg(10)->Arg(12);

}  // namespace
}  // namespace attn

int main(int argc, char** argv) { return attn::bench::google_benchmark_main(argc, argv); }
