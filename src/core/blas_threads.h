// OpenBLAS's own worker threads, kept out of the way of fork() and of address-space limits.
//
// OpenBLAS starts (cores − 1) worker threads when the library loads, before main(), and each
// maps a buffer of about 128 MiB as it starts. Under an address-space limit (ulimit -v,
// RLIMIT_AS, SGE's h_vmem) too small for them, a worker retries that mapping forever; its
// fork handler and its exit handler then join it, so fork() and exit() hang (measured: a
// 2-thread OpenBLAS hangs anywhere up to about 290 MiB, a 1-thread one up to 160 MiB; by that
// count a 64-core node would need about 8 GiB, not measured). attnlab computes with 1 BLAS
// thread by default (core/threads.h), so it keeps no worker threads at all:
// - the command line re-executes itself once with OPENBLAS_NUM_THREADS=1 when that is not
//   already the setting, so no worker thread ever starts, whatever the core count; the
//   variable is restored in the new image, so programs it starts see the user's setting (the
//   same re-execution loads kernels the CPU runs where OpenBLAS fell back to ones without AVX:
//   core/blas_core.h);
// - blas_threads_release() ends the worker threads of a library loaded as it was (Python),
//   and those a section that handed OpenBLAS more threads (BlasThreadsScope) started; every
//   fork() attnlab makes (process_fork, core/process.h) calls it first, so fork() never waits
//   on an OpenBLAS thread.
#pragma once

#include <cstdint>

namespace attn {

// The command line's first step (and the benches'): when OPENBLAS_NUM_THREADS is not "1", or
// blas_core_wanted() names kernels to load instead of OpenBLAS's fallback (core/blas_core.h),
// re-executes this program (the file /proc/self/exe names, the same argv) with
// OPENBLAS_NUM_THREADS=1 and that OPENBLAS_CORETYPE, and returns only if that fails (nothing
// changed then). In the re-executed image it restores both variables to the user's values (or
// unsets them) and returns. ATTNLAB_BLAS_REEXEC carries the user's OPENBLAS_NUM_THREADS and
// prevents a second re-execution; ATTNLAB_BLAS_REEXEC_CORE carries OPENBLAS_CORETYPE and the
// fallback's name (blas_core_replaced() in the new image) when the core was replaced.
// With core_only (the test programs, which exercise OpenBLAS's threads themselves, and
// bench_rf_pipeline, which sets its own count) OPENBLAS_NUM_THREADS is left as it is and only
// the core can cause the re-execution, so they compute with the command line's kernels.
enum class BlasReexec { threads_and_core, core_only };
void blas_reexec_once(char** argv, BlasReexec what = BlasReexec::threads_and_core);

// Ends OpenBLAS's worker threads and holds it at 1 thread; the next section that asks for
// more threads (BlasThreadsScope) starts them again. Never call it while another thread is
// inside a BLAS call. (Once they are down, openblas_set_num_threads(1) would start them
// again: call this instead.)
void blas_threads_release();

// The threads OpenBLAS was set to use (its own count, the caller's thread included).
int blas_threads_configured();

// What each OpenBLAS worker thread beyond the first adds to the address space a process needs
// (its 128 MiB buffer, its stack and slack; core/memory.h's floor counts them).
inline constexpr uint64_t kAddressSpacePerBlasThread = uint64_t{160} << 20;

}  // namespace attn
