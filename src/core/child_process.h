// Child processes that report to their parent over a pipe in frames (core/child_frames.h):
// the fork, pipe and wait plumbing of the sweep's run workers (experiment/run_worker.cpp, also
// when experiment/fork_server.h forks them), and the spawn of a fresh program that runs a
// whole job for Python's run()/reproduce() (python/src/bind_run.cpp starts the attnlab binary,
// apps/cmd_job.cpp serves the job).
//
// Contract:
// - A child starts with child_enter: SIGINT/SIGTERM back to what they were when the process
//   started (child_signals_restore: ignored under a shell's `cmd &`, else default), its warnings
//   (log_warn) and progress (log_progress) sent as frames, memory it frees kept for its own
//   reuse (memory_retain_freed, core/memory.h), and, given its parent's pid, it dies with that
//   parent (PR_SET_PDEATHSIG; it leaves at once if the parent is already gone).
// - child_fork never lets the child return into the caller's code: the child leaves with
//   _exit (code 1 if its body threw, after a warning frame saying what).
// - child_job_run and child_job_spawn return only after the child is reaped; when they stop
//   the child (stop() or a throwing on_frame) they kill it with SIGTERM first.
// - child_job_spawn never runs a line of the caller's code in the new process: posix_spawn
//   execs the program at once, so a caller with many threads (a Jupyter kernel: IPython's
//   history thread holds SQLite's mutex at random moments) cannot hand the child a lock
//   that no thread will release. child_fork and child_job_run run library code in a forked
//   copy of the caller: call them only from a process with one thread.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

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

// The fd on which a program started by child_job_spawn writes its frames.
inline constexpr int kChildJobFd = 3;
// A job's status line (reproduce's `say`), as a frame of this kind (core/child_frames.h).
inline constexpr char kFrameJobStatus = 'S';

// As child_job_run, but the job is another program: argv[0] (a path, not searched on PATH)
// with arguments argv, started by posix_spawn with the write end of the frame pipe as fd
// kChildJobFd, stdin from /dev/null, stdout and stderr inherited, SIGPIPE and SIGXFSZ at
// their default action (an interpreter ignores them), no signal blocked. The program answers
// with child_job_serve. UserError "cannot start WHO (PATH): ..." if it cannot be started;
// "WHO (PATH) exited with code C without a report" if it ended without an end frame.
std::string child_job_spawn(const std::string& who, const std::vector<std::string>& argv,
                            const ChildWatch& watch);

// The program's side of child_job_spawn: child_enter (not dying with its parent) on fd, runs
// job and writes its end frame (the result, or its error by class), then closes fd.
void child_job_serve(int fd, const ChildJob& job);

}  // namespace attn
