// A runner stopped by SIGTERM or SIGINT says how far it got and how to go on
// (experiment/sweep_interrupt.h): "attnlab: interrupted: S of P runs stored; run the same
// command to resume", S what the store holds, and dies of the signal.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli_helpers.h"
#include "experiment/sweep_interrupt.h"
#include "test_paths.h"

extern char** environ;

namespace attn {
namespace {

// The runs DIR's store holds (0 before it exists), read with SQLite as another program would.
int stored_count(const std::string& dir) {
  sqlite3* db = nullptr;
  int count = 0;
  if (sqlite3_open_v2((dir + "/results.sqlite").c_str(), &db, SQLITE_OPEN_READONLY, nullptr) ==
      SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM runs", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      count = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return count;
}

// Starts `attnlab ARGS...` with stderr into err_path; its pid.
pid_t cli_start(std::vector<std::string> args, const std::string& err_path) {
  args.insert(args.begin(), test_cli_path());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&files, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &files, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&files);
  return pid;
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
  // sanford2023 E1 at quick size with six values of m at N = 16: 6 attention fits of seconds
  // each, one at a time.
  const std::string spec =
      std::string(test_source_dir()) + "/experiments/sanford2023/e1_qsa_representation.toml";
  const std::string dir = "/tmp/attnlab_interrupt_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  const std::string out = dir + "/out";
  std::filesystem::create_directories(dir);
  for (const int sig : {SIGTERM, SIGINT}) {
    const int before = stored_count(out);
    ASSERT_LT(before, 5) << "the runs were too fast for the test to stop one mid-sweep";
    const std::string err = dir + "/err" + std::to_string(sig);
    const std::string six_m =
        R"(sweep.zip=[{"task.N" = [16, 16, 16, 16, 16, 16], "model.m" = [4, 8, 16, 24, 32, 64]}])";
    const pid_t pid = cli_start(
        {"run", spec, "--out", out, "--quick", "--jobs", "1", "--no-groups", "-q", "--set", six_m},
        err);
    ASSERT_GT(pid, 0);
    while (stored_count(out) < before + 1)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    kill(pid, sig);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << test::file_read(err);
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_NE(
        test::file_read(err).find("attnlab: interrupted: " + std::to_string(stored_count(out)) +
                                  " of 6 runs stored; run the same command to resume"),
        std::string::npos)
        << test::file_read(err);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace attn
