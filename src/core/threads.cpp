// Thread budget and a small parallel_for on std::thread.
#include "core/threads.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/blas_threads.h"
#include "core/error.h"
#include "core/float_env.h"

extern "C" void openblas_set_num_threads(int num_threads);

namespace attn {
namespace {

std::atomic<int> g_threads{0};

int threads_from_env() {
  const char* text = std::getenv("ATTNLAB_THREADS");
  if (text == nullptr || *text == '\0') return 1;
  char* end = nullptr;
  const long k = std::strtol(text, &end, 10);
  ATTN_CHECK(*end == '\0' && k >= 1 && k <= 1024,
             std::string("ATTNLAB_THREADS='") + text + "' must be a whole number from 1 to 1024");
  return static_cast<int>(k);
}

}  // namespace

int threads_configure(int k) {
  ATTN_CHECK(k >= 0 && k <= 1024, "threads = " + std::to_string(k) + " must be between 1 and 1024");
  const int n = k == 0 ? threads_from_env() : k;
  g_threads = n;
  blas_threads_release();  // OpenBLAS on 1 thread, with no worker threads
  return n;
}

int threads_count() {
  if (g_threads.load() == 0) threads_configure(0);
  return g_threads.load();
}

namespace {

// Threads 1 … workers − 1 running body(t), each in the caller's floating-point mode (the
// subnormal flush of core/float_env.h), so a result never depends on which thread computed it.
// Each thread holds its own copy of body (a small lambda of references): the caller may pass
// a temporary.
template <class Body>
std::vector<std::thread> workers_start(int workers, const Body& body) {
  std::vector<std::thread> pool;
  const uint32_t env = float_env_get();
  for (int t = 1; t < workers; ++t)
    pool.emplace_back([body, env, t] {
      float_env_set(env);
      body(t);
    });
  return pool;
}

}  // namespace

void parallel_for(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& body) {
  if (end <= begin) return;
  grain = std::max<int64_t>(1, grain);
  const int64_t chunks = (end - begin + grain - 1) / grain;
  const int workers = static_cast<int>(std::min<int64_t>(threads_count(), chunks));
  if (workers <= 1) {
    for (int64_t lo = begin; lo < end; lo += grain) body(lo, std::min(end, lo + grain));
    return;
  }
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    for (;;) {
      const int64_t c = next.fetch_add(1);
      if (c >= chunks) return;
      {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (error) return;
      }
      const int64_t lo = begin + c * grain;
      try {
        body(lo, std::min(end, lo + grain));
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        return;
      }
    }
  };
  std::vector<std::thread> pool = workers_start(workers, [&](int) { work(); });
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

int parallel_workers(int64_t items) {
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads_count(), items)));
}

void parallel_ordered(int64_t items, int workers, const std::function<void(int, int64_t)>& work,
                      const std::function<void(int, int64_t)>& reduce) {
  if (items <= 0) return;
  workers = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(workers, items)));
  if (workers == 1) {
    for (int64_t c = 0; c < items; ++c) {
      work(0, c);
      reduce(0, c);
    }
    return;
  }
  // Items are taken in increasing order, so the items before the one a worker waits for
  // are all taken and running: no deadlock. A failure releases every waiting worker.
  std::atomic<int64_t> next{0};
  std::mutex mutex;
  std::condition_variable turn_changed;
  int64_t turn = 0;  // the next item to reduce
  std::exception_ptr error;
  auto run = [&](int w) {
    for (;;) {
      const int64_t c = next.fetch_add(1);
      if (c >= items) return;
      try {
        {
          std::lock_guard<std::mutex> lock(mutex);
          if (error) return;
        }
        work(w, c);
        {
          std::unique_lock<std::mutex> lock(mutex);
          turn_changed.wait(lock, [&] { return turn == c || error; });
          if (error) return;
        }
        reduce(w, c);
        {
          std::lock_guard<std::mutex> lock(mutex);
          ++turn;
        }
        turn_changed.notify_all();
      } catch (...) {
        {
          std::lock_guard<std::mutex> lock(mutex);
          if (!error) error = std::current_exception();
        }
        turn_changed.notify_all();
        return;
      }
    }
  };
  std::vector<std::thread> pool = workers_start(workers, run);
  run(0);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

BlasThreadsScope::BlasThreadsScope() {
  if (threads_count() > 1) openblas_set_num_threads(threads_count());  // starts its threads
}
BlasThreadsScope::~BlasThreadsScope() { blas_threads_release(); }  // no worker threads left

}  // namespace attn
