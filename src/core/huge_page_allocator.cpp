// Huge-page-aligned blocks for HugePageAllocator (see huge_page_allocator.h).
#include "core/huge_page_allocator.h"

#include <sys/mman.h>

#include <cstdlib>

namespace attn {

void* huge_page_alloc(std::size_t bytes) {
  const std::size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  void* p = std::aligned_alloc(kHugePageBytes, rounded);
  if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  madvise(p, rounded, MADV_HUGEPAGE);  // a refusal leaves ordinary pages: nothing to handle
#endif
  return p;
}

void huge_page_free(void* p) noexcept { std::free(p); }

}  // namespace attn
