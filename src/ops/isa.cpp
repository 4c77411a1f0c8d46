// isa_active() and friends: see isa.h.
#include "ops/isa.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/cpu_vectors.h"
#include "core/error.h"

namespace attn {

namespace {
std::atomic<IsaCopy> g_forced{IsaCopy::automatic};

constexpr IsaCopy kCopies[] = {IsaCopy::generic, IsaCopy::avx2, IsaCopy::avx512};

// The copy used when ATTNLAB_ISA is unset: the widest the CPU can run (see isa.h).
IsaCopy default_copy() {
  if (isa_cpu_has(IsaCopy::avx512)) return IsaCopy::avx512;
  return isa_cpu_has(IsaCopy::avx2) ? IsaCopy::avx2 : IsaCopy::generic;
}

}  // namespace

IsaCopy isa_choose(const char* text) {
  if (text == nullptr || *text == '\0') return default_copy();
  for (IsaCopy copy : kCopies) {
    if (std::strcmp(text, isa_name(copy)) != 0) continue;
    ATTN_CHECK(isa_cpu_has(copy), std::string("ATTNLAB_ISA=") + text + ": this " +
                                      (ATTN_HAVE_ISA_COPIES ? "CPU" : "build") +
                                      " cannot run the " + text +
                                      " copy of the float kernels; use " +
                                      (isa_cpu_has(IsaCopy::avx2) ? "generic or avx2" : "generic") +
                                      ", or unset it for the default");
    return copy;
  }
  throw UserError(std::string("ATTNLAB_ISA='") + text +
                  "' must be generic, avx2 or avx512 (or unset for the default)");
}

bool isa_cpu_has(IsaCopy copy) {
  switch (copy) {
    case IsaCopy::automatic:
    case IsaCopy::generic:
      return true;
#if ATTN_HAVE_ISA_COPIES
    case IsaCopy::avx2:
      __builtin_cpu_init();  // in case this runs before libgcc's own initialisation
      // FMA too: the AVX2 copies of ops/fma_product.cpp and ops/vmath.cpp multiply and add in one
      // (every AVX2 CPU of Intel and AMD has it).
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case IsaCopy::avx512:
      return cpu_has_avx512();
#else
    case IsaCopy::avx2:
    case IsaCopy::avx512:
      return false;
#endif
  }
  return false;
}

const char* isa_name(IsaCopy copy) {
  switch (copy) {
    case IsaCopy::automatic: return "automatic";
    case IsaCopy::generic: return "generic";
    case IsaCopy::avx2: return "avx2";
    case IsaCopy::avx512: return "avx512";
  }
  return "?";
}

IsaCopy isa_active() {
  // A throw leaves it undecided: the next call throws again.
  static const IsaCopy chosen = isa_choose(std::getenv("ATTNLAB_ISA"));
  const IsaCopy forced = g_forced.load(std::memory_order_relaxed);
  return forced == IsaCopy::automatic ? chosen : forced;
}

void isa_force(IsaCopy copy) {
  ATTN_ASSERT(isa_cpu_has(copy), "isa_force on a CPU or build without that copy");
  g_forced.store(copy, std::memory_order_relaxed);
}

}  // namespace attn
