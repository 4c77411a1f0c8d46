// Lockstep groups (see lockstep_group.h).
#include "experiment/lockstep_group.h"

#include <exception>
#include <optional>
#include <thread>

#include "core/error.h"
#include "tasks/shared_batches.h"

namespace attn {

LockstepStats lockstep_group_run(const std::vector<RunPoint>& points,
                                 const std::function<void(size_t, RunOutcome&&)>& done) {
  const int parties = static_cast<int>(points.size());
  if (parties == 0) return {};
  SharedFreshBatches share(parties);
  // Outcomes are delivered in point order by whichever run holds the turn, so no lock is
  // needed: only that run's thread touches them.
  std::vector<std::optional<RunOutcome>> ready(points.size());
  size_t delivered = 0;
  std::exception_ptr failure;  // of done(): rethrown once every thread has ended
  auto run = [&](int party) {
    share.turnstile().wait(party);
    RunOutcome outcome =
        run_point_execute(points[static_cast<size_t>(party)], RunShare{&share, party});
    try {
      ready[static_cast<size_t>(party)] = std::move(outcome);
      while (delivered < ready.size() && ready[delivered]) {
        done(delivered, std::move(*ready[delivered]));
        ready[delivered].reset();
        ++delivered;
      }
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
    share.turnstile().leave(party);
  };
  std::vector<std::thread> threads;
  threads.reserve(points.size());
  for (int k = 0; k < parties; ++k) threads.emplace_back(run, k);
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
  ATTN_ASSERT(delivered == points.size(), "a lockstep group delivered fewer outcomes than runs");
  return {share.batches_drawn(), share.batches_served()};
}

}  // namespace attn
