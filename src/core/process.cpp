// fork (flushed, without OpenBLAS threads) + execvp + waitpid.
#include "core/process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "core/blas_threads.h"

namespace attn {

pid_t process_fork() {
  std::fflush(nullptr);
  blas_threads_release();
  return fork();
}

int process_run(const std::vector<std::string>& argv) {
  if (argv.empty()) return 127;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = process_fork();
  if (pid < 0) return 127;
  if (pid == 0) {
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 127;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 127;
}

}  // namespace attn
