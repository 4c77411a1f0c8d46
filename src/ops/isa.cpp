// isa_use_avx2() and friends: see isa.h.
#include "ops/isa.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace attn {

namespace {
std::atomic<IsaCopy> g_forced{IsaCopy::automatic};

bool automatic() {
  const char* forced = std::getenv("ATTNLAB_ISA");
  if (forced && std::strcmp(forced, "generic") == 0) return false;
  return isa_cpu_has_avx2();
}
}  // namespace

bool isa_cpu_has_avx2() {
#if ATTN_HAVE_AVX2_COPY
  __builtin_cpu_init();  // in case this runs before libgcc's own initialisation
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

bool isa_use_avx2() {
  static const bool use = automatic();
  const IsaCopy forced = g_forced.load(std::memory_order_relaxed);
  return forced == IsaCopy::automatic ? use : forced == IsaCopy::avx2;
}

void isa_force(IsaCopy copy) {
  ATTN_ASSERT(copy != IsaCopy::avx2 || isa_cpu_has_avx2(),
              "isa_force(avx2) on a CPU or build without the AVX2 copy");
  g_forced.store(copy, std::memory_order_relaxed);
}

}  // namespace attn
