// Cancellation points (interrupt.h).
#include "core/interrupt.h"

#include <atomic>

namespace attn {
namespace {
std::atomic<InterruptCheck> g_check{nullptr};
}  // namespace

InterruptCheck interrupt_set_check(InterruptCheck check) { return g_check.exchange(check); }

void interrupt_poll() {
  const InterruptCheck check = g_check.load(std::memory_order_relaxed);
  if (check != nullptr && check()) throw Interrupted();
}

}  // namespace attn
