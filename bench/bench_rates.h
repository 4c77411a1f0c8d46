// Helpers shared by the plain-main training and kernel benchmarks (bench_nn_train.cpp,
// bench_attention_kernels.cpp, bench_lstm_gemms.cpp, bench_lstm_layer.cpp, bench_phi_gemms.cpp,
// bench_mlp_gemms.cpp, bench_adam_traffic.cpp, bench_register_tiles.cpp): process CPU time, the
// median, the 1-thread sgemm rate the shares of the sgemm rate are measured against, and one timed
// round of a step's products against it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <exception>
#include <functional>
#include <vector>

#include "core/blas_threads.h"
#include "core/threads.h"
#include "ops/blas.h"

namespace attn::bench {

inline double cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

inline double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The sgemm rate, GFLOP/s of CPU time: best of 3 products C = A·B of n × n matrices through
// gemm<float> (the call every model's products go through), on the threads configured.
inline double sgemm_gflops(int64_t n = 2048) {
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    const double c0 = cpu_s();
    gemm<float>(false, false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    best = std::min(best, cpu_s() - c0);
  }
  return 2.0 * double(n) * double(n) * double(n) / best * 1e-9;
}

// One product of a training step: its name, its flops and a call making it once.
struct StepProduct {
  const char* name;
  double flops;
  std::function<void()> run;
};

// One round: the 2048³ sgemm rate, then the products `reps` times in turn (a, b, c, a, b, c, …);
// prints "round=R sgemm_2048=G NAME_ms=T (G GFLOP/s) … sum_ms=T (G GFLOP/s, S % of sgemm_2048)"
// from each product's median CPU time.
inline void step_products_round(int round, int reps, const std::vector<StepProduct>& products) {
  const double sgemm = sgemm_gflops();
  std::vector<std::vector<double>> times(products.size());
  for (int rep = 0; rep < reps; ++rep)
    for (size_t k = 0; k < products.size(); ++k) {
      const double c0 = cpu_s();
      products[k].run();
      times[k].push_back(cpu_s() - c0);
    }
  std::printf("round=%d sgemm_2048=%.1f", round, sgemm);
  double total = 0, flops = 0;
  for (size_t k = 0; k < products.size(); ++k) {
    const double t = median(times[k]);
    total += t;
    flops += products[k].flops;
    std::printf(" %s_ms=%.3f (%.1f GFLOP/s)", products[k].name, 1e3 * t,
                products[k].flops / t * 1e-9);
  }
  std::printf(" sum_ms=%.3f (%.1f GFLOP/s, %.0f %% of sgemm_2048)\n", 1e3 * total,
              flops / total * 1e-9, 100 * flops / total * 1e-9 / sgemm);
}

// main's body: re-executed as the command line is (core/blas_threads.h: OpenBLAS loaded with one
// thread, as the trainer runs it, its own default being a thread per core whose waits would count
// as the products' CPU time; and with kernels the CPU runs where OpenBLAS did not know it), then
// fn(argc, argv), an exception printed and exit code 2 (user errors).
inline int run_main(int (*fn)(int, char**), int argc, char** argv) {
  blas_reexec_once(argv);
  try {
    threads_configure(1);
    return fn(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}

}  // namespace attn::bench
