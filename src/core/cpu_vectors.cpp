// cpu_has_avx512 and cpu_vectors (see cpu_vectors.h). libgcc's checks include the OS saving
// the registers (XGETBV).
#include "core/cpu_vectors.h"

namespace attn {

bool cpu_has_avx512() {
#if defined(__x86_64__)
  __builtin_cpu_init();  // in case this runs before libgcc's own initialisation
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

CpuVectors cpu_vectors() {
  if (cpu_has_avx512()) return CpuVectors::avx512;
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return CpuVectors::avx2;
  if (__builtin_cpu_supports("avx")) return CpuVectors::avx;
#endif
  return CpuVectors::none;
}

}  // namespace attn
