// The Google Benchmark programs' main (bench_rf_features, bench_sparse_rows, bench_vmath):
// BENCHMARK_MAIN after re-executing as the command line does (core/blas_threads.h: OpenBLAS on
// one thread, with kernels the CPU runs where OpenBLAS did not know it), with the copy of
// attnlab's float kernels in use (ops/isa.h; ATTNLAB_ISA picks it) and OpenBLAS's kernels in the
// context header.
#pragma once

#include <benchmark/benchmark.h>

#include <string>

#include "core/blas_core.h"
#include "core/blas_threads.h"
#include "ops/isa.h"

namespace attn::bench {

inline int google_benchmark_main(int argc, char** argv) {
  blas_reexec_once(argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("attnlab_isa", isa_name(isa_active()));
  benchmark::AddCustomContext("openblas_core", blas_core_name() + blas_core_replaced_note());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace attn::bench
