// Broken-invariant reporting for ATTN_ASSERT.
#include "core/error.h"

#include <cstdio>
#include <cstdlib>

namespace attn {

void assert_fail(const char* expr, const char* file, int line, const std::string& msg) {
  std::fprintf(stderr, "attnlab: internal error: %s:%d: assertion '%s' failed%s%s\n", file, line,
               expr, msg.empty() ? "" : ": ", msg.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace attn
