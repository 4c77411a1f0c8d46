// The attnlab command line as a user meets it: every bad-input case gives one clear line
// and exit code 2 with no file left behind; outputs are byte-identical across runs,
// thread counts and chunk sizes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "analysis/probes.h"
#include "cli_helpers.h"
#include "io/dataset_file.h"
#include "kept_variable.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

using Result = test::CliResult;
Result run(const std::string& args) { return test::cli_run(args); }

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("attnlab_cli_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // No file of any kind (target or temp) left in the directory.
  bool dir_empty() const { return fs::is_empty(dir_); }

  // Runs a command that must fail as a user error: exit 2, one line naming `needle`.
  void expect_user_error(const std::string& args, const std::string& needle) {
    const Result r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(needle), std::string::npos) << args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "not one line: " << r.out;
    EXPECT_TRUE(dir_empty()) << args << " left a file behind";
  }

  fs::path dir_;
};

std::string read_file(const std::string& p) { return test::file_read(p); }

TEST_F(Cli, HelpAndVersion) {
  Result r = run("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("data"), std::string::npos);
  EXPECT_NE(r.out.find("list"), std::string::npos);
  r = run("data --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* opt : {"--n", "--seed", "--set", "--out", "--first", "--threads"})
    EXPECT_NE(r.out.find(opt), std::string::npos) << opt;
  r = run("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("attnlab 0."), std::string::npos);
}

TEST_F(Cli, ListNamesEveryTaskAndItsParameters) {
  const Result r = run("list");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* name : {"rf_target", "qsa", "match2", "match3", "match3_local",
                           "match3_adjacent", "match3_pointer", "match_s", "d_out", "encoding",
                           "sampling", "plant_fraction", "gamma", "target"})
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
}

// `attnlab list probes` (and the full listing, and `list NAME`) prints every row of the probe
// table with its one-line description; an unknown name still suggests.
TEST_F(Cli, ListPrintsEveryProbeWithItsDescription) {
  for (const char* what : {"probes", "", "rank_pair"}) {
    const Result r = run(std::string("list ") + what);
    EXPECT_EQ(r.exit_code, 0) << what << r.out;
    EXPECT_NE(r.out.find("Probes ([eval] probes"), std::string::npos) << what << r.out;
    for (const ProbeRow& row : probe_table()) {
      if (std::string(what) == "rank_pair" && std::string(row.name) != what) {
        EXPECT_EQ(r.out.find(row.name), std::string::npos) << "list NAME shows that probe only";
        continue;
      }
      EXPECT_NE(r.out.find(row.name), std::string::npos) << what << ": " << row.name;
      EXPECT_NE(r.out.find(row.description), std::string::npos) << what << ": " << row.name;
      EXPECT_NE(r.out.find(row.doc), std::string::npos) << what << ": " << row.name;
    }
  }
  EXPECT_EQ(run("list tasks").out.find("Probes"), std::string::npos);
  const Result bad = run("list rank_par");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("did you mean 'rank_pair'"), std::string::npos) << bad.out;
}

TEST_F(Cli, DataWritesAFileWithMeta) {
  const Result r = run("data qsa --n 5 --seed 3 --set task.q=3 --set N=8 -o " + path("a.npz"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("X (5, 8, 20)"), std::string::npos) << r.out;
  std::string meta;
  const Batch b = dataset_read(path("a.npz"), &meta);
  EXPECT_EQ(b.n, 5);
  EXPECT_EQ(b.shape.T, 8);
  EXPECT_NE(meta.find("\"task\": \"qsa\""), std::string::npos) << meta;
  EXPECT_NE(meta.find("\"q\": 3"), std::string::npos) << meta;
  EXPECT_NE(meta.find("\"seed\": 3"), std::string::npos) << meta;
  // The task's target kind is recorded and read back (qsa: real).
  EXPECT_NE(meta.find("\"target\": \"real\""), std::string::npos) << meta;
  EXPECT_EQ(b.shape.target, TargetKind::real);
}

TEST_F(Cli, SameSeedGivesByteIdenticalFilesAcrossRunsThreadsAndChunks) {
  for (const char* task : {"rf_target", "qsa", "match3_pointer"}) {
    const std::string base = std::string("data ") + task + " --n 500 --seed 7 -q -o ";
    ASSERT_EQ(run(base + path("a.npz")).exit_code, 0);
    ASSERT_EQ(run(base + path("b.npz")).exit_code, 0);
    ASSERT_EQ(run(base + path("c.npz") + " --threads 2 --chunk 3").exit_code, 0);
    const std::string a = read_file(path("a.npz"));
    EXPECT_GT(a.size(), 1000u);
    EXPECT_EQ(a, read_file(path("b.npz"))) << task;
    EXPECT_EQ(a, read_file(path("c.npz"))) << task;
    ASSERT_EQ(
        run(std::string("data ") + task + " --n 500 --seed 8 -q -o " + path("d.npz")).exit_code, 0);
    EXPECT_NE(a, read_file(path("d.npz"))) << task;
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
}

TEST_F(Cli, BadInputIsOneLineExitTwoAndNoFile) {
  const std::string out = " -o " + path("x.npz");
  expect_user_error("data qas --n 5" + out, "did you mean 'qsa'");
  expect_user_error("data qsa --n 5 --set task.qq=2" + out, "task.qq");
  expect_user_error("data qsa --n 5 --set task.qq=2" + out, "did you mean 'q'");
  expect_user_error("data qsa --n 5 --set task.q=two" + out, "task.q must be an integer");
  expect_user_error("data qsa --n 5 --set task.q=16" + out,
                    "task.q = 16 must be smaller than task.N = 16");
  expect_user_error("data qsa --n 5 --set task.encoding=onehot" + out, "multi_hot");
  expect_user_error("data qsa --n 5 --set model.m=2" + out, "only takes task.* keys");
  expect_user_error("data qsa --n 5 --set q" + out, "task.KEY=VALUE");
  expect_user_error("data match2 --n 5 --set task.M=1" + out, "task.M = 1");
  expect_user_error("data match2 --n 5 --set task.N=1" + out, "task.N = 1 is out of range");
  expect_user_error("data qsa --n 0" + out, "--n: 0 is too small: give a whole number from 1");
  expect_user_error("data qsa --n -3" + out, "--n: '-3' is not a whole number from 1");
  expect_user_error("data qsa --n abc" + out, "--n");
  expect_user_error("data qsa --n 5 -o " + path("x.csv"), ".npz");
  expect_user_error("data qsa --n 5 -o " + path("missing/dir/x.npz"), "missing/dir");
  expect_user_error("data qsa --n 5" + out + " --threads -1", "--threads");
  expect_user_error("data qsa --n 5", "--out");
}

TEST_F(Cli, BadAttnlabIsaIsOneLineExitTwo) {
  // ATTNLAB_ISA (ops/isa.h) names the copy of the float kernels: checked before any work.
  const test::KeptVariable isa("ATTNLAB_ISA");
  isa.set("avx3");
  expect_user_error(
      "data qsa --n 5 -o " + path("x.npz"),
      "ATTNLAB_ISA='avx3' must be generic, avx2 or avx512 (or unset for the default)");
  isa.set("generic");
  const Result r = run("data qsa --n 5 -q -o " + path("x.npz"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

TEST_F(Cli, SizesThatCannotFitAreRefusedBeforeAllocating) {
  const std::string out = " -o " + path("x.npz");
  // ~ 1e12 samples x 16 x 36 doubles: far beyond memory.
  expect_user_error("data qsa --n 1000000000000" + out, "memory");
  // Overflowing sizes are caught too.
  expect_user_error("data qsa --n 9000000000000000000 --set task.N=4096" + out, "too large");
}

TEST_F(Cli, UnwritableOutputIsAUserError) {
  if (geteuid() == 0) {
    // root can write anywhere it can reach; a path below a regular file still fails.
    std::ofstream(path("file")) << "x";
    const Result r = run("data qsa --n 5 -o " + path("file") + "/x.npz");
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find("file/x.npz"), std::string::npos) << r.out;
  } else {
    fs::create_directories(path("ro"));
    fs::permissions(path("ro"), fs::perms::owner_read | fs::perms::owner_exec);
    const Result r = run("data qsa --n 5 -o " + path("ro/x.npz"));
    EXPECT_EQ(r.exit_code, 2) << r.out;
    fs::permissions(path("ro"), fs::perms::owner_all);
  }
}

}  // namespace
}  // namespace attn
