// OpenBLAS's kernels on a CPU it does not know (see blas_core.h).
#include "core/blas_core.h"

#include <strings.h>

#include <cstdlib>
#include <utility>

extern "C" {
// OpenBLAS's name for the kernels it loaded (declared here so that core/ needs no cblas.h; weak,
// so a library without it gives "unknown").
char* openblas_get_corename(void) __attribute__((weak));
}

namespace attn {
namespace {

// OpenBLAS's x86-64 cores that use no AVX: what its DYNAMIC_ARCH table falls back to on a
// model it does not know (Prescott for Intel), and the older CPUs' own.
constexpr const char* kCoresWithoutAvx[] = {
    "Katmai", "Coppermine", "Northwood", "Prescott",     "Banias",    "Atom",
    "Core2",  "Penryn",     "Dunnington", "Nehalem",     "Athlon",    "Opteron",
    "Opteron_SSE3", "Barcelona", "Nano", "Bobcat"};

}  // namespace

std::string blas_core_upgrade(const char* chosen, CpuVectors cpu) {
  if (chosen == nullptr || cpu == CpuVectors::none) return "";
  bool without_avx = false;
  for (const char* core : kCoresWithoutAvx) without_avx |= strcasecmp(chosen, core) == 0;
  if (!without_avx) return "";
  switch (cpu) {
    case CpuVectors::avx512:
      return "SkylakeX";
    case CpuVectors::avx2:
      return "Haswell";
    case CpuVectors::avx:
      return "Sandybridge";
    case CpuVectors::none:
      break;
  }
  return "";
}

std::string blas_core_wanted() {
  const char* user = std::getenv("OPENBLAS_CORETYPE");
  if (user != nullptr && user[0] != '\0') return "";
  return blas_core_upgrade(blas_core_name(), cpu_vectors());
}

namespace {
std::string& replaced() {
  static std::string fallback;
  return fallback;
}
}  // namespace

const std::string& blas_core_replaced() { return replaced(); }
void blas_core_replaced_set(std::string fallback) { replaced() = std::move(fallback); }
std::string blas_core_replaced_note() {
  if (replaced().empty()) return "";
  return " (in place of OpenBLAS's fallback " + replaced() + ")";
}

const char* blas_core_name() {
  const char* name = openblas_get_corename != nullptr ? openblas_get_corename() : nullptr;
  return name != nullptr ? name : "unknown";
}

}  // namespace attn
