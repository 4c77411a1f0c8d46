// OpenBLAS's kernels on a CPU its table of models does not know: which to load instead.
//
// A DYNAMIC_ARCH OpenBLAS (Debian's) picks its kernels once, as it loads, by the CPU's model.
// On a model newer than the library it falls back to its oldest x86-64 kernels: Debian 12's
// OpenBLAS 0.3.21 on an Intel Xeon of family 6, model 207 (Emerald Rapids) loads "Prescott"
// (SSE3), 1-thread sgemm 32 GFLOP/s, where its AVX-512 kernels ("SkylakeX") run 150 on the
// same machine (docs/performance.md#blas-core-fallback). OPENBLAS_CORETYPE picks the kernels
// instead, but only before the library loads, so the command line applies it by re-executing
// itself (core/blas_threads.h, blas_reexec_once). It never overrides a user's
// OPENBLAS_CORETYPE, and it leaves every core OpenBLAS recognised alone: only a fallback
// without AVX on a CPU that has AVX or wider is replaced.
#pragma once

#include <string>

#include "core/cpu_vectors.h"

namespace attn {

// The OPENBLAS_CORETYPE to load OpenBLAS with when it chose the core named `chosen` (as
// openblas_get_corename() spells it; case ignored) on a CPU with `cpu`: "SkylakeX",
// "Haswell" or "Sandybridge" when `chosen` is one of its cores without AVX (Prescott, Core2,
// Nehalem, Atom, Opteron, Barcelona and the like) and `cpu` is wider; "" otherwise (a null
// or unknown name included).
std::string blas_core_upgrade(const char* chosen, CpuVectors cpu);

// For this process: blas_core_upgrade(blas_core_name(), cpu_vectors()) when
// OPENBLAS_CORETYPE is unset or empty, "" when the user set it.
std::string blas_core_wanted();

// The core OpenBLAS loaded, as it names it ("unknown" when the library does not say).
const char* blas_core_name();

// The fallback this process replaced (what OpenBLAS chose itself before the re-execution),
// or "" when OpenBLAS's own choice stands. Set by blas_reexec_once in the re-executed image.
const std::string& blas_core_replaced();
void blas_core_replaced_set(std::string fallback);
// " (in place of OpenBLAS's fallback <name>)" when the core was replaced, else "": the words
// `attnlab --version` and the benches' context print (python/attnlab parses the version line).
std::string blas_core_replaced_note();

}  // namespace attn
