// OpenBLAS's worker threads (core/blas_threads.h): released after a multi-threaded section and
// before the fork server forks; the command line runs without any; the re-executed image
// gives programs it starts the user's OPENBLAS_NUM_THREADS.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "core/blas_core.h"
#include "core/blas_threads.h"
#include "core/threads.h"
#include "experiment/fork_server.h"
#include "ops/blas.h"
#include "cli_helpers.h"
#include "kept_variable.h"
#include "test_paths.h"

extern "C" void openblas_set_num_threads(int num_threads);

namespace attn {
namespace {

int task_count(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return -1;
  int n = 0;
  while (const dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n;
}

// One product big enough that a multi-threaded OpenBLAS splits it over its threads.
void product() {
  const int64_t n = 384;
  std::vector<double> a(n * n, 0.5), c(n * n);
  gemm<double>(false, false, n, n, n, 1.0, a.data(), n, a.data(), n, 0.0, c.data(), n);
  ASSERT_EQ(c[0], 0.25 * n);
}

// The workers a 2-thread OpenBLAS runs beside the caller on this machine (OpenBLAS never runs
// more threads than there are processors).
int two_thread_workers() { return std::min(2, get_nprocs()) - 1; }

using test::KeptVariable;

// The OpenBLAS core a command line started from this environment replaces, and the fallback
// it replaces ("" and "" when none). This program re-executed as the command line does
// (test_main.cpp), so when it replaced the fallback the command line replaces it the same way.
struct CoreReplacement {
  std::string core, fallback;
};
CoreReplacement core_replacement_of_a_fresh_process() {
  if (!blas_core_replaced().empty()) return {blas_core_name(), blas_core_replaced()};
  const std::string wanted = blas_core_wanted();
  return {wanted, wanted.empty() ? "" : blas_core_name()};
}

TEST(BlasThreads, AfterAMultiThreadedSectionNoOpenBlasWorkerThreadIsLeft) {
  const int loaded = blas_threads_configured();  // as the library loaded: OPENBLAS_NUM_THREADS
  const int at_start = task_count(getpid());
  blas_threads_release();
  const int released = task_count(getpid());
  EXPECT_EQ(at_start - released, loaded - 1) << "OpenBLAS loaded with " << loaded << " threads";
  threads_configure(2);
  {
    BlasThreadsScope scope;
    product();
    EXPECT_EQ(task_count(getpid()), released + two_thread_workers());
  }
  EXPECT_EQ(task_count(getpid()), released);
  EXPECT_EQ(blas_threads_configured(), 1);
  threads_configure(1);
}

[[noreturn]] void worker_that_exits(const std::string&, int, pid_t) { _exit(0); }

TEST(BlasThreads, TheForkServerForksWithNoOpenBlasWorkerThread) {
  blas_threads_release();
  const int released = task_count(getpid());
  openblas_set_num_threads(2);  // as a section with more threads would leave it
  product();
  ASSERT_EQ(task_count(getpid()), released + two_thread_workers());
  {
    ForkServer server(worker_that_exits);
    EXPECT_EQ(task_count(getpid()), released);
    EXPECT_EQ(task_count(server.pid()), 1);
  }
  EXPECT_EQ(blas_threads_configured(), 1);
}

// The command line, blocked opening a FIFO as its input: its initial environment (what the
// kernel shows in /proc/PID/environ) and its thread count, then exit 2 once the FIFO opens.
struct BlockedCli {
  std::string environ;
  int tasks = -1;
  int exit_code = -1;
};

BlockedCli cli_blocked_on_a_fifo(const char* openblas_threads) {
  const std::string fifo =
      ::testing::TempDir() + "blas_threads_" + std::to_string(getpid()) + ".npz";
  unlink(fifo.c_str());
  EXPECT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string save = fifo + ".safetensors";
  const pid_t pid = fork();
  if (pid == 0) {
    if (openblas_threads == nullptr)
      unsetenv("OPENBLAS_NUM_THREADS");
    else
      setenv("OPENBLAS_NUM_THREADS", openblas_threads, 1);
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    execl(test_cli_path(), test_cli_path(), "fit", "linear", "--in", fifo.c_str(), "--save",
          save.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  BlockedCli r;
  // The open of the FIFO blocks until a writer comes: wait until the program sits there.
  for (int i = 0; i < 500; ++i) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/wchan");
    std::string wchan((std::istreambuf_iterator<char>(f)), {});
    if (wchan == "wait_for_partner") break;  // the kernel's wait in a FIFO's open
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::ifstream env("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  r.environ.assign(std::istreambuf_iterator<char>(env), {});
  r.tasks = task_count(pid);
  const int fd = open(fifo.c_str(), O_WRONLY);
  if (fd >= 0) close(fd);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  unlink(fifo.c_str());
  return r;
}

TEST(BlasThreads, TheCommandLineRunsWithoutOpenBlasWorkerThreads) {
  for (const char* setting : {static_cast<const char*>(nullptr), "2", "1"}) {
    const std::string name = setting == nullptr ? "unset" : setting;
    const BlockedCli r = cli_blocked_on_a_fifo(setting);
    EXPECT_EQ(r.tasks, 1) << "OPENBLAS_NUM_THREADS " << name;
    EXPECT_NE(r.environ.find(std::string("OPENBLAS_NUM_THREADS=1") + '\0'), std::string::npos)
        << name;
    // Re-executed only when the user's setting was not already 1 (or OpenBLAS's kernels are to
    // be replaced, core/blas_core.h), carrying that setting.
    const std::string carried = setting == nullptr ? "-" : std::string("=") + setting;
    const CoreReplacement replacement = core_replacement_of_a_fresh_process();
    const bool reexecuted = std::string(name) != "1" || !replacement.core.empty();
    EXPECT_EQ(r.environ.find("ATTNLAB_BLAS_REEXEC=" + carried + '\0') != std::string::npos,
              reexecuted)
        << name;
    // With the replacement kernels, and the user's OPENBLAS_CORETYPE (unset) carried.
    if (!replacement.core.empty()) {
      EXPECT_NE(r.environ.find("OPENBLAS_CORETYPE=" + replacement.core + '\0'), std::string::npos)
          << name;
      const char* user_core = std::getenv("OPENBLAS_CORETYPE");  // unset or empty here
      const std::string carried_core = user_core == nullptr ? "-" : std::string("=") + user_core;
      EXPECT_NE(r.environ.find("ATTNLAB_BLAS_REEXEC_CORE=" + carried_core + ' ' +
                               replacement.fallback + '\0'),
                std::string::npos)
          << name;
    }
    EXPECT_EQ(r.exit_code, 2) << name;  // not a regular file
  }
}

TEST(BlasThreads, TheReexecutedImageRestoresTheUsersSetting) {
  const KeptVariable threads("OPENBLAS_NUM_THREADS"), core("OPENBLAS_CORETYPE");
  const KeptVariable marker("ATTNLAB_BLAS_REEXEC"), core_marker("ATTNLAB_BLAS_REEXEC_CORE");
  // The process's record of a replaced core, put back however the test ends.
  struct KeptReplacement {
    const std::string before = blas_core_replaced();
    ~KeptReplacement() { blas_core_replaced_set(before); }
  } const kept_replacement;
  setenv("ATTNLAB_BLAS_REEXEC", "=3", 1);
  blas_reexec_once(nullptr);  // the re-executed image's branch: no exec
  ASSERT_NE(std::getenv("OPENBLAS_NUM_THREADS"), nullptr);
  EXPECT_STREQ(std::getenv("OPENBLAS_NUM_THREADS"), "3");
  EXPECT_EQ(std::getenv("ATTNLAB_BLAS_REEXEC"), nullptr);
  setenv("ATTNLAB_BLAS_REEXEC", "-", 1);
  blas_reexec_once(nullptr);
  EXPECT_EQ(std::getenv("OPENBLAS_NUM_THREADS"), nullptr);
  EXPECT_EQ(std::getenv("ATTNLAB_BLAS_REEXEC"), nullptr);
  // The core, when it was replaced: the user's value back, or unset.
  for (const char* carried : {"=Zen Prescott", "- Core2"}) {
    setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
    setenv("ATTNLAB_BLAS_REEXEC", "-", 1);
    setenv("ATTNLAB_BLAS_REEXEC_CORE", carried, 1);
    blas_reexec_once(nullptr);
    const char* now = std::getenv("OPENBLAS_CORETYPE");
    if (carried[0] == '=') {
      EXPECT_STREQ(now, "Zen");
      EXPECT_EQ(blas_core_replaced(), "Prescott");
    } else {
      EXPECT_EQ(now, nullptr);
      EXPECT_EQ(blas_core_replaced(), "Core2");
    }
    EXPECT_EQ(std::getenv("ATTNLAB_BLAS_REEXEC_CORE"), nullptr);
  }
}

TEST(BlasThreads, ACoreMarkerLeftInTheEnvironmentIsNotApplied) {
  // Set by someone else, without the re-execution's own marker: the command line ignores it
  // (no replacement named, the user's OPENBLAS_CORETYPE kept for its children).
  const test::CliResult r = test::shell(
      "env -u ATTNLAB_BLAS_REEXEC 'ATTNLAB_BLAS_REEXEC_CORE=- Foo' OPENBLAS_CORETYPE=Haswell "
      "OPENBLAS_NUM_THREADS=2 " +  // so that it re-executes (for the thread count)
      std::string(test_cli_path()) + " --version");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("OpenBLAS core Haswell,"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Foo"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace attn
