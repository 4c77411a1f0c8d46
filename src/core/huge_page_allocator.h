// A std::allocator for large, long-lived buffers that are read back across a training step
// (an LSTM's forward caches): blocks of at least kHugePageMin bytes are mappings of their own,
// 2 MiB aligned, rounded up to whole 2 MiB pages and advised to Linux's transparent huge pages
// before their first write, so one TLB entry covers 2 MiB of them instead of 4 KiB. A mapping of
// its own because a block from malloc's heap may be memory the process already wrote, backed by
// 4 KiB pages that the advice no longer changes (glibc serves blocks of a few MiB from the heap
// once a large block has been freed, and always in worker processes: core/memory.h's
// memory_retain_freed); freeing unmaps it. memory_advise_huge_pages does the same for ridge
// buffers of 32 MiB and more. Smaller blocks come from operator new. Where the kernel has no
// transparent huge pages the blocks are ordinary pages; contents are never affected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>

namespace attn {

constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
// Blocks from this size on are mappings of their own (rounded up to whole huge pages).
constexpr std::size_t kHugePageMin = kHugePageBytes;

// An address rounded up to the next huge-page boundary (itself when on one).
inline std::uintptr_t huge_page_align_up(std::uintptr_t a) {
  return (a + kHugePageBytes - 1) & ~std::uintptr_t{kHugePageBytes - 1};
}

// A fresh mapping of `bytes` (>= kHugePageMin) rounded up to whole huge pages, aligned to
// kHugePageBytes and advised to huge pages; std::bad_alloc when the system refuses it.
// huge_page_free(p, bytes) unmaps it (the same bytes).
void* huge_page_alloc(std::size_t bytes);
void huge_page_free(void* p, std::size_t bytes) noexcept;

template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() noexcept = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = bytes_of(n);
    if (bytes >= kHugePageMin) return static_cast<T*>(huge_page_alloc(bytes));
    return static_cast<T*>(::operator new (bytes, std::align_val_t{alignof(T)}));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    const std::size_t bytes = bytes_of(n);
    if (bytes >= kHugePageMin) {
      huge_page_free(p, bytes);
    } else {
      ::operator delete (p, std::align_val_t{alignof(T)});
    }
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }

 private:
  // n elements in bytes; an n too large to count asks for the largest size, which huge_page_alloc
  // refuses.
  static std::size_t bytes_of(std::size_t n) {
    return n > static_cast<std::size_t>(-1) / sizeof(T) ? static_cast<std::size_t>(-1)
                                                        : n * sizeof(T);
  }
};

}  // namespace attn
