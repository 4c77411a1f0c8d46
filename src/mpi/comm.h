// Comm: the processes of one job and the few collective operations attnlab needs, so that
// the sweep coordinator and the distributed ridge fit are written once, for MPI ranks
// (src/mpi/mpi_comm.cpp, when built with ATTNLAB_MPI) or for a single process
// (comm_self(): every collective is the identity).
//
// Contract:
// - Collectives (sum_*, broadcast*, gather*, agree) must be called by every rank in the
//   same order with the same counts (gather: each rank its own count). Counts are in
//   doubles and may exceed 2^31: large transfers are split into pieces.
// - Waiting ranks sleep instead of spinning (MPI implementations busy-poll by default,
//   which takes a core from the rank that is still computing, e.g. rank 0 solving).
// - Sums are reductions in a fixed order for a fixed number of ranks: results depend on
//   the rank count only through rounding.
// - Point-to-point messages (send/receive) carry bytes with a small integer tag; they
//   are for the sweep protocol (src/experiment/sweep_mpi.*), tags below kCommTagReserved.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace attn {

// Tags at or above this value are used inside the collectives.
inline constexpr int kCommTagReserved = 1000;

struct CommMessage {
  int source = -1;
  int tag = -1;
  std::string bytes;
};

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  bool is_root() const { return rank() == 0; }

  // Element-wise sum of `count` doubles over all ranks, into `data` on rank 0 only
  // (sum_to_root; other ranks' data is left as it was) or on every rank (sum_all).
  virtual void sum_to_root(double* data, int64_t count) const = 0;
  virtual void sum_all(double* data, int64_t count) const = 0;
  // Rank `from`'s `count` doubles to every rank.
  virtual void broadcast(int from, double* data, int64_t count) const = 0;
  // Rank 0's text to every rank.
  virtual void broadcast_text(std::string& text) const = 0;
  // Every rank's `count` doubles concatenated in rank order (counts may differ between
  // ranks): into `out` on rank 0 (gather; `out` is ignored elsewhere) or on every rank
  // (gather_all). `out` must hold the total.
  virtual void gather(const double* mine, int64_t count, double* out) const = 0;
  virtual void gather_all(const double* mine, int64_t count, double* out) const = 0;
  // Error agreement after a local phase: when any rank passes a non-empty message,
  // every rank throws UserError with the message of the lowest such rank; otherwise
  // returns on every rank. Keeps the ranks in step when one of them fails.
  virtual void agree(const std::string& local_error) const = 0;

  // Point-to-point: send `bytes` to rank `to` with `tag` (0 <= tag < kCommTagReserved).
  virtual void send(int to, int tag, const std::string& bytes) const = 0;
  // Waits (sleeping) for the next message from rank `from` (-1: any rank) whose tag is
  // below kCommTagReserved, and returns it.
  virtual CommMessage receive(int from) const = 0;
};

// Runs f on this rank, then agree()s on whether it threw on any rank: the pattern that
// keeps the ranks in step around local work. std::bad_alloc becomes "out of memory".
void comm_phase(const Comm& comm, const std::function<void()>& f);

// This process alone: rank 0 of 1. send/receive abort (there is nobody to talk to).
const Comm& comm_self();

// Contiguous block of [0, n) owned by `rank` of `size` ranks: [*lo, *hi), sizes within
// one of each other, lower ranks first.
void comm_block(int64_t n, int rank, int size, int64_t* lo, int64_t* hi);

}  // namespace attn
