// Random-feature maps: the blocked-GEMM fast path against the scalar reference.
//
// Workload (spec §1.7): n = 512 rf_target samples, N = 16 keys, d = 16, M = 1000 RFA heads
// (e = 17, P = 17,000 features), and an RFMLP of matched width M' = M·e on D = 17·16 + 1 inputs.
// Counters: samples/s, and GFLOP/s counted for the fast path's useful work in both rows, so
// the reference's GFLOP/s is directly comparable:
//   RFA   2·n·M·e·(e + 2N)   (U = X̃_0 W, S = U_mat X̃ᵀ, Φ = A X̃)
//   RFMLP 2·n·M'·D
// Arguments: /block (0 = automatic)/threads.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "google_bench_main.h"
#include "core/threads.h"
#include "models/rfa_features.h"
#include "models/rfmlp_features.h"
#include "tasks/task.h"

namespace attn {
namespace {

constexpr int64_t kSamples = 512, kKeys = 16, kDim = 16, kHeads = 1000;

const std::vector<double>& bench_inputs() {
  static const std::vector<double> X = [] {
    Params p = task_default_params("rf_target");
    p.set_text("N", std::to_string(kKeys));
    p.set_text("d", std::to_string(kDim));
    return task_generate(*task_make("rf_target", p), 1, 0, kSamples).X;
  }();
  return X;
}

void bench_counters(benchmark::State& state, double flops_per_iteration) {
  state.counters["samples/s"] = benchmark::Counter(static_cast<double>(kSamples),
                                                   benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFLOP/s"] = benchmark::Counter(flops_per_iteration * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

RfaConfig bench_rfa_config(const std::string& activation, int64_t block) {
  RfaConfig c;
  c.heads = kHeads;
  c.activation = attn::choice_parse(activation, attn::kRfaActivations, "model.activation");
  c.block = block;
  return c;
}

double rfa_flops() {
  const double e = kDim + 1;
  return 2.0 * kSamples * kHeads * e * (e + 2.0 * kKeys);
}

void BM_RfaFast(benchmark::State& state, const std::string& activation) {
  threads_configure(static_cast<int>(state.range(1)));
  const RfaFeatures f(bench_rfa_config(activation, state.range(0)), kKeys + 1, kDim, 7);
  const std::vector<double>& X = bench_inputs();
  std::vector<double> Phi(kSamples * f.dim());
  for (auto _ : state) {
    f.features(X.data(), kSamples, Phi.data());
    benchmark::DoNotOptimize(Phi.data());
    benchmark::ClobberMemory();
  }
  state.counters["block"] = static_cast<double>(f.block_size());
  bench_counters(state, rfa_flops());
  threads_configure(1);
}

void BM_RfaReference(benchmark::State& state, const std::string& activation) {
  const RfaConfig c = bench_rfa_config(activation, 0);
  const RfaFeatures f(c, kKeys + 1, kDim, 7);
  const std::vector<double>& X = bench_inputs();
  std::vector<double> Phi(kSamples * f.dim());
  for (auto _ : state) {
    rfa_features_reference(c, f.weights(), kKeys + 1, kDim, X.data(), kSamples, Phi.data());
    benchmark::DoNotOptimize(Phi.data());
    benchmark::ClobberMemory();
  }
  bench_counters(state, rfa_flops());
}

RfmlpConfig bench_rfmlp_config(int64_t block) {
  RfmlpConfig c;
  c.width = rfmlp_matched_width(kHeads, kDim, true);
  c.block = block;
  return c;
}

double rfmlp_flops() {
  const double D = (kKeys + 1) * kDim + 1;
  return 2.0 * kSamples * rfmlp_matched_width(kHeads, kDim, true) * D;
}

void BM_RfmlpFast(benchmark::State& state) {
  threads_configure(static_cast<int>(state.range(1)));
  const RfmlpFeatures f(bench_rfmlp_config(state.range(0)), kKeys + 1, kDim, 7);
  const std::vector<double>& X = bench_inputs();
  std::vector<double> Phi(kSamples * f.dim());
  for (auto _ : state) {
    f.features(X.data(), kSamples, Phi.data());
    benchmark::DoNotOptimize(Phi.data());
    benchmark::ClobberMemory();
  }
  state.counters["block"] = static_cast<double>(f.block_size());
  bench_counters(state, rfmlp_flops());
  threads_configure(1);
}

void BM_RfmlpReference(benchmark::State& state) {
  const RfmlpConfig c = bench_rfmlp_config(0);
  const RfmlpFeatures f(c, kKeys + 1, kDim, 7);
  const std::vector<double>& X = bench_inputs();
  std::vector<double> Phi(kSamples * f.dim());
  for (auto _ : state) {
    rfmlp_features_reference(c, f.weights(), kKeys + 1, kDim, X.data(), kSamples, Phi.data());
    benchmark::DoNotOptimize(Phi.data());
    benchmark::ClobberMemory();
  }
  bench_counters(state, rfmlp_flops());
}

// {block, threads}: the automatic block and a block sweep on one thread (CPU time, robust
// to a loaded machine), then two threads (wall time).
void bench_one_thread(benchmark::internal::Benchmark* b) {
  b->ArgNames({"block", "threads"});
  for (int64_t block : {0, 8, 16, 32, 64, 128, 256}) b->Args({block, 1});
  b->Unit(benchmark::kMillisecond);
}
void bench_two_threads(benchmark::internal::Benchmark* b) {
  b->ArgNames({"block", "threads"})->Args({0, 2});
  b->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
}

BENCHMARK_CAPTURE(BM_RfaFast, relu, std::string("relu"))->Apply(bench_one_thread);
BENCHMARK_CAPTURE(BM_RfaFast, relu, std::string("relu"))->Apply(bench_two_threads);
BENCHMARK_CAPTURE(BM_RfaFast, exp, std::string("exp"))->ArgNames({"block", "threads"})->Args({0, 1})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RfaFast, softmax, std::string("softmax"))->ArgNames({"block", "threads"})
    ->Args({0, 1})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RfaReference, relu, std::string("relu"))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_RfmlpFast)->Apply(bench_one_thread);
BENCHMARK(BM_RfmlpFast)->Apply(bench_two_threads);
BENCHMARK(BM_RfmlpReference)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace attn

int main(int argc, char** argv) { return attn::bench::google_benchmark_main(argc, argv); }
