// A std::allocator for large, long-lived buffers that are read back across a training step
// (an LSTM's forward caches): blocks of at least kHugePageMin bytes are aligned to 2 MiB and
// advised to Linux's transparent huge pages before their first write (memory_advise_huge_pages
// does the same for ridge buffers of 32 MiB and more), so one TLB entry covers 2 MiB of them
// instead of 4 KiB. Smaller blocks, and every block elsewhere than Linux, come from operator new.
// Contents are never affected.
#pragma once

#include <cstddef>
#include <new>

namespace attn {

constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
// Blocks from this size on are huge-page aligned (rounded up to whole huge pages).
constexpr std::size_t kHugePageMin = kHugePageBytes;

// Allocates `bytes` (>= kHugePageMin) aligned to kHugePageBytes and advised to huge pages;
// huge_page_free releases it. On failure operator new's std::bad_alloc.
void* huge_page_alloc(std::size_t bytes);
void huge_page_free(void* p) noexcept;

template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() noexcept = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    // An n too large to count in bytes asks for the largest size, which operator new refuses.
    const std::size_t bytes =
        n > static_cast<std::size_t>(-1) / sizeof(T) ? static_cast<std::size_t>(-1) : n * sizeof(T);
    if (bytes >= kHugePageMin) return static_cast<T*>(huge_page_alloc(bytes));
    return static_cast<T*>(::operator new (bytes, std::align_val_t{alignof(T)}));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) >= kHugePageMin) {
      huge_page_free(p);
    } else {
      ::operator delete (p, std::align_val_t{alignof(T)});
    }
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace attn
