// Fork server: a helper process that forks a sweep's run workers from its own small image.
//
// fork() copies the page tables of the whole forking process, so a runner holding a large
// expanded plan pays for it on every worker it starts. The runner instead starts one
// ForkServer before its big allocations; for each run it sends the server the point's text
// (point_codec) and the write end of the worker's result pipe, and the server forks the
// worker, which calls the entry function. The server reports each worker's pid and, when
// it ends, its wait status and rusage.
//
// Lifetimes: the server dies with the thread that started it (PR_SET_PDEATHSIG, SIGKILL),
// and its workers die with the server, so killing the runner leaves no process behind. The
// server ignores SIGINT and SIGTERM (it leaves with the runner). Destroying the ForkServer
// kills the workers still running and reaps the server.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <map>
#include <string>

namespace attn {

// The largest request (a point's or a group's text) the server takes: one datagram.
inline constexpr size_t kForkServerRequestMax = 4u << 20;

// Runs in a forked worker with `request` (the text given to start) and the result pipe fd;
// `parent` is the server's pid. Never returns.
using ForkServerEntry = void (*)(const std::string& request, int fd, pid_t parent);

class ForkServer {
 public:
  explicit ForkServer(ForkServerEntry entry);
  ~ForkServer();
  ForkServer(const ForkServer&) = delete;
  ForkServer& operator=(const ForkServer&) = delete;

  // Starts a worker running entry(request, result_fd) and returns its pid. The caller keeps
  // (and closes) its own copy of result_fd. UserError if the worker cannot be started.
  pid_t start(const std::string& request, int result_fd);
  // Waits for worker `pid` to end; its wait status and resource usage.
  void wait(pid_t pid, int* status, rusage* usage);
  pid_t pid() const { return pid_; }

 private:
  struct Ended {
    int status;
    rusage usage;
  };
  void receive_one();  // one report of the server: a start (into started_) or an end

  int fd_ = -1;
  pid_t pid_ = -1;
  pid_t started_ = 0;  // last start report: a pid, or -errno
  std::map<pid_t, Ended> ended_;
};

}  // namespace attn
