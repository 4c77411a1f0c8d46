// The runner's lock of an experiment directory: one process computes into DIR at a time.
//
// Contract:
// - DirLock(dir) takes an exclusive POSIX record lock (fcntl F_SETLK) on DIR/.attnlab.lock
//   and writes the holder's pid and host into it. It throws UserError, one line naming DIR
//   and the other holder's pid, when another process (or another DirLock in this process)
//   holds DIR; IoError when DIR is not writable.
// - The kernel drops the lock when its process ends, however it ends (SIGKILL included), so
//   the lock file a killed runner leaves behind never blocks. Forked workers do not inherit
//   the lock. The file itself stays (removing it would race with the next runner). The
//   holding process must not open and close DIR/.attnlab.lock itself: closing any
//   descriptor of the file drops a POSIX lock.
// - Runners take it (attnlab run, reproduce, merge into OUT, Python attnlab.run, rank 0 of
//   run --mpi); readers (export, plot, report-only, load_runs, sqlite3) never need it.
#pragma once

#include <string>

namespace attn {

class DirLock {
 public:
  explicit DirLock(const std::string& dir);
  ~DirLock();
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  std::string key_;  // canonical DIR, to refuse a second lock in this process
  int fd_ = -1;
};

}  // namespace attn
