// Turnstile (see turnstile.h).
#include "core/turnstile.h"

#include "core/error.h"

namespace attn {

Turnstile::Turnstile(int parties) : in_ring_(static_cast<size_t>(parties), 1) {
  ATTN_ASSERT(parties >= 1, "a turnstile needs a party");
}

int Turnstile::next_after(int k) const {
  const int n = static_cast<int>(in_ring_.size());
  for (int step = 1; step <= n; ++step) {
    const int j = (k + step) % n;
    if (in_ring_[j]) return j;
  }
  return k;
}

void Turnstile::wait(int k) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return turn_ == k; });
}

void Turnstile::pass_and_wait(int k) {
  std::unique_lock<std::mutex> lock(mutex_);
  ATTN_ASSERT(turn_ == k && in_ring_[k], "a party passed a turn it did not have");
  turn_ = next_after(k);
  changed_.notify_all();
  changed_.wait(lock, [&] { return turn_ == k; });
}

void Turnstile::leave(int k) {
  std::lock_guard<std::mutex> lock(mutex_);
  ATTN_ASSERT(turn_ == k && in_ring_[k], "a party left on a turn it did not have");
  in_ring_[k] = 0;
  turn_ = next_after(k);
  changed_.notify_all();
}

}  // namespace attn
