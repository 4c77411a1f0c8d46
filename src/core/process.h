// Forking, and running a helper program (e.g. the Python plotting script) and waiting for it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace attn {

// fork() as attnlab forks: after flushing stdio (the child must not inherit unflushed output)
// and ending OpenBLAS's worker threads (core/blas_threads.h: fork() then never waits on one).
pid_t process_fork();

// Runs argv[0] with arguments argv (searched on PATH when it has no '/'), inheriting
// stdout and stderr. Returns its exit code, 127 if it could not be started, or 128 + the
// signal number if it was killed.
int process_run(const std::vector<std::string>& argv);

}  // namespace attn
