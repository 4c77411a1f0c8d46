// Available memory and size arithmetic.
#include "core/memory.h"

#include <sys/mman.h>

#include <cstdio>
#include <cstring>
#include <limits>

#include "core/error.h"

namespace attn {

uint64_t memory_available_bytes() {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (f == nullptr) return std::numeric_limits<uint64_t>::max();
  char line[256];
  uint64_t kib = 0;
  bool found = false;
  while (std::fgets(line, sizeof line, f)) {
    unsigned long long value = 0;
    if (std::sscanf(line, "MemAvailable: %llu kB", &value) == 1) {
      kib = value;
      found = true;
      break;
    }
  }
  std::fclose(f);
  return found ? kib * 1024 : std::numeric_limits<uint64_t>::max();
}

std::string format_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int u = 0;
  while (value >= 1024.0 && u < 6) {
    value /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", value, units[u]);
  return buf;
}

void memory_check(uint64_t bytes, const std::string& what, const std::string& hint) {
  const uint64_t available = memory_available_bytes();
  const double limit = 0.9 * static_cast<double>(available);
  ATTN_CHECK(static_cast<double>(bytes) <= limit,
             what + " needs " + format_bytes(bytes) + " of memory but only " +
                 format_bytes(available) + " is available; " + hint);
}

void memory_advise_huge_pages(void* p, uint64_t bytes) {
  constexpr uint64_t kHuge = uint64_t{2} << 20;
  if (p == nullptr || bytes < 16 * kHuge) return;
#ifdef MADV_HUGEPAGE
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~uintptr_t{kHuge - 1};
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~uintptr_t{kHuge - 1};
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

bool checked_mul(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

}  // namespace attn
