// Helpers for the results-directory robustness tests: a small spec, a pid that is surely
// not alive, and running code in a child that sees a directory read-only.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <functional>
#include <string>

#include "cli_helpers.h"

namespace attn::test {

// qsa with the linear baseline: 2 n x SEEDS seeds, quick runs.
inline std::string small_spec(int seeds) {
  return "[experiment]\nname = \"store_test\"\nseeds = " + std::to_string(seeds) +
         "\n[task]\nname = \"qsa\"\nN = 6\nq = 2\nd_out = 2\n[model]\nname = \"linear\"\n"
         "[eval]\nn = 100\n[sweep]\n\"train.n\" = [50, 100]\n";
}

// The pid of a child that has exited and been reaped.
inline long dead_pid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return static_cast<long>(pid);
}

// Result of in_read_only_view.
struct ViewResult {
  bool available = false;  // false: this machine cannot make a read-only bind mount
  std::string failure;     // what fn reported; "" when it succeeded
};

// Runs fn in a forked child inside a private mount namespace where `dir` is bind-mounted
// onto itself read-only (root ignores permission bits, so chmod would not do). fn returns ""
// on success or a description of what went wrong; gtest assertions do not work in there.
inline ViewResult in_read_only_view(const std::string& dir,
                                    const std::function<std::string()>& fn) {
  int fds[2];
  ViewResult result;
  if (pipe(fds) != 0) return result;
  const pid_t pid = fork();
  if (pid == 0) {
    ::close(fds[0]);
    auto leave = [&](int code, const std::string& text) {
      if (!text.empty() && ::write(fds[1], text.data(), text.size()) < 0) code = 3;
      _exit(code);
    };
    if (unshare(CLONE_NEWNS) != 0 ||
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0 ||
        mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0)
      leave(77, "");
    const std::string probe = dir + "/.probe";
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT, 0644);
    if (fd >= 0 || errno != EROFS) leave(77, "");
    const std::string failure = fn();
    leave(failure.empty() ? 0 : 1, failure);
  }
  ::close(fds[1]);
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0)
    result.failure.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.available = WIFEXITED(status) && WEXITSTATUS(status) != 77;
  if (result.available && WEXITSTATUS(status) != 0 && result.failure.empty())
    result.failure = "the child failed with exit code " + std::to_string(WEXITSTATUS(status));
  return result;
}

}  // namespace attn::test
