// Which vector instruction set the hot float loops run with.
//
// A few float kernels (ops/vmath.cpp, the LSTM's cell loops, the sparse-row products of
// ops/sparse_rows.cpp) are compiled three times on x86-64: for any x86-64 (SSE2), with
// [[gnu::target("avx2")]] (twice the width; ATTN_TARGET_AVX2_FMA where a kernel fuses
// multiply-adds) and with AVX-512 (ATTN_TARGET_AVX512: F, BW, DQ, VL; four times the width, 32
// vector registers). No copy contracts a·b + c into an FMA: the plain AVX2 target leaves it out,
// AVX2 + FMA and AVX-512F have FMA instructions that no target string can take out, and those files
// are compiled with -ffp-contract=off (CMakeLists.txt: GCC contracts by default wherever FMA is
// available, even in ISO C++ mode). Where a kernel wants FMA it says so, and every copy makes the
// same fused operations (ops/fused_madd.h: FMA instructions in the AVX2 copy, target avx2 + fma,
// and the AVX-512 one; an exact emulation in the generic one): ops/fma_product.cpp and, since
// 2026-12-07, the polynomials of ops/vmath.cpp. So the three x86-64 copies give the same bits for
// every input: which one runs never changes a result. (One exception: where the sparse-row
// products, or fma_product's fused multiply-adds, meet two NaNs of different sign or payload, or
// inf · 0 beside a NaN, which NaN the result carries may differ between the copies, since the
// compiler orders the operands freely and the generic copy's emulated fma makes its own; it is NaN
// in every copy; vmath's polynomials never see a NaN. Other architectures and OpenBLAS's per-CPU
// kernels can still differ.)
//
// isa_active() says which copy runs: by default the widest the CPU has, AVX-512, else AVX2 (with
// FMA, which every AVX2 CPU of Intel and AMD has), else the generic one. Measured on AMD Zen 5
// (docs/performance.md, "AVX-512 copies of the float kernels"): the element-wise kernels
// run 2.1–2.3× faster than the AVX2 copy, which makes an LSTM training step about 12 % faster; the
// attention units, whose time is in OpenBLAS, and the sparse-row products (bound by loads and
// stores) are unchanged. Not measured on Intel CPUs, where 512-bit instructions can lower the clock
// (OpenBLAS's own kernels use AVX-512 there anyway). The environment variable ATTNLAB_ISA picks one
// for A/B measurements: generic, avx2 or avx512 (unset or empty: the default). Any other value, or
// a copy this build or CPU lacks, is a user error (ATTN_CHECK), raised by the first kernel call,
// and by the command line before it runs anything. Decided once per process.
#pragma once

// A build for this CPU (-march=native, ATTNLAB_NATIVE) already compiles everything for it, FMA
// contraction included: there the generic copy is the only one (isa_active() says generic;
// ops/fma_product.cpp runs its AVX-512 or AVX2 tiles as that copy where the build targets them).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__AVX2__)
#define ATTN_HAVE_ISA_COPIES 1
#else
#define ATTN_HAVE_ISA_COPIES 0
#endif

// A kernel body every copy inlines, so that each copy compiles it for its own target.
#define ATTN_COPY_BODY [[gnu::always_inline]] inline
// The AVX-512 copy's target: the subsets every AVX-512 CPU since Skylake-SP has.
#define ATTN_TARGET_AVX512 [[gnu::target("avx512f,avx512bw,avx512dq,avx512vl")]]
// The AVX2 copy's target where it fuses multiply-adds (ops/fused_madd.h).
#define ATTN_TARGET_AVX2_FMA [[gnu::target("avx2,fma")]]

namespace attn {

// automatic: the default choice above (for isa_force).
enum class IsaCopy { automatic, generic, avx2, avx512 };

// The copy the kernels run now: generic, avx2 or avx512 (never automatic).
IsaCopy isa_active();

// What ATTNLAB_ISA = value chooses (null or empty: the default); a UserError for another name, or
// for a copy isa_cpu_has denies. isa_active() applies it to the environment once.
IsaCopy isa_choose(const char* value);

// Whether this build has the copy and the CPU can run it (generic: always; avx2, avx512: false
// off x86-64 and in native builds).
bool isa_cpu_has(IsaCopy copy);

// "automatic", "generic", "avx2", "avx512".
const char* isa_name(IsaCopy copy);

// For tests and A/B benchmarks (bench_nn_train --isa-ab): run one copy whatever the CPU and
// ATTNLAB_ISA say (only one isa_cpu_has allows), or go back to the automatic choice. Not for use
// while other threads run kernels.
void isa_force(IsaCopy copy);

}  // namespace attn
