// Turnstile: threads that take turns in a fixed ring order, one at a time.
//
// Parties 0 .. k−1 each run on their own thread; only the party whose turn it is runs, the
// others wait. A party hands the turn to the next party still in the ring (pass), or leaves
// the ring for good (leave). Used to train the runs of a group in lockstep on one core
// (experiment/lockstep_group.h): each run keeps its own thread and code path, and the runs
// reach each training step in ring order, so a batch drawn once serves all of them.
#pragma once

#include <condition_variable>
#include <mutex>
#include <vector>

namespace attn {

class Turnstile {
 public:
  explicit Turnstile(int parties);  // party 0 has the first turn
  Turnstile(const Turnstile&) = delete;
  Turnstile& operator=(const Turnstile&) = delete;

  // Blocks until it is party k's turn.
  void wait(int k);
  // Party k (whose turn it is) hands the turn to the next party in the ring and waits for its
  // own turn again (returns at once when it is the only party left).
  void pass_and_wait(int k);
  // Party k (whose turn it is) leaves the ring; the next party gets the turn.
  void leave(int k);

 private:
  int next_after(int k) const;  // the next party in the ring after k (k itself if alone)

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<char> in_ring_;
  int turn_ = 0;
};

}  // namespace attn
