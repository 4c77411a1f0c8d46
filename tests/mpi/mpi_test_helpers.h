// Helpers of the MPI end-to-end tests (tests/mpi/): running `mpirun -np 3 attnlab ...`, reading
// what a run stored, watching and killing the job's processes, and the per-test scratch
// directory.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "experiment/store.h"
#include "test_paths.h"

extern char** environ;

namespace attn::mpi_test {

namespace fs = std::filesystem;

inline const std::string kMpirun = std::string(ATTNLAB_MPIEXEC) +
                                   " --allow-run-as-root --oversubscribe --bind-to none -np 3 ";

// results.csv without its timing columns.
inline std::string csv_without_timings(const std::string& csv) {
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

inline std::map<std::string, Outcome> runs_of(const std::string& dir) {
  std::map<std::string, Outcome> out;
  for (const auto& r : ResultsStore(dir + "/results.sqlite", StoreAccess::kRead).load_runs()) {
    Outcome run{r.status, r.error, {}};
    for (const auto& [name, value] : r.metrics)
      if (name != "fit_seconds") run.metrics[name] = value;
    out[r.run_id] = run;
  }
  return out;
}

// Pids of the processes whose parent is `parent`.
inline std::vector<pid_t> children_of(pid_t parent) {
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
inline bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

// Starts `sh -c "exec COMMAND"` in the background; returns its pid (that of COMMAND).
inline pid_t spawn_shell(const std::string& command) {
  const std::string exec = "exec " + command;
  const char* argv[] = {"/bin/sh", "-c", exec.c_str(), nullptr};
  pid_t pid = -1;
  if (posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ) != 0)
    return -1;
  return pid;
}

inline int wait_exit_code(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class MpiTest : public ::testing::Test {
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

// The same run ids in a and b, every run ok in both, metrics equal bit for bit.
inline void expect_same_runs(const std::map<std::string, Outcome>& a,
                             const std::map<std::string, Outcome>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [id, run] : a) {
    ASSERT_TRUE(b.count(id)) << "run " << id << " missing";
    EXPECT_EQ(run.status, "ok") << run.error;
    EXPECT_EQ(b.at(id).status, "ok") << b.at(id).error;
    EXPECT_EQ(run.metrics, b.at(id).metrics) << "run " << id;  // bit for bit
  }
}

}  // namespace attn::mpi_test
