// The interrupt summary of a sweep (sweep_interrupt.h): lock-free counters, and a signal
// handler that formats them without allocating.
#include "experiment/sweep_interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "io/atomic_file.h"

namespace attn {
namespace {

std::atomic<int64_t> g_planned{0}, g_stored{0};
static_assert(std::atomic<int64_t>::is_always_lock_free, "the signal handler reads the counts");

// Appends text to buf[*n] (capacity cap), as far as it fits.
void append(char* buf, size_t* n, size_t cap, const char* text) {
  for (; *text != '\0' && *n < cap; ++text) buf[(*n)++] = *text;
}

void append_number(char* buf, size_t* n, size_t cap, int64_t v) {
  char digits[24];
  int k = 0;
  uint64_t u = v < 0 ? 0 : static_cast<uint64_t>(v);
  do {
    digits[k++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u > 0);
  while (k > 0 && *n < cap) buf[(*n)++] = digits[--k];
}

// The line into buf (no newline); its length, 0 when nothing was planned.
size_t line_format(char* buf, size_t cap) {
  const int64_t planned = g_planned.load(), stored = g_stored.load();
  if (planned <= 0) return 0;
  size_t n = 0;
  append(buf, &n, cap, "attnlab: interrupted: ");
  append_number(buf, &n, cap, stored);
  append(buf, &n, cap, " of ");
  append_number(buf, &n, cap, planned);
  append(buf, &n, cap, planned == 1 ? " run stored" : " runs stored");
  append(buf, &n, cap,
         stored < planned ? "; run the same command to resume" : "; every run is stored");
  return n;
}

extern "C" void sweep_interrupt_handler(int sig) {
  const int saved = errno;
  char buf[256];
  size_t n = 0;
  if (::isatty(STDERR_FILENO)) append(buf, &n, sizeof buf, "\r\033[K");  // a progress bar
  const size_t line = line_format(buf + n, sizeof buf - n - 1);
  if (line > 0) {
    n += line;
    buf[n++] = '\n';
    ssize_t unused = ::write(STDERR_FILENO, buf, n);
    (void)unused;
  }
  atomic_file_remove_open_temps();
  errno = saved;
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void sweep_interrupt_plan(int64_t planned, int64_t stored) {
  g_planned += planned;
  g_stored += stored;
}

void sweep_interrupt_stored() { ++g_stored; }

std::string sweep_interrupt_line() {
  char buf[256];
  return std::string(buf, line_format(buf, sizeof buf));
}

void sweep_interrupt_install() {
  for (int sig : {SIGINT, SIGTERM}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction sa {};
    sa.sa_handler = sweep_interrupt_handler;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace attn
