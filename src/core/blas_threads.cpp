// OpenBLAS's worker threads: re-execution with one thread (and kernels the CPU runs), release
// (core/blas_threads.h).
#include "core/blas_threads.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "core/blas_core.h"

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
constexpr const char* kCoreVariable = "OPENBLAS_CORETYPE";
// Hold the user's settings across the re-execution: "=" + value, or "-" when unset. The
// first is always set in the re-executed image; the second only when the core was replaced,
// followed by a space and the name of the fallback it replaced.
constexpr const char* kReexecVariable = "ATTNLAB_BLAS_REEXEC";
constexpr const char* kReexecCoreVariable = "ATTNLAB_BLAS_REEXEC_CORE";

// The user's value of `variable` as the markers carry it.
std::string carried(const char* variable) {
  const char* value = std::getenv(variable);
  return value == nullptr ? "-" : std::string("=") + value;
}

// Sets `variable` back to what `saved` (a marker's value) carried.
void restore(const char* variable, const std::string& saved) {
  if (!saved.empty() && saved[0] == '=')
    setenv(variable, saved.c_str() + 1, 1);
  else
    unsetenv(variable);
}

}  // namespace

void blas_reexec_once(char** argv, BlasReexec what) {
  if (const char* saved = std::getenv(kReexecVariable); saved != nullptr) {
    // The re-executed image: OpenBLAS loaded as wanted; give children the user's values.
    restore(kThreadsVariable, saved);
    unsetenv(kReexecVariable);
    if (const char* core = std::getenv(kReexecCoreVariable); core != nullptr) {
      // "<user's value as carried> <the fallback replaced>"
      const std::string carried_core = core;
      const size_t space = carried_core.rfind(' ');
      restore(kCoreVariable, carried_core.substr(0, space));
      if (space != std::string::npos) blas_core_replaced_set(carried_core.substr(space + 1));
      unsetenv(kReexecCoreVariable);
    }
    return;
  }
  // A core marker without the re-execution's own marker is not this program's: never apply it.
  unsetenv(kReexecCoreVariable);
  const char* user = std::getenv(kThreadsVariable);
  const bool threads_as_wanted =
      what == BlasReexec::core_only || (user != nullptr && std::string(user) == "1");
  const std::string core = blas_core_wanted();
  if (threads_as_wanted && core.empty()) return;
  const std::string saved_threads = carried(kThreadsVariable), saved_core = carried(kCoreVariable);
  bool ready = setenv(kReexecVariable, saved_threads.c_str(), 1) == 0;
  if (ready && what == BlasReexec::threads_and_core)
    ready = setenv(kThreadsVariable, "1", 1) == 0;
  if (ready && !core.empty())
    ready = setenv(kReexecCoreVariable, (saved_core + ' ' + blas_core_name()).c_str(), 1) == 0 &&
            setenv(kCoreVariable, core.c_str(), 1) == 0;
  // The program's own path (not /proc/self/exe), so `ps` and `pgrep` still show its name.
  char path[4096];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  if (ready && length > 0) {
    path[length] = '\0';
    execv(path, argv);
  }
  // Could not re-execute (no /proc, say): go on as loaded, with the user's environment.
  restore(kThreadsVariable, saved_threads);
  unsetenv(kReexecVariable);
  if (!core.empty()) {
    restore(kCoreVariable, saved_core);
    unsetenv(kReexecCoreVariable);
  }
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
