// fork or posix_spawn + pipe + wait for children that report in frames (child_process.h).
#include "core/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <optional>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "core/memory.h"
#include "core/process.h"

namespace attn {
namespace {

// child_job_run's last frame: the job's result, or its error by class.
constexpr char kJobOk = 'K', kJobIoError = 'I', kJobUserError = 'U', kJobError = 'X';

bool job_end_kind(char kind) {
  return kind == kJobOk || kind == kJobIoError || kind == kJobUserError || kind == kJobError;
}

// In the child: run the job and send its end frame.
void job_report(int fd, const ChildJob& job) {
  char kind = kJobOk;
  std::string text;
  try {
    text = job(fd);
  } catch (const IoError& e) {
    kind = kJobIoError, text = e.what();
  } catch (const UserError& e) {
    kind = kJobUserError, text = e.what();
  } catch (const std::bad_alloc&) {
    kind = kJobUserError, text = "out of memory; use a smaller size";  // as the CLI says it
  } catch (const std::exception& e) {
    kind = kJobError, text = e.what();
  }
  child_frame_write(fd, kind, text);
}

// SIGINT's and SIGTERM's dispositions at start-up, read before main (and before the module's
// handlers in an embedding) by a static initializer.
struct StartSignals {
  bool int_ignored = false, term_ignored = false;
  StartSignals() {
    struct sigaction old;
    int_ignored = ::sigaction(SIGINT, nullptr, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
                  old.sa_handler == SIG_IGN;
    term_ignored = ::sigaction(SIGTERM, nullptr, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
                   old.sa_handler == SIG_IGN;
  }
};
const StartSignals g_start_signals;

}  // namespace

void child_signals_restore() {
  signal(SIGINT, g_start_signals.int_ignored ? SIG_IGN : SIG_DFL);
  signal(SIGTERM, g_start_signals.term_ignored ? SIG_IGN : SIG_DFL);
}

bool child_signal_is_interrupt(int signal) {
  return signal == SIGINT || signal == SIGTERM || signal == SIGHUP || signal == SIGQUIT;
}

void child_die_with(pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);  // the parent died before prctl took effect
}

void child_enter(int fd, pid_t parent) {
  if (parent > 0) child_die_with(parent);
  child_signals_restore();
  memory_retain_freed();  // a child lives for one job: freed memory is reused, not returned
  log_sink_set([fd](const std::string& line) { child_frame_write(fd, kFrameWarning, line); });
  log_progress_sink_set([fd](const std::string&, int64_t done, int64_t total) {
    child_frame_write(fd, kFrameProgress, child_numbers_encode({done, total}));
  });
}

ChildPipe child_pipe_make() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw UserError(std::string("cannot create a pipe for a child process: ") +
                    std::strerror(errno));
  return {fds[0], fds[1]};
}

Child child_fork(const std::string& what, const std::function<void(int fd)>& body) {
  const ChildPipe pipe = child_pipe_make();
  const pid_t pid = process_fork();
  if (pid < 0) {
    const int error = errno;
    ::close(pipe.read_fd);
    ::close(pipe.write_fd);
    throw UserError("cannot start " + what + ": " + std::strerror(error));
  }
  if (pid == 0) {
    ::close(pipe.read_fd);
    int code = 0;
    try {
      body(pipe.write_fd);
    } catch (const std::exception& e) {
      child_frame_write(pipe.write_fd, kFrameWarning,
                        std::string("attnlab: ") + what + " failed: " + e.what() + "\n");
      code = 1;
    } catch (...) {
      code = 1;
    }
    std::fflush(nullptr);
    _exit(code);
  }
  ::close(pipe.write_fd);
  return {pid, pipe.read_fd};
}

bool child_read(int fd, ChildFrames& frames) {
  char buf[65536];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  if (n > 0) frames.append(buf, static_cast<size_t>(n));
  return n > 0 || (n < 0 && errno == EINTR);
}

int child_wait(pid_t pid, rusage* usage) {
  int status = 0;
  rusage ignored{};
  while (wait4(pid, &status, 0, usage ? usage : &ignored) < 0 && errno == EINTR) {
  }
  return status;
}

std::string child_status_text(int status, const std::string& who) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return who + " was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) +
           (sig == SIGKILL ? "; out of memory?" : "") + ")";
  }
  if (WIFEXITED(status)) return who + " exited with code " + std::to_string(WEXITSTATUS(status));
  return who + " ended abnormally";
}

namespace {

// Watches a child started for a job until it is reaped (see child_job_run); `who` names it in
// messages.
std::string job_watch(const std::string& who, const Child& child, const ChildWatch& watch) {
  ChildFrames frames;
  std::optional<ChildFrame> end;
  bool stopped = false;  // stop() said so, or on_frame threw
  std::exception_ptr error;
  for (;;) {
    pollfd p{child.fd, POLLIN, 0};
    const int r = poll(&p, 1, watch.poll_ms);
    if (r > 0) {
      if (!child_read(child.fd, frames)) break;  // the end of the frames: the child is leaving
      try {
        ChildFrame frame;
        while (frames.next(&frame))
          if (job_end_kind(frame.kind))
            end = std::move(frame);
          else if (watch.on_frame)
            watch.on_frame(frame);
      } catch (...) {
        error = std::current_exception();
        stopped = true;
        break;
      }
      continue;
    }
    if (r < 0) {
      const int err = errno;  // EINTR only: the others (EFAULT, EINVAL, ENOMEM) are bugs here
      ATTN_ASSERT(err == EINTR, "poll of " + who + ": " + std::strerror(err));
      continue;
    }
    if (watch.stop && watch.stop()) {
      stopped = true;
      break;
    }
  }
  ::close(child.fd);
  if (stopped) kill(child.pid, SIGTERM);
  const int status = child_wait(child.pid);
  if (error) std::rethrow_exception(error);
  if (stopped) throw Interrupted();
  // A terminal's Ctrl-C reaches the child and this process at once: the child's death by it
  // is the interrupt stop() reports, not a failure.
  if (!end && WIFSIGNALED(status) && child_signal_is_interrupt(WTERMSIG(status)) && watch.stop &&
      watch.stop())
    throw Interrupted();
  // A child that died before it reported (the OOM killer, a kill by hand): not a bug of
  // this code, so not an assertion; said as a UserError with the signal or exit code.
  if (!end)
    throw UserError(WIFSIGNALED(status) ? child_status_text(status, who)
                    : WIFEXITED(status) && WEXITSTATUS(status) != 0
                        ? child_status_text(status, who) + " without a report"
                        : who + " ended without a report");
  switch (end->kind) {
    case kJobOk: return end->payload;
    case kJobIoError: throw IoError(end->payload);
    case kJobUserError: throw UserError(end->payload);
    case kJobError: break;
  }
  // The job threw something other than attnlab's errors (a std::logic_error, ...): a bug.
  ATTN_ASSERT(false, who + " failed: " + end->payload);
}

// posix_spawn's settings for child_job_spawn: the pipe as kChildJobFd, stdin from /dev/null.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup(int write_fd) {
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, write_fd, kChildJobFd);  // clears FD_CLOEXEC
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawnattr_init(&attr);
    sigset_t none, reset;
    sigemptyset(&none);
    sigemptyset(&reset);
    sigaddset(&reset, SIGPIPE);  // Python ignores both; ignored dispositions survive exec
    sigaddset(&reset, SIGXFSZ);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &reset);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
};

}  // namespace

std::string child_job_run(const std::string& who, const ChildJob& job, const ChildWatch& watch) {
  const Child child = child_fork(who, [&job](int fd) {
    child_enter(fd, 0);
    job_report(fd, job);
    ::close(fd);
  });
  return job_watch(who, child, watch);
}

std::string child_job_spawn(const std::string& who, const std::vector<std::string>& argv,
                            const ChildWatch& watch) {
  ATTN_ASSERT(!argv.empty(), "child_job_spawn of " + who + " without a program");
  const std::string named = who + " (" + argv[0] + ")";
  ChildPipe pipe = child_pipe_make();
  if (pipe.write_fd == kChildJobFd) {  // dup2 onto itself would keep FD_CLOEXEC
    const int moved = fcntl(pipe.write_fd, F_DUPFD_CLOEXEC, kChildJobFd + 1);
    ::close(pipe.write_fd);
    pipe.write_fd = moved;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int error = EBADF;
  if (pipe.write_fd >= 0) {
    const SpawnSetup setup(pipe.write_fd);
    std::fflush(nullptr);
    error = posix_spawn(&pid, args[0], &setup.actions, &setup.attr, args.data(), environ);
    ::close(pipe.write_fd);
  }
  if (error != 0) {
    ::close(pipe.read_fd);
    throw UserError("cannot start " + named + ": " + std::strerror(error));
  }
  return job_watch(named, Child{pid, pipe.read_fd}, watch);
}

void child_job_serve(int fd, const ChildJob& job) {
  child_enter(fd, 0);
  job_report(fd, job);
  ::close(fd);
}

}  // namespace attn
