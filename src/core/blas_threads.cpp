// OpenBLAS's worker threads: re-execution with one thread, release (core/blas_threads.h).
#include "core/blas_threads.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

extern "C" {
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
// OpenBLAS's own thread shutdown (what its fork handler runs) and its "the threads are up"
// flag; weak, so a BLAS without them only skips the release.
int blas_thread_shutdown_(void) __attribute__((weak));
extern int blas_server_avail __attribute__((weak));
}

namespace attn {
namespace {

constexpr const char* kThreadsVariable = "OPENBLAS_NUM_THREADS";
// Holds the user's setting across the re-execution: "=" + value, or "-" when unset.
constexpr const char* kReexecVariable = "ATTNLAB_BLAS_REEXEC";

}  // namespace

void blas_threads_reexec_single(char** argv) {
  if (const char* saved = std::getenv(kReexecVariable); saved != nullptr) {
    // The re-executed image: OpenBLAS loaded with one thread; give children the user's value.
    if (saved[0] == '=')
      setenv(kThreadsVariable, saved + 1, 1);
    else
      unsetenv(kThreadsVariable);
    unsetenv(kReexecVariable);
    return;
  }
  const char* user = std::getenv(kThreadsVariable);
  if (user != nullptr && std::string(user) == "1") return;
  const std::string saved = user == nullptr ? "-" : std::string("=") + user;
  if (setenv(kReexecVariable, saved.c_str(), 1) != 0) return;
  // The program's own path (not /proc/self/exe), so `ps` and `pgrep` still show its name.
  char path[4096];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  if (length > 0 && setenv(kThreadsVariable, "1", 1) == 0) {
    path[length] = '\0';
    execv(path, argv);
  }
  // Could not re-execute (no /proc, say): go on as loaded, with the user's environment.
  unsetenv(kReexecVariable);
  if (user == nullptr)
    unsetenv(kThreadsVariable);
  else
    setenv(kThreadsVariable, saved.c_str() + 1, 1);
}

void blas_threads_release() {
  if (blas_thread_shutdown_ == nullptr || &blas_server_avail == nullptr) {
    openblas_set_num_threads(1);
    return;
  }
  // openblas_set_num_threads starts the threads again when they are down, so it is called
  // only while they are up; they go down holding 1 thread, so a later call runs on the caller.
  if (blas_server_avail == 0) return;
  openblas_set_num_threads(1);
  blas_thread_shutdown_();
}

int blas_threads_configured() { return openblas_get_num_threads(); }

}  // namespace attn
