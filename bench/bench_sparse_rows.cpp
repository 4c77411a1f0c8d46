// Sparse-row products (ops/sparse_rows.h) against the dense sgemm they replace, across input
// densities: where the crossovers lie that sparse_rows_max_density stands for (15 %; 25 % for rows
// of at most 64 columns).
//
// Workloads (/lstm_step): the LSTM benchmark's input product for one time step (bench_nn_train
// config c): x (256 rows × 68 columns, float), w (68 × 512); (/phi_n16) φ's first layer at
// N = 16 (configs f, i): x (4096 × 36), w (36 × 128). "times" is out = b + x · w (the forward,
// with a zero bias row as the LSTM passes its bias),
// "t_times" is dw += xᵀ · d with d (rows × out) (the weight gradient). Non-zeros are placed at
// random with the given density (percent, the benchmark's argument); the dense side is one
// OpenBLAS sgemm on the same x (zeros included), 1 thread. The sparse side includes building
// the compressed rows (sparse_rows_build), as the LSTM does on every call.
// Counter: GFLOP/s of the dense product's work (2·256·68·512), so both rows are comparable.
// The *Steps benchmarks make the LSTM's own calls (ops/lstm.cpp): x holds all B·T rows (B = 256
// sequences of T = 32 steps, row b·T + t) and one iteration is the T calls of a forward or a
// backward, call t on the rows t, t + T, …; the forward's outputs are step t's block of the
// time-major (T, B, 512) gates (one contiguous block since 2026-12-07), the backward's inputs the
// one (B, 512) block of gate gradients the layer rewrites every step.
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

// A product's shape: x (rows × cols), w (cols × out), d (rows × out).
struct Shape {
  int64_t rows, cols, out;
};
// The LSTM's input product for one time step (config c), and φ's first layer at N = 16 over a
// whole batch (configs f and i, sanford2023 E1 at N = 16: 7 of 36 columns non-zero, 19 %).
constexpr Shape kLstmStep{kRows, kCols, kOut}, kPhiN16{4096, 36, 128};

// The benchmark's operands at state.range(0) percent density: x, the dense w of the forward and
// the dense d of the weight gradient.
struct Operands {
  Operands(const benchmark::State& state, const Shape& sh)
      : x(random_matrix(sh.rows * sh.cols, static_cast<double>(state.range(0)) / 100, "x")),
        w(random_matrix(sh.cols * sh.out, 1.0, "w")),
        d(random_matrix(sh.rows * sh.out, 1.0, "d")) {
    threads_configure(1);
  }
  std::vector<float> x, w, d;
};

// Runs body once per iteration; the counter: GFLOP/s of the dense product's work.
template <class Body>
void timed(benchmark::State& state, const Shape& sh, Body body) {
  for (auto _ : state) body();
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * sh.rows * sh.cols * sh.out * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

void BM_TimesSparse(benchmark::State& state, Shape sh) {
  const Operands o(state, sh);
  std::vector<float> out(sh.rows * sh.out), bias(sh.out, 0.0f);
  SparseRows<float> s;
  timed(state, sh, [&] {
    sparse_rows_build(s, o.x.data(), sh.rows, sh.cols, 1.0);
    sparse_rows_times(out.data(), sh.out, s, o.w.data(), sh.out, SparseRowSet{},
                      bias.data());  // overwrites
    benchmark::DoNotOptimize(out.data());
  });
}

void BM_TimesDense(benchmark::State& state, Shape sh) {
  const Operands o(state, sh);
  std::vector<float> out(sh.rows * sh.out);
  timed(state, sh, [&] {
    gemm<float>(false, false, sh.rows, sh.out, sh.cols, 1.0f, o.x.data(), sh.cols, o.w.data(),
                sh.out, 0.0f, out.data(), sh.out);
    benchmark::DoNotOptimize(out.data());
  });
}

void BM_TTimesSparse(benchmark::State& state, Shape sh) {
  const Operands o(state, sh);
  std::vector<float> dw(sh.cols * sh.out, 0.0f);
  SparseRows<float> s;
  timed(state, sh, [&] {
    sparse_rows_build(s, o.x.data(), sh.rows, sh.cols, 1.0);
    sparse_rows_t_times(dw.data(), s, o.d.data(), sh.out, sh.out);
    benchmark::DoNotOptimize(dw.data());
  });
}

void BM_TTimesDense(benchmark::State& state, Shape sh) {
  const Operands o(state, sh);
  std::vector<float> dw(sh.cols * sh.out, 0.0f);
  timed(state, sh, [&] {
    gemm<float>(true, false, sh.cols, sh.out, sh.rows, 1.0f, o.x.data(), sh.cols, o.d.data(),
                sh.out, 1.0f, dw.data(), sh.out);
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
      sparse_rows_times(out.data() + t * kRows * kOut, kOut, s, w.data(), kOut,
                        SparseRowSet{t, kRows, kSteps}, bias.data());
    benchmark::DoNotOptimize(out.data());
  });
}

void BM_TTimesSparseSteps(benchmark::State& state) {
  threads_configure(1);
  const std::vector<float> x = random_matrix(kSteps * kRows * kCols,
                                             static_cast<double>(state.range(0)) / 100, "x");
  const std::vector<float> d = random_matrix(kRows * kOut, 1.0, "d");  // one step's block
  std::vector<float> dw(kCols * kOut, 0.0f);
  SparseRows<float> s;
  timed_steps(state, [&] {
    sparse_rows_build(s, x.data(), kSteps * kRows, kCols, 1.0);
    for (int64_t t = 0; t < kSteps; ++t)
      sparse_rows_t_times(dw.data(), s, d.data(), kOut, kOut, SparseRowSet{t, kRows, kSteps});
    benchmark::DoNotOptimize(dw.data());
  });
}

// Densities in percent; the multi-hot qsa tokens of the LSTM benchmark are 8 of 68 ≈ 12 %, of
// φ at N = 16 7 of 36 ≈ 19 %.
#define ATTN_DENSITIES \
  ->Arg(2)->Arg(5)->Arg(10)->Arg(12)->Arg(15)->Arg(20)->Arg(25)->Arg(30)->Arg(50)
BENCHMARK_CAPTURE(BM_TimesSparse, lstm_step, kLstmStep) ATTN_DENSITIES;
BENCHMARK_CAPTURE(BM_TimesDense, lstm_step, kLstmStep) ATTN_DENSITIES;
BENCHMARK_CAPTURE(BM_TTimesSparse, lstm_step, kLstmStep) ATTN_DENSITIES;
BENCHMARK_CAPTURE(BM_TTimesDense, lstm_step, kLstmStep) ATTN_DENSITIES;
BENCHMARK_CAPTURE(BM_TimesSparse, phi_n16, kPhiN16) ATTN_DENSITIES;
BENCHMARK_CAPTURE(BM_TimesDense, phi_n16, kPhiN16) ATTN_DENSITIES;
BENCHMARK_CAPTURE(BM_TTimesSparse, phi_n16, kPhiN16) ATTN_DENSITIES;
BENCHMARK_CAPTURE(BM_TTimesDense, phi_n16, kPhiN16) ATTN_DENSITIES;
BENCHMARK(BM_TimesSparseSteps)->Arg(10)->Arg(12);
BENCHMARK(BM_TTimesSparseSteps)->Arg(10)->Arg(12);

}  // namespace
}  // namespace attn

int main(int argc, char** argv) { return attn::bench::google_benchmark_main(argc, argv); }
