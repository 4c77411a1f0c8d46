// Which vector instruction set the hot float loops run with.
//
// A few float kernels (ops/vmath.cpp, the LSTM cell-backward loop, the sparse-row products of
// ops/sparse_rows.cpp) are compiled twice on x86-64: for any x86-64 (SSE2) and with
// [[gnu::target("avx2")]] (twice the width). FMA is deliberately left out of the AVX2 copy, and
// those files are compiled with -ffp-contract=off (CMakeLists.txt: GCC contracts a·b + c into an
// FMA by default wherever FMA is enabled, even in ISO C++ mode), so the two x86-64 copies give the
// same bits for every input: which one runs never changes a result. (One exception: where the
// sparse-row products add two NaNs of different sign, the result's sign bit may differ between the
// copies, since GCC orders the operands of + freely; it is NaN in both. Other architectures and
// OpenBLAS's per-CPU kernels can still differ.) isa_use_avx2() says which copy runs: the AVX2 one
// when the CPU has AVX2, unless the environment sets ATTNLAB_ISA=generic (for A/B measurements).
// Decided once per process.
#pragma once

// A build for this CPU (-march=native, ATTNLAB_NATIVE) already compiles everything for it, FMA
// contraction included: there the generic copy is the only one.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__AVX2__)
#define ATTN_HAVE_AVX2_COPY 1
#else
#define ATTN_HAVE_AVX2_COPY 0
#endif

// A kernel body both copies inline, so that each copy compiles it for its own target.
#define ATTN_COPY_BODY [[gnu::always_inline]] inline

namespace attn {

bool isa_use_avx2();

// Whether this build has an AVX2 copy and the CPU can run it (false off x86-64 and in native builds).
bool isa_cpu_has_avx2();

// For tests: run one copy whatever the CPU and ATTNLAB_ISA say (avx2 only where isa_cpu_has_avx2()),
// or go back to the automatic choice. Not for use while other threads run kernels.
enum class IsaCopy { automatic, generic, avx2 };
void isa_force(IsaCopy copy);

}  // namespace attn
