// A runner stopped by SIGTERM or SIGINT says how far it got and how to go on
// (experiment/sweep_interrupt.h): "attnlab: interrupted: S of P runs stored; run the same
// command to resume", S what the store holds, and dies of the signal.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli_helpers.h"
#include "experiment/store.h"
#include "experiment/sweep_interrupt.h"
#include "test_paths.h"

extern char** environ;

namespace attn {
namespace {

namespace fs = std::filesystem;

// 6 fresh-sample attention runs of a second or so each (one seed each, run one at a time).
const char* kSpec = R"(
[experiment]
name = "interrupt_test"
seeds = 6
[task]
name = "qsa"
N = 8
q = 2
d_out = 2
[model]
name = "attention"
m = 16
[train]
n = 0
steps = 1500
batch = 64
[eval]
n = 200
)";

size_t runs_stored(const std::string& dir) {
  const std::string store = dir + "/results.sqlite";
  if (!fs::exists(store)) return 0;
  try {
    return ResultsStore(store, StoreAccess::kRead).load_runs().size();
  } catch (const std::exception&) {
    return 0;
  }
}

TEST(InterruptSummary, TheLineCountsPlannedAndStoredRuns) {
  // The counters are process-wide: this test reads what it adds.
  sweep_interrupt_plan(18, 10);
  sweep_interrupt_stored();
  sweep_interrupt_stored();
  EXPECT_NE(sweep_interrupt_line().find("12 of 18 runs stored; run the same command to resume"),
            std::string::npos)
      << sweep_interrupt_line();
}

TEST(InterruptSummary, SigtermAndSigintSayHowManyRunsAreStoredAndHowToResume) {
  const fs::path dir =
      fs::temp_directory_path() / ("attnlab_interrupt_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string spec = (dir / "spec.toml").string(), out = (dir / "out").string();
  test::file_write(spec, kSpec);
  for (const int sig : {SIGTERM, SIGINT}) {
    const size_t before = runs_stored(out);
    ASSERT_LT(before, 5u) << "the runs were too fast for the test to stop one mid-sweep";
    const std::string err = (dir / ("err" + std::to_string(sig))).string();
    std::vector<std::string> args = {test_cli_path(), "run", spec,          "--out", out,
                                     "--jobs",        "1",   "--no-groups", "-q"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&files, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    ASSERT_EQ(posix_spawn(&pid, argv[0], &files, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&files);
    while (runs_stored(out) < before + 1) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    kill(pid, sig);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << test::file_read(err);
    EXPECT_EQ(WTERMSIG(status), sig);
    const size_t stored = runs_stored(out);
    EXPECT_NE(test::file_read(err).find("attnlab: interrupted: " + std::to_string(stored) +
                                        " of 6 runs stored; run the same command to resume"),
              std::string::npos)
        << test::file_read(err);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attn
