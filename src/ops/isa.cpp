// isa_use_avx2() and friends: see isa.h.
#include "ops/isa.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace attn {

namespace {
std::atomic<bool> g_force_generic{false};

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
  return use && !g_force_generic.load(std::memory_order_relaxed);
}

void isa_force_generic(bool generic) { g_force_generic.store(generic, std::memory_order_relaxed); }

}  // namespace attn
