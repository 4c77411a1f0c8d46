// Helpers shared by the plain-main training and kernel benchmarks (bench_nn_train.cpp,
// bench_attention_kernels.cpp): process CPU time, the median, and the 1-thread sgemm rate the
// shares of the sgemm rate are measured against.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <exception>
#include <vector>

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

// main's body: fn(argc, argv), an exception printed and exit code 2 (user errors).
inline int run_main(int (*fn)(int, char**), int argc, char** argv) {
  try {
    return fn(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}

}  // namespace attn::bench
