// Subnormals flushed to zero on x86 (see float_env.h): MXCSR's FTZ (bit 15) and DAZ (bit 6).
#include "core/float_env.h"

#include <cstdlib>
#include <string>

#include "core/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define ATTN_HAVE_MXCSR 1
#else
#define ATTN_HAVE_MXCSR 0
#endif

namespace attn {
namespace {

constexpr uint32_t kFlushToZero = 1u << 15, kDenormalsAreZero = 1u << 6;

bool read_setting() {
  const char* v = std::getenv("ATTNLAB_SUBNORMALS");
  const std::string s = v ? v : "";
  if (s.empty() || s == "flush") return true;
  if (s == "keep") return false;
  throw UserError("ATTNLAB_SUBNORMALS is \"" + s +
                  "\"; use \"flush\" (the default: subnormal floats become 0, see "
                  "docs/performance.md#subnormals) or \"keep\" (IEEE subnormals, slower)");
}

}  // namespace

uint32_t float_env_get() {
#if ATTN_HAVE_MXCSR
  return _mm_getcsr();
#else
  return 0;
#endif
}

void float_env_set(uint32_t bits) {
#if ATTN_HAVE_MXCSR
  _mm_setcsr(bits);
#else
  (void)bits;
#endif
}

bool subnormals_flushed() {
  static const bool flushed = read_setting();
  return flushed;
}

const char* subnormals_text() { return subnormals_flushed() ? "flushed" : "kept"; }

SubnormalsFlushed::SubnormalsFlushed() : saved_(float_env_get()) {
  if (ATTN_HAVE_MXCSR && subnormals_flushed())
    float_env_set(saved_ | kFlushToZero | kDenormalsAreZero);
}

SubnormalsFlushed::~SubnormalsFlushed() { float_env_set(saved_); }

}  // namespace attn
