// child_job_spawn (core/child_process.h) and `attnlab _job` (apps/cmd_job.cpp): the job of
// Python's run()/reproduce() runs in a fresh attnlab process, also when the caller has threads
// that hold SQLite's and malloc's locks at random moments (issue #33: a forked copy of such a
// process blocked for ever in sqlite3Malloc). Runs under ASan too (the job is the ASan binary).
#include <dirent.h>
#include <sqlite3.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "core/child_process.h"
#include "core/error.h"
#include "core/front_option.h"
#include "core/version.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace attn {
namespace {

constexpr const char* kTinySpec =
    "[experiment]\nseeds = 1\n[task]\nname = \"qsa\"\nN = 4\nq = 1\nd_out = 2\n"
    "[model]\nname = \"linear\"\n[train]\nn = 32\n[eval]\nn = 32\n";

std::string joined(bool commands) {
  std::string out;
  const size_t n = commands ? kFrontCommandCount : kFrontOptionCount;
  for (size_t k = 0; k < n; ++k) {
    if (k > 0) out += '\x1f';
    out += commands ? front_command(static_cast<FrontCommand>(k), "{}")
                    : front_option(static_cast<FrontOption>(k));
  }
  return out;
}

// argv of `attnlab _job run` of SPEC into OUT with this build's version and the library's names.
std::vector<std::string> job_run_argv(const std::string& spec, const std::string& out,
                                      const std::string& caller) {
  return {test_cli_path(),
          "_job",
          "run",
          "target=" + spec,
          "out=" + out,
          "caller=" + caller,
          "option_spellings=" + joined(false),
          "command_spellings=" + joined(true),
          "jobs=1",
          "threads=1"};
}

std::string this_build() { return std::string(kVersion) + " " + kGitCommit; }

fs::path scratch(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("attnlab-spawn-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "tiny.toml") << kTinySpec;
  return dir;
}

// The executables of this process's children, by pid.
std::map<pid_t, std::string> children_exe() {
  std::map<pid_t, std::string> out;
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  while (const dirent* e = readdir(d)) {
    const pid_t pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), {});
    const size_t close = text.rfind(')');
    if (close == std::string::npos) continue;
    char state;
    int ppid = 0;
    if (std::sscanf(text.c_str() + close + 1, " %c %d", &state, &ppid) != 2 || ppid != getpid())
      continue;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
    if (!ec) out[pid] = exe.string();
  }
  closedir(d);
  return out;
}

TEST(ChildSpawn, TheJobRunsInTheAttnlabBinaryAndAnswersOverItsPipe) {
  const fs::path dir = scratch("exe");
  std::map<pid_t, std::string> seen;
  ChildWatch watch;
  watch.poll_ms = 2;
  watch.stop = [&seen] {
    for (const auto& [pid, exe] : children_exe()) seen[pid] = exe;
    return false;
  };
  const std::string result = child_job_spawn(
      "the run process",
      job_run_argv((dir / "tiny.toml").string(), (dir / "o").string(), this_build()), watch);
  EXPECT_EQ(child_numbers_decode(result, 4), (std::vector<int64_t>{1, 0, 1, 0}));
  ASSERT_FALSE(seen.empty());
  for (const auto& [pid, exe] : seen)
    EXPECT_EQ(fs::canonical(exe), fs::canonical(test_cli_path())) << pid;
  EXPECT_TRUE(fs::exists(dir / "o" / "results.sqlite"));
  fs::remove_all(dir);
}

TEST(ChildSpawn, TheJobsErrorsArriveByClass) {
  const fs::path dir = scratch("errors");
  try {
    child_job_spawn("the run process",
                    job_run_argv((dir / "none.toml").string(), (dir / "o").string(), this_build()),
                    ChildWatch{});
    ADD_FAILURE() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("no such spec file"), std::string::npos) << e.what();
  }
  try {
    child_job_spawn("the run process",
                    job_run_argv((dir / "tiny.toml").string(), (dir / "o").string(), "0.0.0 other"),
                    ChildWatch{});
    ADD_FAILURE() << "no error";
  } catch (const IoError&) {
    ADD_FAILURE() << "a version mismatch is not a file error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("is not the build of the Python module"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "o"));
  EXPECT_THROW(child_job_spawn("the run process", {"/nonexistent/attnlab"}, ChildWatch{}),
               UserError);
  fs::remove_all(dir);
}

// Jobs started while other threads use SQLite and malloc without pause: each must end (a
// hang is the test's timeout). With a fork instead of the spawn, the copy's first SQLite
// allocation could wait for a mutex one of those threads held at the fork.
TEST(ChildSpawn, JobsStartedBesideThreadsHammeringSqliteAndMallocAllEnd) {
  const fs::path dir = scratch("stress");
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int k = 0; k < 3; ++k)
    threads.emplace_back([&stop] {
      sqlite3* db = nullptr;
      sqlite3_open(":memory:", &db);
      sqlite3_exec(db, "create table t(x)", nullptr, nullptr, nullptr);
      while (!stop.load())
        sqlite3_exec(db,
                     "insert into t values (randomblob(300)); "
                     "select count(*) from t; delete from t where rowid % 7 = 0",
                     nullptr, nullptr, nullptr);
      sqlite3_close(db);
    });
  threads.emplace_back([&stop] {
    while (!stop.load()) {
      std::vector<std::string> v;
      for (int n = 1; n < 4096; n += 37) v.emplace_back(static_cast<size_t>(n), 'x');
    }
  });
  for (int round = 0; round < 8; ++round) {
    const std::string out = (dir / "r").string() + std::to_string(round);
    const std::string result = child_job_spawn(
        "the run process", job_run_argv((dir / "tiny.toml").string(), out, this_build()),
        ChildWatch{});
    EXPECT_EQ(child_numbers_decode(result, 4), (std::vector<int64_t>{1, 0, 1, 0})) << round;
  }
  stop = true;
  for (auto& t : threads) t.join();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attn
