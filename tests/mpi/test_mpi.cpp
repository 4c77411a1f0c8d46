// MPI end to end (ctest label "mpi"): `mpirun -np 3 attnlab run ... --mpi` stores the same
// runs as `--jobs 1`, survives a run's process being killed, loses only the current run
// when a whole worker rank dies, and train.distributed ridge fits equal local fits.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "experiment/dir_lock.h"
#include "mpi_test_helpers.h"

namespace attn {
namespace {

// 2 × 2 grid × 3 seeds of the linear baseline, and 2 rfa runs (ridge over a λ grid).
const char* kSweepSpec = R"(
[experiment]
name = "mpi_sweep"
seeds = 3
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
"train.n" = [100, 200]
"model.lambda" = [0.001, 0.1]
)";

// Runs of a few tenths of a second each, so that one can be killed while it runs.
const char* kSlowSpec = R"(
[experiment]
name = "mpi_slow"
seeds = 2
[task]
name = "rf_target"
d = 4
N = 4
target = "pair_power"
p = 2
[model]
name = "rfa"
heads = 64
[train]
n = 3000
lambdas = [1e-4, 1e-2]
[eval]
n = 500
[sweep]
"model.heads" = [64, 96, 128]
)";

// Every ridge form: primal (P < n), dual on features, kernel; λ chosen on validation,
// with and without refit; refit on the kernel.
const char* kDistributedSpec = R"(
[experiment]
name = "mpi_distributed"
seeds = 1
[task]
name = "rf_target"
d = 4
N = 4
target = "pair_power"
p = 2
[model]
name = "rfa"
[train]
n = 301
lambdas = [1e-5, 1e-3, 1e-1]
[eval]
n = 400
[[sweep.zip]]
"model.name" = ["rfa", "rfa", "rfa", "rfa", "rfa_kernel", "rfa_kernel", "rfmlp"]
"model.heads" = [8, 8, 200, 200, 0, 0, 8]
"train.solver" = ["primal", "primal", "dual", "dual", "auto", "auto", "auto"]
"train.refit" = [false, true, false, true, false, true, false]
)";

using namespace mpi_test;
using Mpi = MpiTest;

TEST_F(Mpi, SweepStoresTheSameRunsAsOneProcess) {
  const std::string s = spec(kSweepSpec);
  auto one = test::cli_run("run " + s + " --out " + path("one") + " --jobs 1 -q");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  const auto t0 = std::chrono::steady_clock::now();
  auto mpi = test::shell(kMpirun + attnlab() + " run " + s + " --out " + path("mpi") +
                         " --mpi -q");
  ASSERT_EQ(mpi.exit_code, 0) << mpi.out;
  EXPECT_NE(mpi.out.find("12 runs on 3 MPI ranks: 12 ran (12 ok, 0 failed)"), std::string::npos)
      << mpi.out;
  expect_same_runs(runs_of(path("one")), runs_of(path("mpi")));
  // The CSV tables agree outside the timing columns.
  const std::string csv_one = test::file_read(path("one") + "/results.csv");
  EXPECT_EQ(csv_without_timings(csv_one),
            csv_without_timings(test::file_read(path("mpi") + "/results.csv")));
  EXPECT_NE(csv_one.find("wall_seconds"), std::string::npos);
  // Resume under MPI: nothing left to do.
  mpi = test::shell(kMpirun + attnlab() + " run " + s + " --out " + path("mpi") + " --mpi -q");
  ASSERT_EQ(mpi.exit_code, 0) << mpi.out;
  EXPECT_NE(mpi.out.find("0 ran (0 ok, 0 failed), 12 already done"), std::string::npos) << mpi.out;
  std::printf("two MPI sweeps of 12 runs: %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

TEST_F(Mpi, BadSpecIsOneLineAndStopsEveryRank) {
  const std::string s = spec("[experiment]\nname = \"x\"\n[task]\nname = \"qsa\"\nN = 2\nq = 5\n"
                             "[model]\nname = \"linear\"\n");
  const auto r = test::shell(kMpirun + attnlab() + " run " + s + " --out " + path("o") +
                             " --mpi -q");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("attnlab: error: "), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(path("o/results.sqlite")));
  const auto j = test::shell(kMpirun + attnlab() + " run " + spec(kSweepSpec) + " --out " +
                             path("j") + " --mpi -q --jobs 2");
  EXPECT_NE(j.exit_code, 0);
  EXPECT_NE(j.out.find("--jobs does not combine with --mpi"), std::string::npos) << j.out;
}

// Rank 0 alone takes the directory's lock: a directory held by another runner stops every
// rank with one line (no rank waits forever), and once it is free the sweep runs.
TEST_F(Mpi, LockedDirectoryStopsEveryRank) {
  const std::string s = spec(kSweepSpec), out = path("o");
  fs::create_directories(out);
  {
    const DirLock held(out);
    const auto r = test::shell(kMpirun + attnlab() + " run " + s + " --out " + out + " --mpi -q");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(
        r.out.find(out + " is in use by another attnlab runner (pid " + std::to_string(getpid())),
        std::string::npos)
        << r.out;
    EXPECT_FALSE(fs::exists(out + "/results.sqlite"));
  }
  const auto r = test::shell(kMpirun + attnlab() + " run " + s + " --out " + out + " --mpi -q");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("12 ran (12 ok, 0 failed)"), std::string::npos) << r.out;
}

// Kills the process of one run while it runs (as the out-of-memory killer would): the run
// is stored as failed, the sweep goes on, and --retry-failed completes it. A run that has
// already sent its result is done, and a kill in the moment before it exits fails nothing
// (core/child_process.h): an attempt where the kill landed there is made again, in a new
// directory, up to three times.
TEST_F(Mpi, KilledRunIsSurvived) {
  const std::string s = spec(kSlowSpec);
  std::string dir;
  int failed = 0;
  for (int attempt = 0; attempt < 3 && failed == 0; ++attempt) {
    dir = path("mpi" + std::to_string(attempt));
    const pid_t mpirun = spawn_shell(kMpirun + attnlab() + " run " + s + " --out " + dir +
                                     " --mpi -q > " + path("log") + " 2>&1");
    ASSERT_GT(mpirun, 0);
    bool killed = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!killed && std::chrono::steady_clock::now() < deadline) {
      for (pid_t rank : children_of(mpirun))
        for (pid_t run : children_of(rank))
          if (!killed && kill(run, SIGKILL) == 0) killed = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(killed) << "no run process seen";
    EXPECT_EQ(wait_exit_code(mpirun), 0) << test::file_read(path("log"));
    const auto after = runs_of(dir);
    ASSERT_EQ(after.size(), 6u);
    for (const auto& [id, run] : after)
      if (run.status != "ok") {
        ++failed;
        EXPECT_NE(run.error.find("killed by signal 9"), std::string::npos) << run.error;
      }
  }
  EXPECT_EQ(failed, 1);
  auto retry =
      test::shell(kMpirun + attnlab() + " run " + s + " --out " + dir + " --mpi -q --retry-failed");
  ASSERT_EQ(retry.exit_code, 0) << retry.out;
  EXPECT_NE(retry.out.find("1 ran (1 ok, 0 failed), 5 already done"), std::string::npos)
      << retry.out;
  auto one = test::cli_run("run " + s + " --out " + path("one") + " --jobs 2 -q");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  expect_same_runs(runs_of(path("one")), runs_of(dir));
}

// Kills a whole worker rank mid-run: mpirun ends the job, the runs finished before are
// kept, and the same command again completes the sweep with the same results.
TEST_F(Mpi, DeadRankLosesOnlyItsCurrentRun) {
  const std::string s = spec(kSlowSpec);
  const pid_t mpirun = spawn_shell(kMpirun + attnlab() + " run " + s + " --out " + path("mpi") +
                                   " --mpi -q > " + path("log") + " 2>&1");
  ASSERT_GT(mpirun, 0);
  bool killed = false;
  std::set<pid_t> seen;  // every rank and run process of the job
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  // Wait until some runs are stored, then kill a rank that is running one.
  while (!killed && std::chrono::steady_clock::now() < deadline) {
    const bool some_stored =
        fs::exists(path("mpi/results.sqlite")) && runs_of(path("mpi")).size() >= 2;
    for (pid_t rank : children_of(mpirun)) {
      seen.insert(rank);
      const auto runs = children_of(rank);
      seen.insert(runs.begin(), runs.end());
      if (!killed && some_stored && !runs.empty() && kill(rank, SIGKILL) == 0) killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(killed) << "no busy worker rank seen";
  EXPECT_NE(wait_exit_code(mpirun), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  for (pid_t pid : seen) EXPECT_FALSE(alive(pid)) << "process " << pid << " of the job is left";
  const auto partial = runs_of(path("mpi"));
  EXPECT_GE(partial.size(), 2u);
  EXPECT_LT(partial.size(), 6u);
  for (const auto& [id, run] : partial) EXPECT_EQ(run.status, "ok") << run.error;
  auto again = test::shell(kMpirun + attnlab() + " run " + s + " --out " + path("mpi") +
                           " --mpi -q");
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find(std::to_string(6 - partial.size()) + " ran"), std::string::npos)
      << again.out;
  auto one = test::cli_run("run " + s + " --out " + path("one") + " --jobs 2 -q");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  expect_same_runs(runs_of(path("one")), runs_of(path("mpi")));
}

// The probes a spec names reach the worker ranks (with the point's text) and log there what
// they log in one process, for a group and for runs alone.
TEST_F(Mpi, ProbesRunOnWorkerRanksAsInOneProcess) {
  // MLPs of widths 3, 7, 8 with the rank_pair probe (analysis/probes.h): a lockstep group, and
  // with --no-groups one run per worker rank.
  const std::string s = std::string(test_source_dir()) + "/tests/data/rank_pair_probe.toml";
  auto one = test::cli_run("run " + s + " --out " + path("one") + " --jobs 1 -q");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  const auto a = runs_of(path("one"));
  ASSERT_EQ(a.size(), 3u);
  for (const auto& [id, run] : a) EXPECT_TRUE(run.metrics.count("rank_pair_applies")) << id;
  for (const std::string flags : {"", " --no-groups"}) {
    const std::string out = path("mpi" + std::to_string(flags.size()));
    auto mpi =
        test::shell(kMpirun + attnlab() + " run " + s + " --out " + out + " --mpi -q" + flags);
    ASSERT_EQ(mpi.exit_code, 0) << mpi.out;
    expect_same_runs(a, runs_of(out));
  }
}

// train.distributed = true on 3 ranks against the same runs fitted in one process: the
// same run ids (an execution setting), metrics equal to rounding, and fit_ranks = 3.
TEST_F(Mpi, DistributedRidgeEqualsLocalRidge) {
  const std::string s = spec(kDistributedSpec);
  auto one = test::cli_run("run " + s + " --out " + path("one") + " --jobs 2 -q");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  auto dist = test::shell(kMpirun + attnlab() + " run " + s + " --out " + path("dist") +
                          " --mpi -q --set train.distributed=true");
  ASSERT_EQ(dist.exit_code, 0) << dist.out;
  const auto a = runs_of(path("one")), b = runs_of(path("dist"));
  double worst = 0;
  std::string worst_at;
  ASSERT_EQ(a.size(), 7u);
  ASSERT_EQ(b.size(), 7u);
  for (const auto& [id, run] : a) {
    ASSERT_TRUE(b.count(id)) << "run " << id << " missing";
    const Outcome& d = b.at(id);
    ASSERT_EQ(run.status, "ok") << run.error;
    ASSERT_EQ(d.status, "ok") << d.error;
    EXPECT_EQ(d.metrics.at("fit_ranks"), 3.0);
    EXPECT_EQ(d.metrics.at("lambda"), run.metrics.at("lambda")) << id;
    for (const auto& [name, value] : run.metrics) {
      ASSERT_TRUE(d.metrics.count(name)) << name;
      const double other = d.metrics.at(name);
      EXPECT_NEAR(other, value, 1e-7 * std::max(1.0, std::abs(value))) << id << " " << name;
      const double relative = std::abs(other - value) / std::max(1.0, std::abs(value));
      if (relative > worst) {
        worst = relative;
        worst_at = id + " " + name;
      }
    }
  }
  std::printf("largest relative difference, distributed vs local: %.3g (%s)\n", worst,
              worst_at.c_str());
  // The training data really were split: the three ranks fitted jointly.
  EXPECT_EQ(dist.out.find("fitting each run in one process"), std::string::npos) << dist.out;
}

}  // namespace
}  // namespace attn
