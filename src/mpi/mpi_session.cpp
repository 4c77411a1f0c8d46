// MPI initialisation and finalisation, or a clear error in a build without MPI.
#include "mpi/mpi_session.h"

#include <cstdio>
#include <cstdlib>

#include "core/error.h"
#include "core/front_option.h"

#ifdef ATTNLAB_HAVE_MPI
#include <mpi.h>

#include "mpi/mpi_comm.h"
#endif

namespace attn {

#ifdef ATTNLAB_HAVE_MPI

bool mpi_built() { return true; }

MpiSession::MpiSession() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  ATTN_ASSERT(!initialized, "one MpiSession per process");
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

const Comm& MpiSession::world() const { return mpi_comm_world(); }

void mpi_abort(const std::string& message) {
  std::fprintf(stderr, "attnlab: error: %s\n", message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

#else

bool mpi_built() { return false; }

MpiSession::MpiSession() {
  throw UserError(std::string(front_option(FrontOption::kMpi)) +
                  ": this attnlab was built without MPI; install libopenmpi-dev and openmpi-bin "
                  "(scripts/install-deps) and rebuild, or run without " +
                  front_option(FrontOption::kMpi));
}

MpiSession::~MpiSession() = default;

const Comm& MpiSession::world() const { return comm_self(); }

void mpi_abort(const std::string& message) {
  std::fprintf(stderr, "attnlab: error: %s\n", message.c_str());
  std::exit(1);
}

#endif

}  // namespace attn
