// MpiSession: MPI for the lifetime of one attnlab command (`attnlab run --mpi`).
//
// The constructor initialises MPI (thread level "funneled": compute threads may run, only
// the main thread talks MPI) and the destructor finalises it. world() is MPI_COMM_WORLD
// as a Comm (src/mpi/comm.h). In a binary built without MPI (ATTNLAB_MPI off) the
// constructor throws a one-line UserError; mpi_built() says which binary this is.
// MPI is never initialised unless a session is created, so a binary linked against MPI
// behaves exactly as one without it when --mpi is not given.
#pragma once

#include <string>

#include "mpi/comm.h"

namespace attn {

// True when this binary was built with MPI (CMake option ATTNLAB_MPI).
bool mpi_built();

class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  const Comm& world() const;
};

// Ends every rank of the job (MPI_Abort) after printing `message`: for a failure that
// leaves the ranks out of step. Only call with a live session.
[[noreturn]] void mpi_abort(const std::string& message);

}  // namespace attn
