// The test programs' main: GoogleTest's, after re-executing with the OpenBLAS kernels the
// command line runs where OpenBLAS fell back to ones without AVX (core/blas_core.h), so that
// tests comparing an in-process result with the command line's bit for bit compare like with
// like. OPENBLAS_NUM_THREADS is left as it is (tests/test_blas_threads.cpp exercises it).
#include <gtest/gtest.h>

#include "core/blas_threads.h"

int main(int argc, char** argv) {
  attn::blas_reexec_once(argv, attn::BlasReexec::core_only);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
