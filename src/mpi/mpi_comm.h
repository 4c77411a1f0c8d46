// MPI_COMM_WORLD as a Comm (src/mpi/comm.h). Private to src/mpi/: only in builds with
// ATTNLAB_MPI, and only after MpiSession has initialised MPI.
#pragma once

#include "mpi/comm.h"

namespace attn {

const Comm& mpi_comm_world();

}  // namespace attn
