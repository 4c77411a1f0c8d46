// The experiment engine end to end through the CLI: results identical across --jobs,
// shards + merge equal one run, resume after SIGKILL loses and repeats nothing, a changed
// spec is refused, failures are recorded without stopping the sweep, CSV agrees with SQLite,
// a backgrounded runner goes on through a SIGINT, a run stopped from outside is not stored.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include "test_paths.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <thread>
#include <tuple>

#include "cli_helpers.h"
#include "core/rng.h"
#include "experiment/experiment_dir.h"
#include "experiment/store.h"
#include "kept_variable.h"

extern char** environ;

namespace attn {
namespace {

namespace fs = std::filesystem;

// 2 tasks-settings x 3 n x 4 seeds = 24 quick runs (qsa with the linear baseline).
const char* kSpec = R"(
[experiment]
name = "engine_test"
seeds = 4
[task]
name = "qsa"
N = 6
q = 2
d_out = 2
[model]
name = "linear"
[eval]
n = 200
[sweep]
"train.n" = [100, 200, 400]
"model.lambda" = [0.001, 0.1]
[[plot]]
metric = "test_nmse"
x = "train.n"
line = "model.lambda"
)";

class Engine : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("attnlab_engine_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    spec_ = path("spec.toml");
    test::file_write(spec_, kSpec);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Metrics of every ok run by id, without timing-dependent values.
  std::map<std::string, std::vector<std::pair<std::string, double>>> results(
      const std::string& out) {
    std::map<std::string, std::vector<std::pair<std::string, double>>> by_id;
    for (const auto& r : ResultsStore(out + "/results.sqlite").load_runs()) {
      EXPECT_EQ(r.status, "ok") << r.error;
      std::vector<std::pair<std::string, double>> metrics;
      for (const auto& m : r.metrics)
        if (m.first != "fit_seconds") metrics.push_back(m);
      EXPECT_TRUE(by_id.emplace(r.run_id, metrics).second) << "duplicate run " << r.run_id;
    }
    return by_id;
  }

  fs::path dir_;
  std::string spec_;
};

TEST_F(Engine, ResultsDoNotDependOnJobs) {
  ASSERT_EQ(test::cli_run("run " + spec_ + " --out " + path("a") + " --jobs 1 -q").exit_code, 0);
  const auto r = test::cli_run("run " + spec_ + " --out " + path("b") + " --jobs 2 -q");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("24 runs: 24 ran (24 ok, 0 failed), 0 already done"), std::string::npos)
      << r.out;
  const auto a = results(path("a")), b = results(path("b"));
  EXPECT_EQ(a.size(), 24u);
  EXPECT_EQ(a, b);
}

TEST_F(Engine, ShardsMergedEqualOneRun) {
  ASSERT_EQ(test::cli_run("run " + spec_ + " --out " + path("whole") + " -q").exit_code, 0);
  for (int i = 0; i < 3; ++i) {
    const auto r = test::cli_run("run " + spec_ + " --out " + path("s" + std::to_string(i)) +
                                 " --shard " + std::to_string(i) + "/3 -q");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("8 runs in shard " + std::to_string(i) + "/3"), std::string::npos)
        << r.out;
  }
  const auto m = test::cli_run("merge " + path("merged") + " " + path("s0") + " " + path("s1") +
                               " " + path("s2"));
  ASSERT_EQ(m.exit_code, 0) << m.out;
  EXPECT_EQ(results(path("merged")), results(path("whole")));
  // Merging again adds nothing; a shard of another spec is refused.
  ASSERT_EQ(test::cli_run("merge " + path("merged") + " " + path("s1")).exit_code, 0);
  EXPECT_EQ(results(path("merged")).size(), 24u);
  ASSERT_EQ(
      test::cli_run("run " + spec_ + " --out " + path("other") + " --set train.n=50 -q").exit_code,
      0);
  const auto bad = test::cli_run("merge " + path("m2") + " " + path("s0") + " " + path("other"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("different spec"), std::string::npos) << bad.out;
  // Bad --shard values.
  EXPECT_EQ(test::cli_run("run " + spec_ + " --out " + path("x") + " --shard 3/3").exit_code, 2);
  EXPECT_EQ(test::cli_run("run " + spec_ + " --out " + path("x") + " --shard 1").exit_code, 2);
}

// Processes (other than this test) whose command line mentions `needle`.
int processes_mentioning(const std::string& needle) {
  int count = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline;
    try {
      cmdline = test::file_read(e.path().string() + "/cmdline");
    } catch (const std::exception&) {  // the process ended while the scan read it
      continue;
    }
    for (char& c : cmdline)
      if (c == '\0') c = ' ';
    if (cmdline.find(needle) != std::string::npos && std::stoi(name) != getpid()) ++count;
  }
  return count;
}

// Runs stored in DIR so far (0 while the store is missing or being created).
size_t runs_stored(const std::string& dir) {
  const std::string store = dir + "/results.sqlite";
  if (!fs::exists(store)) return 0;
  try {
    return ResultsStore(store, StoreAccess::kRead).load_runs().size();
  } catch (const std::exception&) {
    return 0;
  }
}

TEST_F(Engine, ResumeAfterSigkillLosesAndRepeatsNothing) {
  ASSERT_EQ(test::cli_run("run " + spec_ + " --out " + path("ref") + " --jobs 2 -q").exit_code, 0);
  const std::string out = path("killed");
  Rng rng(2024, "test.kill_delays", 0);
  // Each round kills the runner (SIGKILL) once the store holds a random number of runs short
  // of all 24, so every kill lands mid-sweep whatever the machine's speed, and the next round
  // resumes.
  int killed_mid_sweep = 0;
  for (int round = 0; round < 6; ++round) {
    const size_t before = runs_stored(out);
    if (before >= 23) break;
    const size_t target = before + 1 + rng.uniform_int(23 - before);  // in [before + 1, 23]
    std::vector<std::string> args = {test_cli_path(), "run", spec_, "--out", out,
                                     "--jobs",        "2",   "-q"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid;
    ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
    int status = 0;
    bool exited = false;
    while (runs_stored(out) < target) {
      if (waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!exited) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
    const size_t stored = runs_stored(out);
    if (WIFSIGNALED(status) && stored > before && stored < 24) ++killed_mid_sweep;
    // Workers die with the runner.
    for (int wait = 0; wait < 50 && processes_mentioning(out) > 0; ++wait)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(processes_mentioning(out), 0) << "workers outlived the killed runner";
  }
  EXPECT_GT(killed_mid_sweep, 0)
      << "no kill left part of the sweep stored; the test did not exercise resume";
  const auto r = test::cli_run("run " + spec_ + " --out " + out + " -q");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(results(out), results(path("ref")));
  // Nothing left to do on a further run.
  const auto again = test::cli_run("run " + spec_ + " --out " + out + " -q");
  EXPECT_NE(again.out.find("0 ran (0 ok, 0 failed), 24 already done"), std::string::npos)
      << again.out;
}

// Runs of a few seconds each (fresh-sample attention training), for signals sent mid-run.
const char* kSlowSpec = R"(
[experiment]
name = "slow_runs"
seeds = 4
[task]
name = "qsa"
N = 8
q = 2
[model]
name = "attention"
[train]
n = 0
steps = 2000
batch = 64
[eval]
n = 64
)";

// The parent pid of process `pid` (field 4 of /proc/PID/stat), or -1.
pid_t parent_of(pid_t pid) {
  const std::string stat = test::file_read("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(stat.substr(close + 2));
  std::string state;
  pid_t parent = -1;
  rest >> state >> parent;
  return parent;
}

// The run workers of runner `runner`: its grandchildren (runner -> fork server -> workers).
std::vector<pid_t> workers_of(pid_t runner) {
  std::vector<pid_t> workers;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    try {
      const pid_t parent = parent_of(pid);
      if (parent > 0 && parent != runner && parent_of(parent) == runner) workers.push_back(pid);
    } catch (const std::exception&) {  // the process ended while we read it
    }
  }
  return workers;
}

// Starts `attnlab ARGS` in a process group of its own, SIGINT ignored when `ignore_sigint`
// (what a non-interactive shell does for `attnlab run ... &`); its stdout and stderr go to
// `log`.
pid_t spawn_runner(const std::vector<std::string>& args, bool ignore_sigint,
                   const std::string& log) {
  std::vector<std::string> all = {test_cli_path()};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&files, 1, 2);
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  if (ignore_sigint) sigaction(SIGINT, &ignore, &old);  // inherited through exec
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &files, &attr, argv.data(), environ);
  if (ignore_sigint) sigaction(SIGINT, &old, nullptr);
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  EXPECT_EQ(rc, 0);
  return pid;
}

// Waits (at most a minute) until runner `pid` has `count` workers; false if it never does.
bool await_workers(pid_t pid, size_t count) {
  for (int k = 0; k < 6000; ++k) {
    if (workers_of(pid).size() >= count) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST_F(Engine, ABackgroundedRunnerAndItsWorkersGoOnThroughAProcessGroupSigint) {
  test::file_write(spec_, kSlowSpec);
  const std::string out = path("bg");
  const pid_t pid = spawn_runner({"run", spec_, "--out", out, "--jobs", "2", "-q"},
                                 /*ignore_sigint=*/true, path("bg.log"));
  ASSERT_TRUE(await_workers(pid, 2)) << test::file_read(path("bg.log"));
  ASSERT_EQ(kill(-pid, SIGINT), 0);  // the whole group, as a terminal or a script would
  int status = 0;
  waitpid(pid, &status, 0);
  const std::string log = test::file_read(path("bg.log"));
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << ": " << log;
  EXPECT_NE(log.find("4 ran (4 ok, 0 failed)"), std::string::npos) << log;
  for (const auto& r : ResultsStore(out + "/results.sqlite").load_runs())
    EXPECT_EQ(r.status, "ok") << r.error;
}

TEST_F(Engine, ARunStoppedFromOutsideIsNotStoredAndTheSameCommandRunsIt) {
  test::file_write(spec_, kSlowSpec);
  const std::string out = path("stopped");
  const pid_t pid = spawn_runner({"run", spec_, "--out", out, "--jobs", "2", "-q"},
                                 /*ignore_sigint=*/false, path("stopped.log"));
  ASSERT_TRUE(await_workers(pid, 1)) << test::file_read(path("stopped.log"));
  ASSERT_EQ(kill(workers_of(pid).front(), SIGTERM), 0);  // e.g. a batch system's time limit
  int status = 0;
  waitpid(pid, &status, 0);
  const std::string log = test::file_read(path("stopped.log"));
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << ": " << log;
  EXPECT_NE(log.find("3 ran (3 ok, 0 failed)"), std::string::npos) << log;
  EXPECT_NE(log.find("was stopped from outside: the worker process was killed by signal 15"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("1 run was stopped from outside (a signal) and not stored; run the same "
                     "command to run it"),
            std::string::npos)
      << log;
  EXPECT_EQ(runs_stored(out), 3u);
  const auto again = test::cli_run("run " + spec_ + " --out " + out + " -q");
  EXPECT_NE(again.out.find("1 ran (1 ok, 0 failed), 3 already done"), std::string::npos)
      << again.out;
}

// The worker server dying under a runner (killed, or crashed) is a fault, not bad input:
// exit 1 with "internal error", saying to run again; the same command then resumes.
TEST_F(Engine, AWorkerServerThatDiesIsAnInternalErrorAndTheSameCommandResumes) {
  test::file_write(spec_, kSlowSpec);
  const std::string out = path("server");
  const pid_t pid = spawn_runner({"run", spec_, "--out", out, "--jobs", "2", "-q"},
                                 /*ignore_sigint=*/false, path("server.log"));
  ASSERT_TRUE(await_workers(pid, 1)) << test::file_read(path("server.log"));
  const std::vector<pid_t> workers = workers_of(pid);
  ASSERT_FALSE(workers.empty());
  const pid_t server = parent_of(workers.front());
  ASSERT_GT(server, 0);
  ASSERT_EQ(kill(server, SIGKILL), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  const std::string log = test::file_read(path("server.log"));
  ASSERT_TRUE(WIFEXITED(status)) << status << ": " << log;
  EXPECT_EQ(WEXITSTATUS(status), 1) << log;
  EXPECT_NE(log.find("internal error: the worker server process (pid " + std::to_string(server) +
                     ") died; run again to resume the runs not stored"),
            std::string::npos)
      << log;
  const auto again = test::cli_run("run " + spec_ + " --out " + out + " -q");
  EXPECT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(runs_stored(out), 4u);
}

// kSlowSpec as lockstep groups: 60 seeds, 3 values of m sharing a worker per seed, 180 runs
// of 150 steps. (With 40 seeds, on an Intel Xeon where OpenBLAS runs its AVX-512 kernels, the 120
// runs were all stored after 47 kills in one of four runs beside the other Engine tests.)
constexpr size_t kCampaignRuns = 180;
const std::vector<std::string> kCampaignSets = {
    "--set", "experiment.seeds=60", "--set", "train.steps=150",
    "--set", "train.batch=32",      "--set", "sweep.model.m=[4, 8, 16]"};

// Every file below DIR whose name marks it temporary (a ".tmp" part, or a journal of SQLite's
// rollback mode).
std::vector<std::string> temporary_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find(".tmp") != std::string::npos || name.find("-journal") != std::string::npos)
      out.push_back(fs::relative(e.path(), dir).string());
  }
  return out;
}

// The kill campaign of issue #34 (label heavy: 13-40 s on 2 cores). Rounds of `attnlab run` on a
// sweep of 180 runs in 60 lockstep groups, each round SIGKILLing, once it has stored a new run,
// in turn: the runner; the worker server (the runner then exits 1, "internal error"); a group's
// worker (its runs are stored as failed, as for the OOM killer; the runner goes on) and then the
// runner. After 50 or more kills, the same command with --retry-failed finishes the sweep: every
// run, metric and series point equals an uninterrupted run's but for timings, no process is
// left and no temporary file.
TEST_F(Engine, KillCampaignOfFiftySigkillsChangesNoStoredValue) {
  test::file_write(spec_, kSlowSpec);
  const std::string ref = path("ref"), out = path("killed");
  std::string sets;
  for (const auto& a : kCampaignSets) sets += " '" + a + "'";
  ASSERT_EQ(test::cli_run("run " + spec_ + " --out " + ref + sets + " --jobs 2 -q").exit_code, 0);
  std::vector<std::string> args = {"run", spec_, "--out", out, "--jobs", "2", "-q"};
  args.insert(args.end(), kCampaignSets.begin(), kCampaignSets.end());
  int kills = 0, rounds = 0, runner_kills = 0, server_kills = 0, worker_kills = 0;
  while (kills < 50) {
    const size_t before = runs_stored(out);
    ASSERT_LT(before, kCampaignRuns) << "the sweep finished before 50 kills (" << kills << ")";
    const pid_t pid = spawn_runner(args, /*ignore_sigint=*/false, path("round.log"));
    int status = 0;
    bool exited = false;
    while (!exited && runs_stored(out) <= before) {
      exited = waitpid(pid, &status, WNOHANG) == pid;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ASSERT_FALSE(exited) << "the runner ended without storing a run: "
                         << test::file_read(path("round.log"));
    const std::vector<pid_t> workers = workers_of(pid);
    const int target = rounds++ % 3;
    if (target == 1 && !workers.empty()) {  // the worker server: the runner exits 1
      ASSERT_EQ(kill(parent_of(workers.front()), SIGKILL), 0);
      ++server_kills;
      ++kills;
      waitpid(pid, &status, 0);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1)
          << status << ": " << test::file_read(path("round.log"));
    } else {
      if (target == 2 && !workers.empty() && kill(workers.front(), SIGKILL) == 0) {
        ++worker_kills;
        ++kills;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (waitpid(pid, &status, WNOHANG) == 0) {
        ASSERT_EQ(kill(pid, SIGKILL), 0);
        ++runner_kills;
        ++kills;
        waitpid(pid, &status, 0);
      }
    }
    for (int wait = 0; wait < 100 && processes_mentioning(out) > 0; ++wait)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(processes_mentioning(out), 0) << "a process outlived round " << rounds;
  }
  std::printf(
      "[ campaign ] %d SIGKILLs in %d rounds: %d runners, %d worker servers, %d group "
      "workers; %zu of %zu runs stored before the last run\n",
      kills, rounds, runner_kills, server_kills, worker_kills, runs_stored(out), kCampaignRuns);
  EXPECT_GT(server_kills, 0);
  EXPECT_GT(worker_kills, 0);
  // A group worker killed by SIGKILL cannot be told from one the OOM killer ended: its runs
  // are stored as failed ("killed by signal 9 (Killed; out of memory?)"), and --retry-failed
  // runs them again.
  const auto last =
      test::cli_run("run " + spec_ + " --out " + out + sets + " --jobs 2 --retry-failed -q");
  ASSERT_EQ(last.exit_code, 0) << last.out;
  EXPECT_EQ(results(out), results(ref));
  // Every series point too (training curves), by run id.
  auto series = [](const std::string& dir) {
    std::map<std::string, std::vector<std::tuple<std::string, int64_t, double>>> by_id;
    for (const auto& r : ResultsStore(dir + "/results.sqlite").load_runs())
      for (const auto& p : r.series) by_id[r.run_id].emplace_back(p.series, p.step, p.value);
    return by_id;
  };
  EXPECT_EQ(series(out), series(ref));
  EXPECT_EQ(temporary_files(out), std::vector<std::string>{});
}

TEST_F(Engine, ChangedSpecIsRefusedUnlessForceNew) {
  ASSERT_EQ(test::cli_run("run " + spec_ + " --out " + path("o") + " -q").exit_code, 0);
  const auto r = test::cli_run("run " + spec_ + " --out " + path("o") + " --set eval.n=100 -q");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("holds results of a different spec"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--force-new"), std::string::npos) << r.out;
  const auto f =
      test::cli_run("run " + spec_ + " --out " + path("o") + " --set eval.n=100 --force-new -q");
  ASSERT_EQ(f.exit_code, 0) << f.out;
  EXPECT_NE(f.out.find("24 ran"), std::string::npos) << f.out;
  bool moved = false;
  for (const auto& e : fs::directory_iterator(path("o")))
    moved = moved || (e.path().filename().string().rfind("old-", 0) == 0 &&
                      fs::exists(e.path() / "results.sqlite"));
  EXPECT_TRUE(moved);
  // Adding a plot does not change the runs: accepted.
  test::file_write(spec_,
                   std::string(kSpec) + "[[plot]]\nmetric = \"test_mse\"\nx = \"train.n\"\n");
  EXPECT_EQ(
      test::cli_run("run " + spec_ + " --out " + path("o") + " --set eval.n=100 -q").exit_code, 0);
}

TEST_F(Engine, BadSpecWritesNothing) {
  test::file_write(spec_, std::string(kSpec) + "[sweep2]\n");
  const auto r = test::cli_run("run " + spec_ + " --out " + path("never"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("unknown section 'sweep2'"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(path("never")));
}

TEST_F(Engine, FailedRunsAreRecordedAndTheSweepGoesOn) {
  // 10^12 training samples cannot fit in memory: those runs fail, the others succeed.
  const auto overlap = test::cli_run("run " + spec_ + " --out " + path("f") +
                                     " --set 'sweep.train.n=[100, 1000000000000]'");
  EXPECT_EQ(overlap.exit_code, 2);  // the test set would overlap: refused before running
  EXPECT_NE(overlap.out.find("eval.first = 1000000000 overlaps"), std::string::npos) << overlap.out;
  const auto r = test::cli_run("run " + spec_ + " --out " + path("f") +
                               " --set 'sweep.train.n=[100, 1000000000000]' --set "
                               "eval.first=2000000000000 --set experiment.seeds=2 -q");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("8 ran (4 ok, 4 failed)"), std::string::npos) << r.out;
  int failed = 0;
  for (const auto& run : ResultsStore(path("f") + "/results.sqlite").load_runs())
    if (run.status == "failed") {
      ++failed;
      EXPECT_NE(run.error.find("memory"), std::string::npos) << run.error;
      EXPECT_TRUE(run.metrics.empty());
    }
  EXPECT_EQ(failed, 4);
  // Failed runs are not retried unless asked.
  const auto again = test::cli_run("run " + spec_ + " --out " + path("f") +
                                   " --set 'sweep.train.n=[100, 1000000000000]' --set "
                                   "eval.first=2000000000000 --set experiment.seeds=2 -q");
  EXPECT_NE(again.out.find("0 ran"), std::string::npos) << again.out;
  const auto retry =
      test::cli_run("run " + spec_ + " --out " + path("f") +
                    " --set 'sweep.train.n=[100, 1000000000000]' --set eval.first=2000000000000 "
                    "--set experiment.seeds=2 --retry-failed -q");
  EXPECT_NE(retry.out.find("4 ran (0 ok, 4 failed)"), std::string::npos) << retry.out;
}

TEST_F(Engine, CsvAgreesWithTheStore) {
  ASSERT_EQ(test::cli_run("run " + spec_ + " --out " + path("c") + " -q").exit_code, 0);
  const auto runs = ResultsStore(path("c") + "/results.sqlite").load_runs();
  std::istringstream csv(test::file_read(path("c") + "/results.csv"));
  std::string line;
  std::getline(csv, line);
  std::vector<std::string> header;
  {
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) header.push_back(cell);
  }
  ASSERT_GE(header.size(), 6u);
  EXPECT_EQ(header[0], "run_id");
  EXPECT_EQ(header[1], "seed");
  EXPECT_EQ(header[2], "status");
  EXPECT_EQ(header[3], "model.lambda");
  EXPECT_EQ(header[4], "train.n");
  size_t rows = 0;
  while (std::getline(csv, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
    const StoredRun& r = runs.at(rows++);
    EXPECT_EQ(cells[0], r.run_id);
    EXPECT_EQ(cells[1], std::to_string(r.seed));
    EXPECT_EQ(cells[4], r.param("train.n"));
    for (size_t c = 5; c < header.size() && c < cells.size(); ++c) {
      const double v = r.metric(header[c]);
      if (!std::isnan(v)) {
        EXPECT_EQ(std::stod(cells[c]), v) << header[c];
      }
    }
  }
  EXPECT_EQ(rows, runs.size());
  EXPECT_EQ(rows, 24u);
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

TEST_F(Engine, RunsNotInTheCurrentPlanAreLeftOutOfTheCsvAndSaidSo) {
  // A stored run whose id the current plan does not have (as after a parameter is added to a
  // model with its default: every resolved config, so every id, changes) stays in the store
  // but not in results.csv; run, export and merge say how many were left out.
  ASSERT_EQ(test::cli_run("run " + spec_ + " --out " + path("p") + " -q").exit_code, 0);
  {
    ResultsStore store(path("p") + "/results.sqlite");
    StoredRun stale = store.load_runs().front();
    stale.run_id = "00000000deadbeef";
    store.insert(stale);
    ASSERT_EQ(store.load_runs().size(), 25u);
    int64_t left_out = -1;
    EXPECT_EQ(experiment_plan_runs(store, &left_out).size(), 24u);
    EXPECT_EQ(left_out, 1);
  }
  const auto exported = test::cli_run("export " + path("p"));
  EXPECT_NE(exported.out.find("1 stored runs are not in the current plan"), std::string::npos)
      << exported.out;
  EXPECT_EQ(test::file_read(path("p") + "/results.csv").find("00000000deadbeef"),
            std::string::npos);
  const auto again = test::cli_run("run " + spec_ + " --out " + path("p") + " -q");
  EXPECT_NE(again.out.find("0 ran (0 ok, 0 failed), 24 already done"), std::string::npos)
      << again.out;
  EXPECT_NE(again.out.find("1 stored runs are not in the current plan"), std::string::npos)
      << again.out;
  const auto merged = test::cli_run("merge " + path("m") + " " + path("p"));
  EXPECT_NE(merged.out.find("1 stored runs are not in the current plan"), std::string::npos)
      << merged.out;
  EXPECT_EQ(test::file_read(path("m") + "/results.csv").find("00000000deadbeef"),
            std::string::npos);
}

TEST_F(Engine, ReproduceWritesAReportAndExitsByTheClaims) {
  // A private experiments/ folder: one spec whose claims hold and one that fails.
  const fs::path home = dir_ / "home";
  fs::create_directories(home / "experiments" / "mini");
  fs::create_directories(home / "scripts");
  fs::copy_file(fs::path(test_source_dir()) / "scripts" / "plot_results.py",
                home / "scripts" / "plot_results.py");
  test::file_write((home / "experiments" / "mini" / "a.toml").string(),
                   std::string(kSpec) +
                       "[[claim]]\nid = \"ok\"\ntext = \"more data helps\"\ntype = \"decreasing\"\n"
                       "metric = \"test_mse\"\nalong = \"train.n\"\n"
                       "where = { \"model.lambda\" = 0.001 }\n");
  test::file_write((home / "experiments" / "mini" / "b.toml").string(),
                   std::string(kSpec) +
                       "[[claim]]\nid = \"impossible\"\ntext = \"zero error\"\ntype = \"below\"\n"
                       "metric = \"test_mse\"\nthreshold = 0\n");
  // `attnlab reproduce ARGS` with the private folder as ATTNLAB_HOME.
  auto reproduce = [&](const std::string& args) {
    const test::KeptVariable attnlab_home("ATTNLAB_HOME");
    attnlab_home.set(home.c_str());
    return test::cli_run("reproduce " + args);
  };
  const auto r = reproduce("mini --out " + path("rep") + " -q");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("PASS engine_test/ok"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL engine_test/impossible"), std::string::npos) << r.out;
  const std::string md = test::file_read(path("rep") + "/report.md");
  EXPECT_NE(md.find("1 of 2 claims pass"), std::string::npos) << md;
  const std::string html = test::file_read(path("rep") + "/report.html");
  EXPECT_NE(html.find("data:image/png;base64,"), std::string::npos);  // figures embedded
  EXPECT_TRUE(fs::exists(path("rep") + "/a/figures/plot1.png"));
  EXPECT_TRUE(fs::exists(path("rep") + "/a/figures/data/plot1.json"));  // the numbers drawn
  // One runs line per section (both sections' specs are named engine_test).
  const std::string runs_line = "engine_test: 24 runs: 24 ran (24 ok, 0 failed), 0 already done";
  const size_t first = r.out.find(runs_line);
  ASSERT_NE(first, std::string::npos) << r.out;
  EXPECT_NE(r.out.find(runs_line, first + 1), std::string::npos) << r.out;
  // A group whose runs share their inputs: run groups by default, each point alone with
  // --no-groups, the same values either way.
  fs::create_directories(home / "experiments" / "shared");
  test::file_write((home / "experiments" / "shared" / "g.toml").string(),
                   "[experiment]\nname = \"grouped\"\nseeds = 1\n[task]\nname = \"rf_target\"\n"
                   "d = 4\nN = 4\n[model]\nname = \"rfa\"\nheads = 16\n[eval]\nn = 200\n"
                   "[sweep]\n\"train.n\" = [64, 128, 256]\n");
  const auto grouped = reproduce("shared --out " + path("rep_grouped") + " -q");
  const auto single = reproduce("shared --no-groups --out " + path("rep_single") + " -q");
  ASSERT_EQ(grouped.exit_code, 0) << grouped.out;
  ASSERT_EQ(single.exit_code, 0) << single.out;
  EXPECT_NE(grouped.out.find("grouped: 3 runs: 3 ran (3 ok, 0 failed); 3 in 1 run group,"),
            std::string::npos)
      << grouped.out;
  EXPECT_NE(single.out.find("grouped: 3 runs: 3 ran (3 ok, 0 failed), 0 already done"),
            std::string::npos)
      << single.out;
  const auto grouped_values = results(path("rep_grouped") + "/g");
  EXPECT_EQ(grouped_values.size(), 3u);
  EXPECT_EQ(grouped_values, results(path("rep_single") + "/g"));
  // --report-only runs nothing: in a fresh directory every section says 0 runs are stored and
  // the claims are undecided for want of runs (exit 3); on the finished directory it gives the
  // same verdicts.
  const auto empty = reproduce("mini --report-only --out " + path("rep_empty") + " -q");
  const auto again = reproduce("mini --report-only --out " + path("rep") + " -q");
  EXPECT_EQ(empty.exit_code, 3) << empty.out;
  EXPECT_EQ(empty.out.find("PASS engine_test/ok"), std::string::npos) << empty.out;
  EXPECT_NE(empty.out.find("INCONCLUSIVE engine_test/ok"), std::string::npos) << empty.out;
  EXPECT_NE(empty.out.find("[partial: 0 of"), std::string::npos) << empty.out;  // on each verdict
  EXPECT_EQ(again.out.find("[partial:"), std::string::npos) << again.out;
  const std::string empty_md = test::file_read(path("rep_empty") + "/report.md");
  EXPECT_NE(empty_md.find("partial: 0 of"), std::string::npos) << empty_md;
  EXPECT_EQ(ResultsStore(path("rep_empty") + "/a/results.sqlite").load_runs().size(), 0u);
  EXPECT_EQ(again.exit_code, 1) << again.out;
  EXPECT_NE(again.out.find("PASS engine_test/ok"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("FAIL engine_test/impossible"), std::string::npos) << again.out;
  EXPECT_EQ(test::file_read(path("rep") + "/report.md").find("partial:"), std::string::npos);
  // A section whose directory holds another spec's results: its claims are undecided with the
  // reason, the other sections are still reported.
  ASSERT_EQ(test::cli_run("run " + spec_ + " --out " + path("rep_mixed") + "/a --set eval.n=50 -q")
                .exit_code,
            0);
  fs::copy(path("rep") + "/b", path("rep_mixed") + "/b", fs::copy_options::recursive);
  const auto mixed = reproduce("mini --report-only --out " + path("rep_mixed") + " -q");
  EXPECT_EQ(mixed.exit_code, 1) << mixed.out;
  EXPECT_NE(mixed.out.find("not reported:"), std::string::npos) << mixed.out;
  EXPECT_NE(mixed.out.find("INCONCLUSIVE engine_test/ok"), std::string::npos) << mixed.out;
  EXPECT_NE(mixed.out.find("engine_test/impossible"), std::string::npos) << mixed.out;
  // Unknown group: a user error listing the groups.
  const auto bad = reproduce("nope");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("available: mini"), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace attn
