// Atomic file output (temp file + fsync + rename), signal-time cleanup of temp files,
// and the pre-flight check of an output path (directory exists, is writable, has space).
#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include "core/errno_kind.h"
#include "core/error.h"
#include "core/memory.h"

namespace attn {

namespace {

// ---- signal-time cleanup table (read by the handler: atomics and fixed buffers only) ----

constexpr size_t kSlotPathMax = 4096;
enum SlotState : int { kSlotFree = 0, kSlotFilling = 1, kSlotActive = 2 };

struct CleanupSlot {
  std::atomic<int> state{kSlotFree};
  char path[kSlotPathMax];
};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

CleanupSlot g_slots[kAtomicFileSignalSlots];

// Returns the slot index holding temp_path, or -1 if the table is full or the path too long.
int slot_register(const std::string& temp_path) {
  if (temp_path.size() >= kSlotPathMax) return -1;
  for (int i = 0; i < kAtomicFileSignalSlots; ++i) {
    int expected = kSlotFree;
    if (g_slots[i].state.compare_exchange_strong(expected, kSlotFilling)) {
      std::memcpy(g_slots[i].path, temp_path.c_str(), temp_path.size() + 1);
      g_slots[i].state.store(kSlotActive, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

void slot_release(int i) {
  if (i >= 0) g_slots[i].state.store(kSlotFree, std::memory_order_release);
}

extern "C" void atomic_file_signal_handler(int sig) {
  const int saved_errno = errno;
  atomic_file_remove_open_temps();
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);  // pending until this handler returns, then the default action runs
  errno = saved_errno;
}

// ---- temp paths open in this process (to refuse two writers of one PATH) ----

std::mutex g_open_mutex;
std::set<std::string>& open_temp_paths() {
  static std::set<std::string> paths;
  return paths;
}

std::string dir_of(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

std::string errno_text(int err) { return std::strerror(err); }

// One line for an errno met while writing PATH (open, write, fsync, close).
std::string write_failure(const std::string& path, const char* what, int err, uint64_t written) {
  const std::string dir = dir_of(path);
  const std::string head = "cannot " + std::string(what) + " " + path + ": ";
  switch (errno_kind(err)) {
    case ErrnoKind::kNoSpace:
      return head + "no space left on device (after " + format_bytes(written) +
             "); free space on the filesystem of " + dir + " or write the output elsewhere";
    case ErrnoKind::kNoDirectory:
      return head + "directory " + dir + " does not exist; create it first (mkdir -p " + dir + ")";
    case ErrnoKind::kNotWritable:
      return head + errno_text(err) + " in " + dir +
             "; choose a writable output directory or fix its permissions";
    case ErrnoKind::kTooLarge:
      return head + "file too large for this filesystem; write the output to another filesystem";
    case ErrnoKind::kOther:
      return head + errno_text(err) + "; check the disk and the output directory " + dir;
  }
  ATTN_ASSERT(false, "unhandled ErrnoKind");
}

}  // namespace

void atomic_file_remove_open_temps() noexcept {
  for (auto& slot : g_slots) {
    if (slot.state.load(std::memory_order_acquire) == kSlotActive) ::unlink(slot.path);
  }
}

AtomicFile::AtomicFile(const std::string& path) : path_(path) {
  if (path.empty()) throw UserError("output file name is empty; give a path to write");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    throw IoError("cannot write " + path + ": it is a directory; give a file name");
  }
  temp_path_ = atomic_file_temp_path(path, static_cast<long>(::getpid()));
  {
    std::lock_guard<std::mutex> lock(g_open_mutex);
    if (!open_temp_paths().insert(temp_path_).second) {
      throw IoError("cannot write " + path +
                    ": this process is already writing it; write each output file once");
    }
  }
  // Register before creating, so a signal between the two cannot leave the file behind.
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(temp_path_, ec);
  slot_ = slot_register(ec ? temp_path_ : abs.string());
  fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    const int err = errno;
    slot_release(slot_);
    slot_ = -1;
    {
      std::lock_guard<std::mutex> lock(g_open_mutex);
      open_temp_paths().erase(temp_path_);
    }
    throw IoError(write_failure(path_, "create", err, 0));
  }
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!committed_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
  slot_release(slot_);  // after the unlink: a signal in between finds nothing to remove
  slot_ = -1;
  if (!temp_path_.empty()) {
    std::lock_guard<std::mutex> lock(g_open_mutex);
    open_temp_paths().erase(temp_path_);
  }
}

void AtomicFile::write(const void* data, size_t n) {
  ATTN_ASSERT(fd_ >= 0 && !committed_, "AtomicFile::write after commit");
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const size_t chunk = std::min<size_t>(n, size_t{1} << 30);
    const ssize_t k = ::write(fd_, p, chunk);
    if (k < 0) {
      if (errno == EINTR) continue;
      throw IoError(write_failure(path_, "write", errno, written_));
    }
    if (k == 0) {
      throw IoError("cannot write " + path_ + ": short write after " + format_bytes(written_) +
                    "; check free space and the disk of " + dir_of(path_));
    }
    p += k;
    n -= static_cast<size_t>(k);
    written_ += static_cast<uint64_t>(k);
  }
}

void AtomicFile::commit() {
  ATTN_ASSERT(fd_ >= 0 && !committed_, "AtomicFile::commit called twice");
  if (::fsync(fd_) != 0) throw IoError(write_failure(path_, "write", errno, written_));
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) throw IoError(write_failure(path_, "write", errno, written_));
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    throw IoError("cannot rename " + temp_path_ + " onto " + path_ + ": " + errno_text(err) +
                  "; check that " + path_ + " is not a directory and " + dir_of(path_) +
                  " is writable");
  }
  committed_ = true;
  // Make the rename durable; failure here is not worth failing the run for.
  const int dfd = ::open(dir_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  discard();
}

std::string atomic_file_temp_path(const std::string& path, long pid) {
  return path + ".tmp." + std::to_string(pid);
}

int atomic_file_remove_stale_temps(const std::string& path) noexcept {
  namespace fs = std::filesystem;
  const std::string prefix = fs::path(path).filename().string() + ".tmp.";
  int removed = 0;
  std::error_code ec;
  fs::directory_iterator it(dir_of(path), ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const size_t digits_end = name.find_first_not_of("0123456789", prefix.size());
    if (digits_end == prefix.size()) continue;  // no pid
    if (digits_end != std::string::npos && name[digits_end] != '-') continue;
    const std::string digits = name.substr(prefix.size(), digits_end - prefix.size());
    if (digits.size() > 9) continue;  // not a pid of this system
    const long pid = std::stol(digits);
    if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive
    std::error_code rm_ec;
    if (fs::remove(it->path(), rm_ec)) ++removed;
  }
  return removed;
}

void atomic_file_install_signal_cleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM}) {
      struct sigaction old;
      if (::sigaction(sig, nullptr, &old) != 0) continue;
      if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue;
      struct sigaction sa;
      std::memset(&sa, 0, sizeof sa);
      sa.sa_handler = atomic_file_signal_handler;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = 0;
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

void output_path_check(const std::string& path, uint64_t bytes_needed) {
  if (path.empty()) throw UserError("output file name is empty; give a path to write");
  const std::string dir = dir_of(path);
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    throw IoError("cannot write " + path + ": it is a directory; give a file name");
  }
  if (::stat(dir.c_str(), &st) != 0) {
    const int err = errno;
    if (errno_kind(err) == ErrnoKind::kNoDirectory) {
      throw IoError("cannot write " + path + ": directory " + dir +
                    " does not exist; create it first (mkdir -p " + dir + ")");
    }
    throw IoError("cannot write " + path + ": cannot access directory " + dir + ": " +
                  errno_text(err) + "; choose another output directory");
  }
  if (!S_ISDIR(st.st_mode)) {
    throw IoError("cannot write " + path + ": " + dir +
                  " is not a directory; choose an output path inside a directory");
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw IoError("cannot write " + path + ": directory " + dir + " is not writable (" +
                  errno_text(errno) + "); choose another output directory or fix its permissions");
  }
  struct statvfs vfs;
  if (::statvfs(dir.c_str(), &vfs) == 0 && vfs.f_blocks == 0) {
    throw IoError("cannot write " + path + ": " + dir + " is on a virtual filesystem (such as "
                  "/proc or /sys) that stores no files; choose an output path on a disk");
  }
  if (::statvfs(dir.c_str(), &vfs) == 0) {
    const uint64_t avail =
        static_cast<uint64_t>(vfs.f_bavail) * static_cast<uint64_t>(vfs.f_frsize);
    if (avail < bytes_needed) {
      throw IoError("not enough disk space for " + path + ": needs " + format_bytes(bytes_needed) +
                    ", the filesystem of " + dir + " has " + format_bytes(avail) +
                    " free; free some space or write the output elsewhere");
    }
  }
}

void atomic_file_write(const std::string& path, const std::string& bytes) {
  output_path_check(path, bytes.size());
  AtomicFile f(path);
  f.write(bytes.data(), bytes.size());
  f.commit();
}

}  // namespace attn
