// Test helper: a Comm whose ranks are threads of this process, so that the multi-rank paths
// of code written over a Comm (the ridge stages) run in the unit suite (and under ASan)
// without mpirun. Collectives meet at a barrier; sums are taken in rank order (rank 0 + 1 +
// 2 ...), like the MPI communicator's fixed-order reductions. Point-to-point is not offered.
// thread_comm_run(R, f) runs f(comm) on R threads and waits for them.
#pragma once

#include <algorithm>
#include <barrier>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "mpi/comm.h"

namespace attn::test {

struct ThreadCommShared {
  explicit ThreadCommShared(int n) : size(n), meet(n), data(n), counts(n), texts(n), errors(n) {}
  int size;
  std::barrier<> meet;
  std::vector<const double*> data;
  std::vector<int64_t> counts;
  std::vector<std::string*> texts;
  std::vector<std::string> errors;
};

class ThreadComm final : public Comm {
 public:
  ThreadComm(ThreadCommShared& shared, int rank) : s_(shared), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return s_.size; }

  void sum_to_root(double* data, int64_t count) const override {
    publish(data, count);
    if (rank_ == 0) {
      for (int r = 1; r < s_.size; ++r)
        for (int64_t i = 0; i < count; ++i) data[i] += s_.data[r][i];
    }
    s_.meet.arrive_and_wait();
  }
  void sum_all(double* data, int64_t count) const override {
    publish(data, count);
    std::vector<double> sum(s_.data[0], s_.data[0] + count);
    for (int r = 1; r < s_.size; ++r)
      for (int64_t i = 0; i < count; ++i) sum[i] += s_.data[r][i];
    s_.meet.arrive_and_wait();  // every rank has read every buffer
    std::copy(sum.begin(), sum.end(), data);
  }
  void broadcast(int from, double* data, int64_t count) const override {
    publish(data, count);
    if (rank_ != from && count > 0) std::memcpy(data, s_.data[from], sizeof(double) * count);
    s_.meet.arrive_and_wait();
  }
  void broadcast_text(std::string& text) const override {
    s_.texts[rank_] = &text;
    s_.meet.arrive_and_wait();
    if (rank_ != 0) text = *s_.texts[0];
    s_.meet.arrive_and_wait();
  }
  void gather(const double* mine, int64_t count, double* out) const override {
    publish(mine, count);
    if (rank_ == 0) concatenate(out);
    s_.meet.arrive_and_wait();
  }
  void gather_all(const double* mine, int64_t count, double* out) const override {
    publish(mine, count);
    concatenate(out);
    s_.meet.arrive_and_wait();
  }
  void agree(const std::string& local_error) const override {
    s_.errors[rank_] = local_error;
    s_.meet.arrive_and_wait();
    std::string first;
    for (const auto& e : s_.errors)
      if (first.empty() && !e.empty()) first = e;
    s_.meet.arrive_and_wait();
    if (!first.empty()) throw UserError(first);
  }
  void send(int, int, const std::string&) const override {
    ATTN_ASSERT(false, "ThreadComm has no point-to-point messages");
  }
  CommMessage receive(int) const override {
    ATTN_ASSERT(false, "ThreadComm has no point-to-point messages");
    return {};
  }

 private:
  void publish(const double* data, int64_t count) const {
    s_.data[rank_] = data;
    s_.counts[rank_] = count;
    s_.meet.arrive_and_wait();
  }
  void concatenate(double* out) const {
    int64_t at = 0;
    for (int r = 0; r < s_.size; ++r) {
      if (s_.counts[r] > 0 && out + at != s_.data[r])
        std::memmove(out + at, s_.data[r], sizeof(double) * s_.counts[r]);
      at += s_.counts[r];
    }
  }
  ThreadCommShared& s_;
  int rank_;
};

// f(comm) on `ranks` threads, one ThreadComm each; returns when all are done.
inline void thread_comm_run(int ranks, const std::function<void(const Comm&)>& f) {
  ThreadCommShared shared(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&shared, &f, r] {
      const ThreadComm comm(shared, r);
      f(comm);
    });
  for (auto& t : threads) t.join();
}

}  // namespace attn::test
