// The single-process Comm and the block partition.
#include "mpi/comm.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>

#include "core/error.h"

namespace attn {
namespace {

class SelfComm final : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void sum_to_root(double*, int64_t) const override {}
  void sum_all(double*, int64_t) const override {}
  void broadcast(int from, double*, int64_t) const override {
    ATTN_ASSERT(from == 0, "broadcast from a rank that does not exist");
  }
  void broadcast_text(std::string&) const override {}
  void gather(const double* mine, int64_t count, double* out) const override {
    if (count > 0 && out != mine)
      std::memmove(out, mine, static_cast<size_t>(count) * sizeof(double));
  }
  void gather_all(const double* mine, int64_t count, double* out) const override {
    gather(mine, count, out);
  }
  void agree(const std::string& local_error) const override {
    if (!local_error.empty()) throw UserError(local_error);
  }
  void send(int, int, const std::string&) const override {
    ATTN_ASSERT(false, "send() in a single-process job");
  }
  CommMessage receive(int) const override {
    ATTN_ASSERT(false, "receive() in a single-process job");
    return {};
  }
};

}  // namespace

const Comm& comm_self() {
  static const SelfComm self;
  return self;
}

void comm_phase(const Comm& comm, const std::function<void()>& f) {
  std::string error;
  try {
    f();
  } catch (const std::bad_alloc&) {
    error = "out of memory";
  } catch (const std::exception& e) {
    error = e.what();
    if (error.empty()) error = "unknown error";
  }
  comm.agree(error);
}

void comm_block(int64_t n, int rank, int size, int64_t* lo, int64_t* hi) {
  ATTN_ASSERT(size >= 1 && rank >= 0 && rank < size && n >= 0, "bad block partition");
  const int64_t base = n / size, extra = n % size;
  *lo = rank * base + std::min<int64_t>(rank, extra);
  *hi = *lo + base + (rank < extra ? 1 : 0);
}

}  // namespace attn
