// Huge-page-aligned blocks for HugePageAllocator (see huge_page_allocator.h).
#include "core/huge_page_allocator.h"

#include <sys/mman.h>

#include <limits>
#include <new>

namespace attn {

void* huge_page_alloc(std::size_t bytes) {
  // A size that cannot be rounded up to whole huge pages is more than any machine has: plain
  // operator new refuses it with std::bad_alloc. (libstdc++ 12's aligned operator new rounds the
  // size up modulo 2^64 and would return a block for it.)
  if (bytes > std::numeric_limits<std::size_t>::max() - kHugePageBytes)
    return ::operator new(bytes);
  const std::size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  void* p =
      ::operator new (rounded, std::align_val_t{kHugePageBytes});  // std::bad_alloc on failure
#ifdef MADV_HUGEPAGE
  madvise(p, rounded, MADV_HUGEPAGE);  // a refusal leaves ordinary pages: nothing to handle
#endif
  return p;
}

void huge_page_free(void* p) noexcept { ::operator delete (p, std::align_val_t{kHugePageBytes}); }

}  // namespace attn
