// Tests of the runner's fork server: a worker killed by SIGSEGV or SIGABRT is a failed run
// saying so, and killing the runner leaves neither the server nor a worker alive.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_helpers.h"
#include "experiment/fork_server.h"
#include "experiment/store.h"
#include "test_paths.h"

extern char** environ;

namespace attn {
namespace {

namespace fs = std::filesystem;

// 2 runs of a few seconds each (qsa with the linear baseline on 400000 samples).
const char* kSlowSpec = R"(
[experiment]
name = "fork_server_test"
seeds = 2
[task]
name = "qsa"
N = 6
q = 2
d_out = 2
[model]
name = "linear"
[train]
n = 400000
[eval]
n = 200
)";

// Pids whose parent is `parent` (from /proc/*/stat), living or zombie.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state;
    long ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

// True while `pid` exists and is not a zombie.
bool alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

// Waits up to `seconds` for the one child of `parent` that has a child of its own (the
// server with its worker); the pair (server, worker), or (0, 0).
std::pair<pid_t, pid_t> server_and_worker(pid_t parent, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    for (const pid_t server : children_of(parent))
      for (const pid_t worker : children_of(server))
        if (alive(worker)) return {server, worker};
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return {0, 0};
}

class ForkServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("attnlab_fork_server_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    spec_ = (dir_ / "spec.toml").string();
    test::file_write(spec_, kSlowSpec);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Starts `attnlab run` on the slow spec; its pid.
  pid_t runner_spawn(const std::string& out) {
    std::vector<std::string> args = {test_cli_path(), "run", spec_, "--out", out,
                                     "--jobs",        "1",   "-q"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    // Under ASan the CLI would catch the SIGSEGV itself and exit with code 1; the signal
    // must reach the worker as it does in a plain build, so ASan leaves SIGSEGV alone.
    std::vector<std::string> env;
    std::string asan = "ASAN_OPTIONS=handle_segv=0";
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string var = *e;
      if (var.rfind("ASAN_OPTIONS=", 0) == 0) asan = var + ":handle_segv=0";
      else env.push_back(var);
    }
    env.push_back(asan);
    std::vector<char*> envp;
    for (auto& v : env) envp.push_back(v.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    EXPECT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data()), 0);
    return pid;
  }

  fs::path dir_;
  std::string spec_;
};

TEST_F(ForkServerTest, CrashedWorkersAreFailedRunsNamingTheSignal) {
  const std::string out = (dir_ / "crash").string();
  const pid_t runner = runner_spawn(out);
  std::vector<pid_t> crashed;
  for (const int sig : {SIGSEGV, SIGABRT}) {
    pid_t worker = 0;
    for (int tries = 0; tries < 500 && worker == 0; ++tries) {
      const auto [s, w] = server_and_worker(runner, 10);
      if (w != 0 && (crashed.empty() || w != crashed.back())) worker = w;
      else std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_NE(worker, 0) << "no worker of the runner found";
    kill(worker, sig);
    crashed.push_back(worker);
  }
  int status = 0;
  waitpid(runner, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the runner did not finish cleanly";
  std::vector<std::string> errors;
  for (const auto& run : ResultsStore(out + "/results.sqlite").load_runs()) {
    EXPECT_EQ(run.status, "failed");
    EXPECT_TRUE(run.metrics.empty());
    errors.push_back(run.error);
  }
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0], "the worker process was killed by signal 11 (Segmentation fault)");
  EXPECT_EQ(errors[1], "the worker process was killed by signal 6 (Aborted)");
}

TEST_F(ForkServerTest, KillingTheRunnerLeavesNoServerOrWorker) {
  const pid_t runner = runner_spawn((dir_ / "killed").string());
  const auto [server, worker] = server_and_worker(runner, 10);
  ASSERT_NE(worker, 0) << "no worker of the runner found";
  ASSERT_TRUE(alive(server));
  kill(runner, SIGKILL);
  int status = 0;
  waitpid(runner, &status, 0);
  for (int wait = 0; wait < 100 && (alive(server) || alive(worker)); ++wait)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(alive(server)) << "the fork server " << server << " outlived the killed runner";
  EXPECT_FALSE(alive(worker)) << "the worker " << worker << " outlived the killed runner";
}

// The server itself: ends are reported per worker, whatever order they come in.
[[noreturn]] void entry_abort(const std::string& request, int fd, pid_t) {
  ::close(fd);
  if (request == "abort") std::abort();
  _exit(std::atoi(request.c_str()));
}

TEST_F(ForkServerTest, ReportsEachWorkersStatus) {
  ForkServer server(entry_abort);
  std::vector<std::pair<pid_t, std::string>> started;
  for (const std::string request : {"abort", "3", "0"}) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    started.emplace_back(server.start(request, fds[1]), request);
    ::close(fds[0]);
    ::close(fds[1]);
  }
  for (auto it = started.rbegin(); it != started.rend(); ++it) {
    int status = 0;
    rusage usage{};
    server.wait(it->first, &status, &usage);
    if (it->second == "abort") {
      EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) << status;
    } else {
      EXPECT_TRUE(WIFEXITED(status)) << status;
      EXPECT_EQ(WEXITSTATUS(status), std::atoi(it->second.c_str()));
    }
  }
  EXPECT_TRUE(alive(server.pid()));
}

}  // namespace
}  // namespace attn
