// One runner per results directory, and --shard values that do not fit are refused: a
// second runner (run, merge, in this or another process) is refused with one line naming
// the directory and the holder's pid; the lock of a SIGKILLed runner does not block;
// readers (export) need no lock; --shard parses 64-bit values and refuses what does not fit.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "cli_helpers.h"
#include "core/error.h"
#include "core/front_option.h"
#include "experiment/dir_lock.h"
#include "experiment/experiment_dir.h"
#include "store_test_helpers.h"

extern char** environ;

namespace attn {
namespace {

namespace fs = std::filesystem;

class RunnerLock : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("attnlab_lock_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    spec_ = path("spec.toml");
    test::file_write(spec_, test::small_spec(3));
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Starts `attnlab run SPEC --out OUT` (a sweep of `seeds` x 2 runs) and returns once it
  // holds OUT's lock (the lock file names its pid).
  pid_t start_runner(const std::string& spec, const std::string& out) {
    std::vector<std::string> args = {test_cli_path(), "run", spec, "--out", out,
                                     "--jobs",        "1",   "-q"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    EXPECT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
    const std::string want = "pid " + std::to_string(pid) + " on ";
    for (int i = 0; i < 1000 && test::file_read(out + "/.attnlab.lock").rfind(want, 0) != 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(test::file_read(out + "/.attnlab.lock").rfind(want, 0), 0u)
        << "the runner never took the lock";
    return pid;
  }

  // Is pid still running (not yet reaped)?
  static bool running(pid_t pid) {
    int status = 0;
    return waitpid(pid, &status, WNOHANG) == 0;
  }

  fs::path dir_;
  std::string spec_;
};

TEST_F(RunnerLock, SecondRunnerIsRefusedWhileTheFirstRuns) {
  const std::string slow = path("slow.toml"), out = path("o");
  test::file_write(slow, test::small_spec(2000));  // 4000 runs: far longer than this test
  const pid_t first = start_runner(slow, out);
  const auto second = test::cli_run("run " + slow + " --out " + out + " -q");
  ASSERT_TRUE(running(first)) << "the first runner ended early; the test did not exercise the lock";
  EXPECT_EQ(second.exit_code, 2) << second.out;
  EXPECT_NE(
      second.out.find(out + " is in use by another attnlab runner (pid " + std::to_string(first)),
      std::string::npos)
      << second.out;
  EXPECT_EQ(std::count(second.out.begin(), second.out.end(), '\n'), 1) << second.out;
  // merge into it is a runner too; export only reads.
  ASSERT_EQ(
      test::cli_run("run " + slow + " --out " + path("shard") + " --shard 0/2000 -q").exit_code, 0);
  const auto merge = test::cli_run("merge " + out + " " + path("shard"));
  EXPECT_EQ(merge.exit_code, 2) << merge.out;
  EXPECT_NE(merge.out.find("in use by another attnlab runner"), std::string::npos) << merge.out;
  const auto exported = test::cli_run("export " + out);
  EXPECT_EQ(exported.exit_code, 0) << exported.out;
  kill(first, SIGKILL);
  waitpid(first, nullptr, 0);
}

TEST_F(RunnerLock, LockOfASigkilledRunnerDoesNotBlock) {
  const std::string slow = path("slow.toml"), out = path("o");
  test::file_write(slow, test::small_spec(2000));
  const pid_t first = start_runner(slow, out);
  ASSERT_TRUE(running(first));
  kill(first, SIGKILL);
  waitpid(first, nullptr, 0);
  // The killed runner's lock file is still there (naming it) and does not block the same
  // command; its workers (PR_SET_PDEATHSIG) never held the lock.
  ASSERT_TRUE(fs::exists(out + "/.attnlab.lock"));
  const pid_t again = start_runner(slow, out);
  EXPECT_TRUE(running(again));
  kill(again, SIGKILL);
  waitpid(again, nullptr, 0);
}

TEST_F(RunnerLock, HeldLockRefusesInThisAndOtherProcesses) {
  const std::string out = path("o");
  fs::create_directories(out);
  {
    const DirLock lock(out);
    try {
      const DirLock second(out + "/.");  // the same directory spelt differently
      ADD_FAILURE() << "a second lock in this process was granted";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("pid " + std::to_string(getpid()) + ", this process"),
                std::string::npos) << e.what();
    }
    const auto r = test::cli_run("run " + spec_ + " --out " + out + " -q");
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find("in use by another attnlab runner (pid " + std::to_string(getpid())),
              std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out + "/results.sqlite")) << "the refused runner wrote a store";
  }
  // Released when the DirLock goes.
  EXPECT_EQ(test::cli_run("run " + spec_ + " --out " + out + " -q").exit_code, 0);
  const DirLock again(out);
}

TEST(ShardParse, AcceptsWhatFits) {
  int i = -1, k = -1;
  shard_parse("0/1", &i, &k);
  EXPECT_EQ(i, 0);
  EXPECT_EQ(k, 1);
  shard_parse("3/4", &i, &k);
  EXPECT_EQ(i, 3);
  EXPECT_EQ(k, 4);
  shard_parse("2147483646/2147483647", &i, &k);
  EXPECT_EQ(i, 2147483646);
  EXPECT_EQ(k, 2147483647);
}

TEST(ShardParse, RefusesWhatDoesNotFitWithOneLine) {
  for (const char* text : {"3/4294967296", "0/4294967297", "1/4294967298", "0/2147483648",
                           "0/99999999999999999999", "99999999999999999999/1", "-1/4", "1/0",
                           "4/4", "0/-1", "1/", "/4", "a/b", "1/4x", "1 /4", "1/2/3", "1", ""}) {
    int i = 7, k = 9;
    try {
      shard_parse(text, &i, &k);
      ADD_FAILURE() << "accepted --shard " << text << " as " << i << "/" << k;
    } catch (const UserError& e) {
      const std::string msg = e.what();
      // The option as the front end spells it (the library's "shard" here; "--shard" on the
      // command line: RunnerLock.ShardThatDoesNotFitIsRefusedBeforeTheStore).
      EXPECT_EQ(msg.rfind(front_option(FrontOption::kShard) + (" " + std::string(text)), 0), 0u)
          << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
    EXPECT_EQ(i, 7);
    EXPECT_EQ(k, 9);
  }
}

TEST_F(RunnerLock, ShardThatDoesNotFitIsRefusedBeforeTheStore) {
  for (const char* shard : {"3/4294967296", "0/4294967297", "1/4294967298"}) {
    const std::string out = path(std::string("o") + shard[0]);
    const auto r = test::cli_run("run " + spec_ + " --out " + out + " --shard " + shard + " -q");
    EXPECT_EQ(r.exit_code, 2) << shard << ": " << r.out;
    EXPECT_NE(r.out.find("--shard " + std::string(shard)), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out)) << shard << ": the output directory was created";
  }
}

}  // namespace
}  // namespace attn
