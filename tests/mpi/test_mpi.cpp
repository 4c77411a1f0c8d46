// MPI end to end (ctest label "mpi"): `mpirun -np 3 attnlab run ... --mpi` stores the same
// runs as `--jobs 1`, survives a run's process being killed, loses only the current run
// when a whole worker rank dies, and train.distributed ridge fits equal local fits.
#include "test_paths.h"
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "cli_helpers.h"
#include "experiment/dir_lock.h"
#include "experiment/store.h"

extern char** environ;

namespace attn {
namespace {

namespace fs = std::filesystem;

const std::string kMpirun = std::string(ATTNLAB_MPIEXEC) +
                            " --allow-run-as-root --oversubscribe --bind-to none -np 3 ";

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

// Runs a shell command; exit code and combined output.
test::CliResult shell_run(const std::string& command) {
  test::CliResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, got);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// results.csv without its timing columns.
std::string csv_without_timings(const std::string& csv) {
  const std::set<std::string> timing = {"wall_seconds", "fit_seconds", "peak_rss_mb"};
  std::istringstream in(csv);
  std::string line, out;
  std::vector<bool> keep;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream row(line);
    std::string cell;
    while (std::getline(row, cell, ',')) cells.push_back(cell);
    if (keep.empty())
      for (const auto& c : cells) keep.push_back(!timing.count(c));
    for (size_t k = 0; k < cells.size(); ++k)
      if (k >= keep.size() || keep[k]) out += cells[k] + ",";
    out += "\n";
  }
  return out;
}

// Metrics of every run by id (status, metrics without timings).
struct Outcome {
  std::string status, error;
  std::map<std::string, double> metrics;
};

std::map<std::string, Outcome> runs_of(const std::string& dir) {
  std::map<std::string, Outcome> out;
  for (const auto& r : ResultsStore(dir + "/results.sqlite").load_runs()) {
    Outcome run{r.status, r.error, {}};
    for (const auto& [name, value] : r.metrics)
      if (name != "fit_seconds") run.metrics[name] = value;
    out[r.run_id] = run;
  }
  return out;
}

// Pids of the processes whose parent is `parent`.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent && state != 'Z') out.push_back(std::stoi(name));
  }
  return out;
}

// True while `pid` exists and is not a zombie.
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

// Starts `sh -c "exec COMMAND"` in the background; returns its pid (that of COMMAND).
pid_t spawn_shell(const std::string& command) {
  const std::string exec = "exec " + command;
  const char* argv[] = {"/bin/sh", "-c", exec.c_str(), nullptr};
  pid_t pid = -1;
  if (posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ) != 0) return -1;
  return pid;
}

int wait_exit_code(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class Mpi : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("attnlab_mpi_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string spec(const char* text) {
    const std::string p = path("spec.toml");
    test::file_write(p, text);
    return p;
  }
  std::string attnlab() const { return test_cli_path(); }

  fs::path dir_;
};

void expect_same_runs(const std::map<std::string, Outcome>& a, const std::map<std::string, Outcome>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [id, run] : a) {
    ASSERT_TRUE(b.count(id)) << "run " << id << " missing";
    EXPECT_EQ(run.status, "ok") << run.error;
    EXPECT_EQ(b.at(id).status, "ok") << b.at(id).error;
    EXPECT_EQ(run.metrics, b.at(id).metrics) << "run " << id;  // bit for bit
  }
}

TEST_F(Mpi, SweepStoresTheSameRunsAsOneProcess) {
  const std::string s = spec(kSweepSpec);
  auto one = test::cli_run("run " + s + " --out " + path("one") + " --jobs 1 -q");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  const auto t0 = std::chrono::steady_clock::now();
  auto mpi = shell_run(kMpirun + attnlab() + " run " + s + " --out " + path("mpi") +
                               " --mpi -q");
  ASSERT_EQ(mpi.exit_code, 0) << mpi.out;
  EXPECT_NE(mpi.out.find("12 runs on 3 MPI ranks: 12 ran (12 ok, 0 failed)"), std::string::npos)
      << mpi.out;
  expect_same_runs(runs_of(path("one")), runs_of(path("mpi")));
  // The CSV tables agree outside the timing columns.
  const std::string csv_one = test::file_read(path("one") + "/results.csv");
  EXPECT_EQ(csv_without_timings(csv_one), csv_without_timings(test::file_read(path("mpi") + "/results.csv")));
  EXPECT_NE(csv_one.find("wall_seconds"), std::string::npos);
  // Resume under MPI: nothing left to do.
  mpi = shell_run(kMpirun + attnlab() + " run " + s + " --out " + path("mpi") + " --mpi -q");
  ASSERT_EQ(mpi.exit_code, 0) << mpi.out;
  EXPECT_NE(mpi.out.find("0 ran (0 ok, 0 failed), 12 already done"), std::string::npos) << mpi.out;
  std::printf("two MPI sweeps of 12 runs: %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

TEST_F(Mpi, BadSpecIsOneLineAndStopsEveryRank) {
  const std::string s = spec("[experiment]\nname = \"x\"\n[task]\nname = \"qsa\"\nN = 2\nq = 5\n"
                             "[model]\nname = \"linear\"\n");
  const auto r = shell_run(kMpirun + attnlab() + " run " + s + " --out " + path("o") +
                                   " --mpi -q");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("attnlab: error: "), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(path("o/results.sqlite")));
  const auto j = shell_run(kMpirun + attnlab() + " run " + spec(kSweepSpec) + " --out " +
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
    const auto r = shell_run(kMpirun + attnlab() + " run " + s + " --out " + out + " --mpi -q");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.out.find(out + " is in use by another attnlab runner (pid " + std::to_string(getpid())),
              std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out + "/results.sqlite"));
  }
  const auto r = shell_run(kMpirun + attnlab() + " run " + s + " --out " + out + " --mpi -q");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("12 ran (12 ok, 0 failed)"), std::string::npos) << r.out;
}

// Kills the process of one run while it runs (as the out-of-memory killer would): the run
// is stored as failed, the sweep goes on, and --retry-failed completes it.
TEST_F(Mpi, KilledRunIsSurvived) {
  const std::string s = spec(kSlowSpec);
  const pid_t mpirun = spawn_shell(kMpirun + attnlab() + " run " + s + " --out " + path("mpi") +
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
  const auto after = runs_of(path("mpi"));
  ASSERT_EQ(after.size(), 6u);
  int failed = 0;
  for (const auto& [id, run] : after)
    if (run.status != "ok") {
      ++failed;
      EXPECT_NE(run.error.find("killed by signal 9"), std::string::npos) << run.error;
    }
  EXPECT_EQ(failed, 1);
  auto retry = shell_run(kMpirun + attnlab() + " run " + s + " --out " + path("mpi") +
                                 " --mpi -q --retry-failed");
  ASSERT_EQ(retry.exit_code, 0) << retry.out;
  EXPECT_NE(retry.out.find("1 ran (1 ok, 0 failed), 5 already done"), std::string::npos) << retry.out;
  auto one = test::cli_run("run " + s + " --out " + path("one") + " --jobs 2 -q");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  expect_same_runs(runs_of(path("one")), runs_of(path("mpi")));
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
  auto again = shell_run(kMpirun + attnlab() + " run " + s + " --out " + path("mpi") +
                                 " --mpi -q");
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find(std::to_string(6 - partial.size()) + " ran"), std::string::npos)
      << again.out;
  auto one = test::cli_run("run " + s + " --out " + path("one") + " --jobs 2 -q");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  expect_same_runs(runs_of(path("one")), runs_of(path("mpi")));
}

// train.distributed = true on 3 ranks against the same runs fitted in one process: the
// same run ids (an execution setting), metrics equal to rounding, and fit_ranks = 3.
TEST_F(Mpi, DistributedRidgeEqualsLocalRidge) {
  const std::string s = spec(kDistributedSpec);
  auto one = test::cli_run("run " + s + " --out " + path("one") + " --jobs 2 -q");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  auto dist = shell_run(kMpirun + attnlab() + " run " + s + " --out " + path("dist") +
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
