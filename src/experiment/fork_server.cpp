// Fork server: the server's loop (start workers, report their ends) and the runner's side.
//
// Channel: an AF_UNIX SOCK_SEQPACKET pair. Runner -> server: one message per worker, the
// request text with the result pipe's write end attached (SCM_RIGHTS). Server -> runner:
// fixed-size Report messages, a start (pid or -errno) for every request, in order, and an
// end (wait status, rusage) for every worker, whenever it ends.
#include "experiment/fork_server.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>

#include "core/child_process.h"
#include "core/error.h"
#include "core/front_option.h"
#include "core/process.h"

namespace attn {
namespace {

constexpr size_t kRequestMax = kForkServerRequestMax;

struct Report {
  int32_t kind;    // kStarted or kEnded
  int32_t pid;     // the worker's pid; for a failed start, -errno
  int32_t status;  // kEnded: the wait status
  rusage usage;    // kEnded: the worker's resource usage
};
constexpr int32_t kStarted = 1, kEnded = 2;

void report_send(int fd, const Report& r) {
  while (::send(fd, &r, sizeof r, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
}

// Receives one request: its text and the attached fd (-1 if none). Returns false at the end
// of the channel (the runner closed it or died).
bool request_receive(int sock, char* buf, std::string* text, int* fd) {
  iovec iov{buf, kRequestMax};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  while ((n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  if (n <= 0) return false;
  *fd = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      std::memcpy(fd, CMSG_DATA(c), sizeof(int));
  text->assign(buf, static_cast<size_t>(n));
  if (msg.msg_flags & MSG_TRUNC) text->clear();  // refused below: the worker gets no point
  return true;
}

// The server process: runs until the runner closes the channel, then kills what is left.
[[noreturn]] void server_main(int sock, pid_t runner, ForkServerEntry entry) {
  child_die_with(runner);
  signal(SIGINT, SIG_IGN);  // the server leaves with the runner, never before
  signal(SIGTERM, SIG_IGN);
  sigset_t chld, old;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &old);
  const int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) _exit(1);
  const pid_t self = getpid();
  // Left uninitialized, so that only the pages a request fills count in the workers' RSS.
  const std::unique_ptr<char[]> buf(new char[kRequestMax]);
  std::set<pid_t> running;
  bool open = true;
  while (open || !running.empty()) {
    pollfd fds[2] = {{sfd, POLLIN, 0}, {sock, static_cast<short>(open ? POLLIN : 0), 0}};
    if (poll(fds, 2, -1) < 0 && errno != EINTR) _exit(1);
    if (fds[0].revents != 0) {
      signalfd_siginfo info;
      while (::read(sfd, &info, sizeof info) > 0) {
      }
    }
    // Reap every ended worker (one SIGCHLD may stand for several).
    for (;;) {
      Report r{kEnded, 0, 0, {}};
      const pid_t pid = wait4(-1, &r.status, WNOHANG, &r.usage);
      if (pid <= 0) break;
      running.erase(pid);
      r.pid = pid;
      report_send(sock, r);
    }
    if (!open || fds[1].revents == 0) continue;
    std::string text;
    int fd = -1;
    if (!request_receive(sock, buf.get(), &text, &fd)) {
      // The runner is done (or gone): nothing more to report to; end the workers left.
      open = false;
      for (const pid_t pid : running) kill(pid, SIGKILL);
      continue;
    }
    Report r{kStarted, 0, 0, {}};
    if (fd < 0 || text.empty()) {
      r.pid = -EINVAL;
    } else {
      const pid_t pid = fork();
      if (pid == 0) {
        ::close(sock);
        ::close(sfd);
        sigprocmask(SIG_SETMASK, &old, nullptr);
        child_signals_restore();
        entry(text, fd, self);
        _exit(1);
      }
      r.pid = pid < 0 ? -errno : pid;
      if (pid > 0) running.insert(pid);
    }
    if (fd >= 0) ::close(fd);
    report_send(sock, r);
  }
  _exit(0);
}

}  // namespace

ForkServer::ForkServer(ForkServerEntry entry) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    throw UserError(std::string("cannot create the channel to the worker server: ") +
                    std::strerror(errno));
  const int size = static_cast<int>(kRequestMax) + 4096;
  setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  const pid_t runner = getpid();
  const pid_t pid = process_fork();  // flushed, with no OpenBLAS thread
  if (pid < 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    throw UserError(std::string("cannot start the worker server process: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(sv[0]);
    server_main(sv[1], runner, entry);
  }
  ::close(sv[1]);
  fd_ = sv[0];
  pid_ = pid;
}

ForkServer::~ForkServer() {
  ::close(fd_);  // the server kills the workers left, reaps them and exits
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

void ForkServer::receive_one() {
  Report r;
  ssize_t n;
  while ((n = ::recv(fd_, &r, sizeof r, 0)) < 0 && errno == EINTR) {
  }
  if (n != static_cast<ssize_t>(sizeof r))
    throw InternalFault("the worker server process (pid " + std::to_string(pid_) +
                        ") died; run again to resume the runs not stored");
  if (r.kind == kStarted)
    started_ = r.pid;
  else
    ended_[r.pid] = Ended{r.status, r.usage};
}

pid_t ForkServer::start(const std::string& request, int result_fd) {
  iovec iov{const_cast<char*>(request.data()), request.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &result_fd, sizeof(int));
  ATTN_CHECK(
      !request.empty() && request.size() <= kRequestMax,
      "a run point of " + std::to_string(request.size()) + " bytes cannot be sent to a worker");
  ssize_t n;
  while ((n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
    throw InternalFault("the worker server process (pid " + std::to_string(pid_) +
                        ") died; run again to resume the runs not stored");
  if (n < 0)  // not the user's input either: a fault of the channel
    throw InternalFault(std::string("cannot send a run to the worker server: ") +
                        std::strerror(errno));
  started_ = 0;
  while (started_ == 0) receive_one();
  if (started_ < 0)
    throw UserError(std::string("cannot start a worker process: ") + std::strerror(-started_) +
                    "; lower " + front_option(FrontOption::kJobs));
  return started_;
}

void ForkServer::wait(pid_t pid, int* status, rusage* usage) {
  while (ended_.count(pid) == 0) receive_one();
  *status = ended_[pid].status;
  *usage = ended_[pid].usage;
  ended_.erase(pid);
}

}  // namespace attn
