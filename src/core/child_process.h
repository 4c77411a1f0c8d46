// Child processes that report to their parent over a pipe in frames (core/child_frames.h):
// the fork, pipe and wait plumbing of the sweep's run workers (experiment/run_worker.cpp, also
// when experiment/fork_server.h forks them) and of Python's run()/reproduce(), which run a
// whole job in a child (python/src/bind_run.cpp).
//
// Contract:
// - A child starts with child_enter: SIGINT/SIGTERM back to what they were when the process
//   started (child_signals_restore: ignored under a shell's `cmd &`, else default), its warnings
//   (log_warn) and progress (log_progress) sent as frames, memory it frees kept for its own
//   reuse (memory_retain_freed, core/memory.h), and, given its parent's pid, it dies with that
//   parent (PR_SET_PDEATHSIG; it leaves at once if the parent is already gone).
// - child_fork never lets the child return into the caller's code: the child leaves with
//   _exit (code 1 if its body threw, after a warning frame saying what).
// - child_job_run returns only after the child is reaped; when it stops the child (stop()
//   or a throwing on_frame) it kills it with SIGTERM first.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <functional>
#include <string>

#include "core/child_frames.h"

namespace attn {

// In a freshly forked child, before its work: see the contract. parent <= 0: the child
// does not die with its parent.
void child_enter(int fd, pid_t parent);
// The PR_SET_PDEATHSIG part of child_enter alone (the fork server's own process).
void child_die_with(pid_t parent);
// SIGINT and SIGTERM as they were when the process started: ignored if they were ignored then
// (a non-interactive shell starts `attnlab run ... &` so, and the runner keeps running through
// a process-group SIGINT: its workers must too), else the default action. The parent's own
// handlers (temporary-file clean-up, an embedding's) are not for its children.
void child_signals_restore();
// Whether a worker that died of `signal` was stopped from outside (SIGINT, SIGTERM, SIGHUP,
// SIGQUIT: a user, a batch system's time limit) rather than failing: its run is not stored.
bool child_signal_is_interrupt(int signal);

// A pipe whose ends close on exec; UserError if none can be made.
struct ChildPipe {
  int read_fd = -1, write_fd = -1;
};
ChildPipe child_pipe_make();

// Forks a child that runs body(write end of a fresh pipe) and then _exits with code 0; the
// parent keeps the pid and the read end. UserError "cannot start WHAT: ..." if fork fails.
struct Child {
  pid_t pid = -1;
  int fd = -1;
};
Child child_fork(const std::string& what, const std::function<void(int fd)>& body);

// Reads once from fd into frames; false at the end of the stream (or on a read error).
bool child_read(int fd, ChildFrames& frames);
// Waits for child pid to end (retrying EINTR); its wait status, and its rusage if asked.
int child_wait(pid_t pid, rusage* usage = nullptr);
// How a child ended, for a message: "WHO was killed by signal 9 (Killed; out of memory?)",
// "WHO exited with code 3".
std::string child_status_text(int status, const std::string& who);

// A job for child_job_run: its result payload; fd is the child's end of the pipe (for
// frames of its own kinds).
using ChildJob = std::function<std::string(int fd)>;

struct ChildWatch {
  // Each frame besides the result, in order, as it arrives; may throw (the exception then
  // propagates from child_job_run, after the child is stopped).
  std::function<void(const ChildFrame&)> on_frame;
  // Asked every poll_ms while the child is quiet; true stops the child and child_job_run
  // throws attn::Interrupted (core/interrupt.h).
  std::function<bool()> stop;
  int poll_ms = 50;
};

// Runs job in a forked child (child_enter without dying with the parent) while this process
// watches its frames. Returns the job's result; rethrows the job's error as IoError or
// UserError with its message (UserError "out of memory; ..." for std::bad_alloc); UserError
// "WHO was killed by signal ..." or "WHO ended without a report" when the child died before
// it reported (the environment, not a bug). Any other exception of the job is a bug:
// ATTN_ASSERT with its message, as is a poll failure other than EINTR.
std::string child_job_run(const std::string& who, const ChildJob& job, const ChildWatch& watch);

}  // namespace attn
