// Atomic file output: all of a file or none of it.
//
// Contract:
// - AtomicFile writes to PATH.tmp.<pid> in the same directory as PATH; commit() fsyncs,
//   closes and renames it onto PATH, so a reader sees either the old PATH or the complete
//   new one, never a partial file.
// - If the AtomicFile is destroyed without commit() (an exception mid-write), the temp file
//   is removed and PATH is untouched.
// - After atomic_file_install_signal_cleanup(), a SIGINT/SIGTERM also removes the temp files
//   that are open at that moment, then the process dies of the signal as usual. Up to
//   kAtomicFileSignalSlots temp files are tracked at once; beyond that a file is still
//   written atomically but not cleaned up on a signal.
// - Every failure (open, short write, ENOSPC, fsync, rename) throws attn::IoError with one
//   line naming the path and what would fix it.
// An AtomicFile is used by one thread at a time; different AtomicFiles are independent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace attn {

inline constexpr int kAtomicFileSignalSlots = 64;

class AtomicFile {
 public:
  // Creates PATH.tmp.<pid> for writing. Throws IoError if it cannot be created, or if this
  // process already has an open AtomicFile for the same PATH.
  explicit AtomicFile(const std::string& path);
  ~AtomicFile();  // removes the temp file unless commit() succeeded
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Appends n bytes (retries short writes and EINTR).
  void write(const void* data, size_t n);
  // fsync, close and rename onto PATH (then fsync the directory). Call once.
  void commit();

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }
  uint64_t bytes_written() const { return written_; }

 private:
  void discard() noexcept;

  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  int slot_ = -1;  // index in the signal-cleanup table, or -1
  uint64_t written_ = 0;
  bool committed_ = false;
};

// Installs (once; later calls do nothing) SIGINT and SIGTERM handlers that unlink the
// open AtomicFile temp files and re-raise the signal with its default action. They replace
// any handler set before, except that a signal ignored (SIG_IGN) at the first call stays
// ignored.
void atomic_file_install_signal_cleanup();

// Unlinks the temp files of all open AtomicFiles now. Async-signal-safe: for a program
// that installs its own SIGINT/SIGTERM handler instead of the one above.
void atomic_file_remove_open_temps() noexcept;

// The temp file an AtomicFile of process `pid` writes PATH to: PATH.tmp.<pid>.
std::string atomic_file_temp_path(const std::string& path, long pid);

// Removes what processes that are no longer alive on this host left of their writes of
// PATH: PATH.tmp.<pid> and PATH.tmp.<pid>-<suffix> (e.g. SQLite's -journal of a temp
// store), for every pid that is not a running process. The temp files of live processes
// (a concurrent export) stay. Returns the number of files removed; never throws.
int atomic_file_remove_stale_temps(const std::string& path) noexcept;

// Checks, before any work, that PATH can be written: its directory exists and is writable
// and its filesystem has at least bytes_needed free bytes. Throws IoError otherwise.
void output_path_check(const std::string& path, uint64_t bytes_needed);

// Writes `bytes` as the whole of PATH, atomically, after output_path_check.
void atomic_file_write(const std::string& path, const std::string& bytes);

}  // namespace attn
