// Run groups under MPI end to end (ctest label "mpi"; experiment/sweep_mpi.h, kGroup): rank 0
// hands each run group to one worker rank whole, the stored results equal the local grouped
// and run-by-run (--no-groups) paths', --no-groups is respected under --mpi, each outcome
// of a group is stored as it arrives, a killed group process fails only the group's
// unfinished runs, and a job killed mid-group keeps the group's finished runs.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "mpi_test_helpers.h"

namespace attn {
namespace {

using namespace mpi_test;

// A ridge group (rfa at two training sizes: the same inputs and features), a lockstep group
// (two gradient-trained models on fresh qsa samples, the same [train]) and a point of its own
// (the mean baseline): 5 runs in 3 units on 2 worker ranks, so one rank runs two. A swept key
// must exist for every point's model, so the lockstep group varies the model (attention,
// mlp) rather than model.m, and keeps the default [train] (2000 steps of 256 samples).
const char* kGroupsSpec = R"(
[experiment]
name = "mpi_groups"
seeds = 1
[task]
name = "rf_target"
[task.rf_target]
d = 4
N = 4
[task.qsa]
N = 4
q = 1
d_out = 2
[model]
name = "rfa"
[model.rfa]
heads = 8
[model.attention]
m = 2
[model.mlp]
width = 8
[eval]
n = 200
[[sweep.zip]]
"task.name" = ["rf_target", "rf_target", "rf_target", "qsa", "qsa"]
"model.name" = ["rfa", "rfa", "mean", "attention", "mlp"]
"train.n" = [200, 100, 200, 0, 0]
)";

// One ridge group of 5 runs of a few tenths of a second each (each size forms its own Gram
// and spectrum), so the group's process can be killed between two of its runs.
const char* kSlowGroupSpec = R"(
[experiment]
name = "mpi_slow_group"
seeds = 1
[task]
name = "rf_target"
d = 4
N = 4
target = "pair_power"
p = 2
[model]
name = "rfa"
heads = 128
[train]
lambdas = [1e-4, 1e-2]
[eval]
n = 500
[sweep]
"train.n" = [3000, 2600, 2200, 1800, 1400]
)";

class MpiGroups : public MpiTest {
 protected:
  // Starts the slow group under mpirun and, once the first of its runs is stored while its
  // process still runs, kills (SIGKILL) the group's process (kill_rank false) or the worker
  // rank running it (kill_rank true). Returns mpirun's exit code; *seen gets every rank and
  // run process of the job.
  int run_and_kill_mid_group(const std::string& spec, const std::string& out, bool kill_rank,
                             std::set<pid_t>* seen) {
    const pid_t mpirun = spawn_shell(kMpirun + attnlab() + " run " + spec + " --out " + out +
                                     " --mpi -q > " + out + ".log 2>&1");
    EXPECT_GT(mpirun, 0);
    if (mpirun <= 0) return -1;
    bool killed = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!killed && std::chrono::steady_clock::now() < deadline) {
      for (pid_t rank : children_of(mpirun)) {
        seen->insert(rank);
        const auto group = children_of(rank);  // the one group's process, on one rank
        seen->insert(group.begin(), group.end());
        if (group.empty()) continue;
        if (!(fs::exists(out + "/results.sqlite") && !runs_of(out).empty())) continue;
        killed = kill(kill_rank ? rank : group.front(), SIGKILL) == 0;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_TRUE(killed) << "no group process seen with a run stored: "
                        << test::file_read(out + ".log");
    return wait_exit_code(mpirun);
  }
};

TEST_F(MpiGroups, GroupsRunWholeOnARankAndStoreWhatTheRunByRunPathStores) {
  const std::string s = spec(kGroupsSpec);
  const auto mpi =
      test::shell(kMpirun + attnlab() + " run " + s + " --out " + path("mpi") + " --mpi -q");
  ASSERT_EQ(mpi.exit_code, 0) << mpi.out;
  // The ridge group and the lockstep group each went to a rank whole.
  EXPECT_NE(mpi.out.find("5 runs on 3 MPI ranks: 5 ran (5 ok, 0 failed; 4 in 2 run groups)"),
            std::string::npos) << mpi.out;
  const auto single = test::cli_run("run " + s + " --out " + path("single") + " --no-groups -q");
  ASSERT_EQ(single.exit_code, 0) << single.out;
  EXPECT_EQ(single.out.find("run groups"), std::string::npos) << single.out;
  const auto grouped = test::cli_run("run " + s + " --out " + path("grouped") + " --jobs 2 -q");
  ASSERT_EQ(grouped.exit_code, 0) << grouped.out;
  EXPECT_NE(grouped.out.find("4 in 2 run groups"), std::string::npos) << grouped.out;
  // --no-groups under MPI: one point at a time.
  const auto mpi_single = test::shell(kMpirun + attnlab() + " run " + s + " --out " +
                                      path("mpi_single") + " --mpi --no-groups -q");
  ASSERT_EQ(mpi_single.exit_code, 0) << mpi_single.out;
  EXPECT_NE(mpi_single.out.find("5 ran (5 ok, 0 failed), 0 already done"), std::string::npos)
      << mpi_single.out;

  // Every metric bit for bit, and results.csv cell for cell outside the timing columns.
  const auto reference = runs_of(path("single"));
  ASSERT_EQ(reference.size(), 5u);
  const std::string csv = csv_without_timings(test::file_read(path("single") + "/results.csv"));
  EXPECT_NE(csv.find("test_nmse"), std::string::npos);
  for (const char* dir : {"mpi", "grouped", "mpi_single"}) {
    SCOPED_TRACE(dir);
    expect_same_runs(reference, runs_of(path(dir)));
    EXPECT_EQ(csv_without_timings(test::file_read(path(dir) + "/results.csv")), csv);
  }
}

// The group's process killed between two runs: the runs it finished are stored ok (each was
// stored as it arrived), the others failed as the local runner fails them, the job goes on,
// and --retry-failed completes the group with the local results.
TEST_F(MpiGroups, KilledGroupProcessFailsOnlyItsUnfinishedRuns) {
  const std::string s = spec(kSlowGroupSpec), out = path("mpi");
  std::set<pid_t> seen;
  EXPECT_EQ(run_and_kill_mid_group(s, out, false, &seen), 0) << test::file_read(out + ".log");
  const auto after = runs_of(out);
  ASSERT_EQ(after.size(), 5u);
  int failed = 0;
  for (const auto& [id, run] : after)
    if (run.status != "ok") {
      ++failed;
      EXPECT_NE(run.error.find("killed by signal 9"), std::string::npos) << run.error;
      EXPECT_NE(run.error.find("(in a run group)"), std::string::npos) << run.error;
    }
  EXPECT_GE(failed, 1);
  EXPECT_LE(failed, 4);
  const auto retry = test::shell(kMpirun + attnlab() + " run " + s + " --out " + out +
                                 " --mpi -q --retry-failed");
  ASSERT_EQ(retry.exit_code, 0) << retry.out;
  const std::string n = std::to_string(failed);
  EXPECT_NE(retry.out.find(n + " ran (" + n + " ok, 0 failed"),
            std::string::npos) << retry.out;
  const auto one = test::cli_run("run " + s + " --out " + path("one") + " --jobs 1 -q");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  expect_same_runs(runs_of(path("one")), runs_of(out));
}

// The rank running the group killed between two runs: mpirun ends the job, the group's
// finished runs are kept, and the same command again runs only the missing ones.
TEST_F(MpiGroups, JobKilledMidGroupKeepsTheGroupsFinishedRuns) {
  const std::string s = spec(kSlowGroupSpec), out = path("mpi");
  std::set<pid_t> seen;
  EXPECT_NE(run_and_kill_mid_group(s, out, true, &seen), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  for (pid_t pid : seen) EXPECT_FALSE(alive(pid)) << "process " << pid << " of the job is left";
  const auto partial = runs_of(out);
  EXPECT_GE(partial.size(), 1u);
  EXPECT_LT(partial.size(), 5u);
  for (const auto& [id, run] : partial) EXPECT_EQ(run.status, "ok") << run.error;
  const auto again =
      test::shell(kMpirun + attnlab() + " run " + s + " --out " + out + " --mpi -q");
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find(std::to_string(5 - partial.size()) + " ran"), std::string::npos)
      << again.out;
  EXPECT_NE(again.out.find(std::to_string(partial.size()) + " already done"), std::string::npos)
      << again.out;
  const auto one = test::cli_run("run " + s + " --out " + path("one") + " --jobs 1 -q");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  expect_same_runs(runs_of(path("one")), runs_of(out));
}

}  // namespace
}  // namespace attn
