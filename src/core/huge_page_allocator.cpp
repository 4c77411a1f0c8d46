// Huge-page blocks for HugePageAllocator (see huge_page_allocator.h): anonymous mappings, 2 MiB
// aligned by mapping 2 MiB more and unmapping the ends.
#include "core/huge_page_allocator.h"

#include <sys/mman.h>

#include <cstdint>
#include <limits>

namespace attn {

namespace {

// bytes rounded up to whole huge pages, or 0 when that does not fit in a size_t with one huge
// page more (the alignment slack).
std::size_t rounded_to_huge_pages(std::size_t bytes) {
  if (bytes > std::numeric_limits<std::size_t>::max() - 2 * kHugePageBytes) return 0;
  return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
}

}  // namespace

void* huge_page_alloc(std::size_t bytes) {
  const std::size_t size = rounded_to_huge_pages(bytes);
  // An allocator reports failure by std::bad_alloc (the Allocator requirements; std::vector
  // relies on it): the one place besides core/error.h's tiers that throws.
  if (size == 0) throw std::bad_alloc();
  const std::size_t span = size + kHugePageBytes;
  void* m = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  const auto lo = reinterpret_cast<uintptr_t>(m);
  const uintptr_t begin = huge_page_align_up(lo);
  if (begin > lo) munmap(m, begin - lo);
  const uintptr_t tail = lo + span - (begin + size);
  if (tail > 0) munmap(reinterpret_cast<void*>(begin + size), tail);
  void* p = reinterpret_cast<void*>(begin);
#ifdef MADV_HUGEPAGE
  madvise(p, size, MADV_HUGEPAGE);  // a refusal leaves ordinary pages: nothing to handle
#endif
  return p;
}

void huge_page_free(void* p, std::size_t bytes) noexcept {
  if (p != nullptr) munmap(p, rounded_to_huge_pages(bytes));
}

}  // namespace attn
