// Comm over MPI_COMM_WORLD (built only with ATTNLAB_MPI).
//
// Every collective starts with a quiet barrier: ranks announce themselves to the root
// with a small message and wait for its answer sleeping (probe, then nanosleep with a
// growing pause up to 2 ms), so that a rank waiting for a slow one does not spin inside
// MPI. Transfers are split into pieces of at most 2^26 doubles (MPI counts are int).
#ifdef ATTNLAB_HAVE_MPI
#include "mpi/mpi_comm.h"

#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/error.h"

namespace attn {
namespace {

constexpr int64_t kPiece = int64_t(1) << 26;
constexpr int kTagUp = kCommTagReserved, kTagDown = kCommTagReserved + 1;
constexpr int kTagGather = kCommTagReserved + 2;

// Sleeps until a message from `source` with `tag` can be received.
void wait_for(int source, int tag, MPI_Status* status) {
  long pause_ns = 20000;
  for (;;) {
    int flag = 0;
    MPI_Iprobe(source, tag, MPI_COMM_WORLD, &flag, status);
    if (flag) return;
    timespec ts{0, pause_ns};
    nanosleep(&ts, nullptr);
    pause_ns = std::min(pause_ns * 2, 2000000L);
  }
}

// MPI_Send that sleeps while the receiver is not ready (large messages wait for it).
void send_quietly(const void* data, int count, MPI_Datatype type, int to, int tag) {
  MPI_Request request;
  MPI_Isend(data, count, type, to, tag, MPI_COMM_WORLD, &request);
  long pause_ns = 20000;
  for (;;) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    timespec ts{0, pause_ns};
    nanosleep(&ts, nullptr);
    pause_ns = std::min(pause_ns * 2, 2000000L);
  }
}

void recv_quietly(void* data, int count, MPI_Datatype type, int from, int tag) {
  MPI_Status status;
  wait_for(from, tag, &status);
  MPI_Recv(data, count, type, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

class MpiComm final : public Comm {
 public:
  MpiComm() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void sum_to_root(double* data, int64_t count) const override {
    quiet_barrier(0);
    for (int64_t lo = 0; lo < count; lo += kPiece) {
      const int m = static_cast<int>(std::min(kPiece, count - lo));
      MPI_Reduce(rank_ == 0 ? MPI_IN_PLACE : data + lo, data + lo, m, MPI_DOUBLE, MPI_SUM, 0,
                 MPI_COMM_WORLD);
    }
  }

  void sum_all(double* data, int64_t count) const override {
    quiet_barrier(0);
    for (int64_t lo = 0; lo < count; lo += kPiece) {
      const int m = static_cast<int>(std::min(kPiece, count - lo));
      MPI_Allreduce(MPI_IN_PLACE, data + lo, m, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
  }

  void broadcast(int from, double* data, int64_t count) const override {
    quiet_barrier(from);
    for (int64_t lo = 0; lo < count; lo += kPiece) {
      const int m = static_cast<int>(std::min(kPiece, count - lo));
      MPI_Bcast(data + lo, m, MPI_DOUBLE, from, MPI_COMM_WORLD);
    }
  }

  void broadcast_text(std::string& text) const override { broadcast_text_from(0, text); }

  void gather(const double* mine, int64_t count, double* out) const override {
    quiet_barrier(0);
    if (rank_ != 0) {
      send_quietly(&count, 1, MPI_INT64_T, 0, kTagGather);
      for (int64_t lo = 0; lo < count; lo += kPiece)
        send_quietly(mine + lo, static_cast<int>(std::min(kPiece, count - lo)), MPI_DOUBLE, 0,
                     kTagGather);
      return;
    }
    if (count > 0 && out != mine)
      std::memmove(out, mine, static_cast<size_t>(count) * sizeof(double));
    int64_t at = count;
    for (int r = 1; r < size_; ++r) {
      int64_t theirs = 0;
      recv_quietly(&theirs, 1, MPI_INT64_T, r, kTagGather);
      for (int64_t lo = 0; lo < theirs; lo += kPiece)
        recv_quietly(out + at + lo, static_cast<int>(std::min(kPiece, theirs - lo)), MPI_DOUBLE, r,
                     kTagGather);
      at += theirs;
    }
  }

  void gather_all(const double* mine, int64_t count, double* out) const override {
    double total = static_cast<double>(count);
    sum_all(&total, 1);
    gather(mine, count, out);
    broadcast(0, out, static_cast<int64_t>(total));
  }

  void agree(const std::string& local_error) const override {
    quiet_barrier(0);
    int first = local_error.empty() ? size_ : rank_;
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == size_) return;
    std::string message = local_error;
    broadcast_text_from(first, message);
    throw UserError(message);
  }

  void send(int to, int tag, const std::string& bytes) const override {
    ATTN_ASSERT(tag >= 0 && tag < kCommTagReserved, "message tag out of range");
    ATTN_ASSERT(bytes.size() < (size_t(1) << 31), "message too large");
    send_quietly(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, to, tag);
  }

  CommMessage receive(int from) const override {
    MPI_Status status;
    wait_for(from < 0 ? MPI_ANY_SOURCE : from, MPI_ANY_TAG, &status);
    ATTN_ASSERT(status.MPI_TAG < kCommTagReserved, "a collective's message arrived outside it");
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    CommMessage m;
    m.source = status.MPI_SOURCE;
    m.tag = status.MPI_TAG;
    m.bytes.resize(static_cast<size_t>(count));
    MPI_Recv(m.bytes.data(), count, MPI_BYTE, m.source, m.tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return m;
  }

 private:
  // Every rank tells `root` it has arrived and sleeps until root has heard from all.
  void quiet_barrier(int root) const {
    if (size_ == 1) return;
    char token = 0;
    if (rank_ != root) {
      send_quietly(&token, 1, MPI_CHAR, root, kTagUp);
      recv_quietly(&token, 1, MPI_CHAR, root, kTagDown);
      return;
    }
    for (int r = 0; r < size_; ++r)
      if (r != root) recv_quietly(&token, 1, MPI_CHAR, r, kTagUp);
    for (int r = 0; r < size_; ++r)
      if (r != root) send_quietly(&token, 1, MPI_CHAR, r, kTagDown);
  }

  void broadcast_text_from(int from, std::string& text) const {
    quiet_barrier(from);
    int64_t length = static_cast<int64_t>(text.size());
    MPI_Bcast(&length, 1, MPI_INT64_T, from, MPI_COMM_WORLD);
    text.resize(static_cast<size_t>(length));
    for (int64_t lo = 0; lo < length; lo += kPiece)
      MPI_Bcast(text.data() + lo, static_cast<int>(std::min(kPiece, length - lo)), MPI_CHAR, from,
                MPI_COMM_WORLD);
  }

  int rank_ = 0, size_ = 1;
};

}  // namespace

const Comm& mpi_comm_world() {
  static const MpiComm world;
  return world;
}

}  // namespace attn
#endif  // ATTNLAB_HAVE_MPI
