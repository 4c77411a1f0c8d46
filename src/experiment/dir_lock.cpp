// DirLock: fcntl record lock on DIR/.attnlab.lock plus a per-process table of held DIRs.
#include "experiment/dir_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include "core/errno_kind.h"
#include "core/error.h"
#include "core/front_option.h"
#include "core/log.h"
#include "experiment/store_errors.h"

namespace attn {
namespace fs = std::filesystem;
namespace {

std::mutex g_held_mutex;
std::set<std::string>& held_dirs() {
  static std::set<std::string> dirs;
  return dirs;
}

std::string host_name() {
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) != 0) return "?";
  return host;
}

std::string in_use_message(const std::string& dir, const std::string& holder) {
  return dir + " is in use by another attnlab runner (" + holder +
         "); wait for it to finish (it stores every run it finishes, the same command then "
         "resumes), or use another output directory (" +
         front_option(FrontOption::kOut) + ")";
}

// "pid P on HOST" from the lock file's text, else from the kernel's record of the holder.
std::string holder_text(int fd, pid_t kernel_pid) {
  char buf[256] = {0};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string text = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (!text.empty() && text.find('\n') == std::string::npos) return text;
  return kernel_pid > 0 ? "pid " + std::to_string(kernel_pid) : "pid unknown";
}

}  // namespace

DirLock::DirLock(const std::string& dir) {
  std::error_code ec;
  key_ = fs::weakly_canonical(fs::absolute(dir), ec).string();
  if (ec) key_ = dir;
  {
    std::lock_guard<std::mutex> guard(g_held_mutex);
    if (!held_dirs().insert(key_).second)
      throw UserError(in_use_message(dir, "pid " + std::to_string(::getpid()) + ", this process"));
  }
  auto release_key = [&] {
    std::lock_guard<std::mutex> guard(g_held_mutex);
    held_dirs().erase(key_);
  };
  const std::string path = (fs::path(dir) / ".attnlab.lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    const int err = errno;
    release_key();
    if (errno_kind(err) == ErrnoKind::kNotWritable) throw IoError(store_dir_not_writable(dir, err));
    throw IoError("cannot create " + path + ": " + std::strerror(err) +
                  "; check the output directory " + dir);
  }
  struct flock fl;
  std::memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;  // the whole file
  if (::fcntl(fd_, F_SETLK, &fl) != 0) {
    const int err = errno;
    if (err == EACCES || err == EAGAIN) {
      struct flock who = fl;
      const pid_t pid = ::fcntl(fd_, F_GETLK, &who) == 0 && who.l_type != F_UNLCK ? who.l_pid : 0;
      const std::string holder = holder_text(fd_, pid);
      ::close(fd_);
      fd_ = -1;
      release_key();
      throw UserError(in_use_message(dir, holder));
    }
    // E.g. NFS without a lock daemon: run unlocked, as before there was a lock.
    log_warn("attnlab: cannot lock %s (%s); a second runner on %s would not be "
             "stopped\n", path.c_str(), std::strerror(err), dir.c_str());
    return;
  }
  const std::string text = "pid " + std::to_string(::getpid()) + " on " + host_name() + "\n";
  if (::ftruncate(fd_, 0) == 0) {
    const ssize_t written = ::pwrite(fd_, text.data(), text.size(), 0);
    (void)written;  // the text only improves the message of a refused second runner
  }
}

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);  // drops the lock
  std::lock_guard<std::mutex> guard(g_held_mutex);
  held_dirs().erase(key_);
}

}  // namespace attn
