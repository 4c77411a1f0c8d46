// parallel_ordered (core/threads.h): the reduces run in item order on the worker that did the
// item's work, whatever the worker count, and a failing item is rethrown without leaving
// workers waiting for its turn.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/threads.h"

namespace attn {
namespace {

TEST(ParallelOrdered, ReducesInItemOrderOnTheWorkerOfTheWork) {
  const int64_t items = 13;
  for (int workers : {1, 2, 3, 5}) {
    SCOPED_TRACE(workers);
    std::vector<int> worked_on(items, -1), reduced_on(items, -1);
    std::vector<int64_t> order;
    std::mutex mutex;
    parallel_ordered(
        items, workers,
        [&](int w, int64_t c) {
          // Later items finish first, so reduces must wait for their turn.
          std::this_thread::sleep_for(std::chrono::microseconds(200 * ((items - c) % 4)));
          std::lock_guard<std::mutex> lock(mutex);
          worked_on[c] = w;
        },
        [&](int w, int64_t c) {
          order.push_back(c);
          reduced_on[c] = w;
        });
    std::vector<int64_t> expected(items);
    for (int64_t c = 0; c < items; ++c) expected[c] = c;
    EXPECT_EQ(order, expected);
    EXPECT_EQ(reduced_on, worked_on);
    for (int w : worked_on) EXPECT_TRUE(w >= 0 && w < workers) << w;
  }
}

TEST(ParallelOrdered, AFailingItemIsRethrownAndReleasesTheWaitingWorkers) {
  for (int workers : {1, 3}) {
    SCOPED_TRACE(workers);
    std::vector<int64_t> reduced;
    EXPECT_THROW(parallel_ordered(
                     20, workers,
                     [&](int, int64_t c) {
                       if (c == 2) {
                         std::this_thread::sleep_for(std::chrono::milliseconds(5));
                         throw std::runtime_error("item 2");
                       }
                     },
                     [&](int, int64_t c) { reduced.push_back(c); }),
                 std::runtime_error);
    // Nothing at or after the failed item (0 and 1 only if they got there first).
    ASSERT_LE(reduced.size(), 2u);
    for (size_t i = 0; i < reduced.size(); ++i) EXPECT_EQ(reduced[i], static_cast<int64_t>(i));
    if (workers == 1) {
      EXPECT_EQ(reduced.size(), 2u);
    }
  }
}

}  // namespace
}  // namespace attn
