// Growing a sweep in place (experiment/spec_change.h, experiment_open): a grid that gains or
// loses values or seeds reuses the stored runs and runs only its new points; a changed fixed key
// is refused naming it; merge takes shards of a grown spec and names the shards it misses;
// `attnlab status` counts a directory's runs against its plan.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "experiment/experiment_status.h"
#include "experiment/spec_change.h"
#include "test_paths.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

// 2 lambdas x 3 n x 2 seeds = 12 quick linear runs.
const char* kSpec = R"(
[experiment]
name = "grow_test"
seeds = 2
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
)";

class GrowSweep : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("attnlab_grow_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    spec_ = path("spec.toml");
    test::file_write(spec_, kSpec);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  test::CliResult run(const std::string& out, const std::string& args = "") {
    return test::cli_run("run " + spec_ + " --out " + path(out) + " -q " + args);
  }

  fs::path dir_;
  std::string spec_;
};

// results.csv without its timing columns (wall_seconds, peak_rss_mb, *_seconds), row by row.
std::vector<std::string> csv_without_timing(const std::string& path) {
  std::istringstream in(test::file_read(path));
  std::vector<std::string> rows;
  std::vector<bool> keep;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::istringstream cols(line);
    for (std::string cell; std::getline(cols, cell, ',');) cells.push_back(cell);
    if (keep.empty())
      for (const auto& name : cells)
        keep.push_back(name != "peak_rss_mb" && name.find("second") == std::string::npos);
    std::string row;
    for (size_t i = 0; i < cells.size(); ++i)
      if (i >= keep.size() || keep[i]) row += cells[i] + ",";
    rows.push_back(row);
  }
  return rows;
}

TEST(SpecChange, AGridChangeKeepsTheRunsAndAFixedKeyIsNamed) {
  const std::string stored =
      R"({"seeds":[0],"base":{"train.steps":600,"task.name":"qsa"},"scoped":{},)"
      R"("axes":[{"keys":["model.m"],"values":[[1],[4]]}]})";
  const std::string grown =
      R"({"seeds":[0,1],"base":{"train.steps":600,"task.name":"qsa"},"scoped":{},)"
      R"("axes":[{"keys":["model.m"],"values":[[1],[4],[8]]}]})";
  SpecChange c = spec_change(stored, grown);
  EXPECT_EQ(c.key, "");
  EXPECT_EQ(c.grid, "model.m: [1,4] -> [1,4,8]; seeds: [0] -> [0,1]");
  const std::string steps =
      R"({"seeds":[0],"base":{"train.steps":400,"task.name":"qsa"},"scoped":{},)"
      R"("axes":[{"keys":["model.m"],"values":[[1],[4]]}]})";
  EXPECT_EQ(spec_change(stored, steps).key, "train.steps: stored 600, now 400");
  const std::string scoped =
      R"({"seeds":[0],"base":{"train.steps":600,"task.name":"qsa"},)"
      R"("scoped":{"task.qsa":{"q":3}},"axes":[{"keys":["model.m"],"values":[[1],[4]]}]})";
  EXPECT_EQ(spec_change(stored, scoped).key, "task.qsa.q: stored (not set), now 3");
  const std::string other_axis =
      R"({"seeds":[0],"base":{"train.steps":600,"task.name":"qsa"},"scoped":{},)"
      R"("axes":[{"keys":["model.heads"],"values":[[1],[4]]}]})";
  EXPECT_EQ(spec_change(stored, other_axis).key, "model.m: stored swept over [1,4], now (not set)");
  EXPECT_EQ(spec_change("", grown).key, "the stored runs' spec is not recorded");
}

TEST_F(GrowSweep, AGrownGridRunsOnlyItsNewPointsAndEqualsAFreshRun) {
  ASSERT_EQ(run("g").exit_code, 0);
  const std::string grown = "--set 'sweep.train.n=[100, 200, 300, 400]' --set experiment.seeds=3";
  const auto r = run("g", grown);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // 4 n x 2 lambdas x 3 seeds = 24 runs, 12 stored before.
  EXPECT_NE(r.out.find("24 runs: 12 ran (12 ok, 0 failed), 12 already done"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("the spec's grid changed since its runs were stored (train.n: "
                       "[100,200,400] -> [100,200,300,400]; seeds: [0,1] -> [0,1,2])"),
            std::string::npos)
      << r.out;
  ASSERT_EQ(run("fresh", grown).exit_code, 0);
  EXPECT_EQ(csv_without_timing(path("g") + "/results.csv"),
            csv_without_timing(path("fresh") + "/results.csv"));
  // Shrinking it back runs nothing; the points no longer in the grid leave results.csv, said once.
  const auto back = run("g");
  ASSERT_EQ(back.exit_code, 0) << back.out;
  EXPECT_NE(back.out.find("12 runs: 0 ran (0 ok, 0 failed), 12 already done"), std::string::npos)
      << back.out;
  EXPECT_NE(back.out.find("12 stored runs are not in the current plan (points no longer in the "
                          "grid"),
            std::string::npos)
      << back.out;
  ASSERT_EQ(run("small").exit_code, 0);
  EXPECT_EQ(csv_without_timing(path("g") + "/results.csv"),
            csv_without_timing(path("small") + "/results.csv"));
}

// The issue's case: sanford2023's E1 at quick size (m in 1, 4, 16) grown by m = 8.
TEST_F(GrowSweep, SanfordE1GrownByOneMRunsOnlyTheNewPointsAndEqualsAFreshRun) {
  const std::string e1 =
      std::string(test_source_dir()) + "/experiments/sanford2023/e1_qsa_representation.toml";
  const auto e1_run = [&](const std::string& out, const std::string& args) {
    return test::cli_run("run " + e1 + " --quick --jobs 2 -q --out " + path(out) + args);
  };
  ASSERT_EQ(e1_run("e1", "").exit_code, 0);
  const std::string grown = " --set 'sweep.model.m=[1, 4, 8, 16]'";
  const auto r = e1_run("e1", grown);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // 1 N x 2 q x 4 m x 1 seed: the two points of m = 8 run.
  EXPECT_NE(r.out.find("8 runs: 2 ran (2 ok, 0 failed), 6 already done"), std::string::npos)
      << r.out;
  ASSERT_EQ(e1_run("fresh", grown).exit_code, 0);
  const auto got = csv_without_timing(path("e1") + "/results.csv");
  EXPECT_EQ(got.size(), 9u);  // the header and 8 runs
  EXPECT_EQ(got, csv_without_timing(path("fresh") + "/results.csv"));
}

TEST_F(GrowSweep, AChangedFixedKeyIsRefusedNamingItsStoredAndNewValue) {
  ASSERT_EQ(run("o").exit_code, 0);
  const auto r = run("o", "--set eval.n=100");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("holds results of a different spec (grow_test, " + spec_ +
                       "): eval.n: stored 200, now 100"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("--force-new"), std::string::npos) << r.out;
  const auto swept = run("o", "--set model.lambda=0.5");
  EXPECT_EQ(swept.exit_code, 2);
  EXPECT_NE(swept.out.find("model.lambda: stored swept over [0.001,0.1], now 0.5"),
            std::string::npos)
      << swept.out;
}

TEST_F(GrowSweep, MergeTakesShardsOfAGrownSpecAndNamesTheMissingShards) {
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(run("s" + std::to_string(i), "--shard " + std::to_string(i) + "/2").exit_code, 0);
  ASSERT_EQ(test::cli_run("merge " + path("m") + " " + path("s0") + " " + path("s1")).exit_code, 0);
  // The grid grows; both shards are run again with it and merged into the old merge.
  const std::string grown = "--set 'sweep.train.n=[100, 200, 300, 400]'";
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(
        run("s" + std::to_string(i), "--shard " + std::to_string(i) + "/2 " + grown).exit_code, 0);
  // One shard only (into a new directory): merged with a warning naming the other, exit 0
  // (merging is incremental).
  const auto part = test::cli_run("merge " + path("m2") + " " + path("s0"));
  ASSERT_EQ(part.exit_code, 0) << part.out;
  EXPECT_NE(part.out.find("8 of 16 planned runs are missing: shard 1/2 (all 8)"), std::string::npos)
      << part.out;
  const auto status = test::cli_run("status " + path("m2"));
  EXPECT_EQ(status.exit_code, 3) << status.out;
  EXPECT_NE(status.out.find("(merged from 2 shards): 16 planned, 8 stored (8 ok, 0 failed), 8 "
                            "missing"),
            std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find("shard 1/2: 8 planned, 0 stored (0 ok, 0 failed), 8 missing"),
            std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find("to finish shard 1/2: attnlab run " + spec_ +
                            " --out SHARD_DIR --set 'sweep.train.n=[100, 200, 300, 400]' "
                            "--shard 1/2"),
            std::string::npos)
      << status.out;
  // Both into the merge of the old grid: it takes the grown one.
  const auto whole = test::cli_run("merge " + path("m") + " " + path("s0") + " " + path("s1"));
  ASSERT_EQ(whole.exit_code, 0) << whole.out;
  EXPECT_EQ(whole.out.find("missing"), std::string::npos) << whole.out;
  ASSERT_EQ(run("fresh", grown).exit_code, 0);
  EXPECT_EQ(csv_without_timing(path("m") + "/results.csv"),
            csv_without_timing(path("fresh") + "/results.csv"));
  const auto done = test::cli_run("status " + path("m"));
  EXPECT_EQ(done.exit_code, 0) << done.out;
  EXPECT_NE(done.out.find("complete"), std::string::npos) << done.out;
  // Shards of two different grids are refused, naming the grids.
  ASSERT_EQ(run("old", "--shard 1/2").exit_code, 0);
  const auto mixed = test::cli_run("merge " + path("m2") + " " + path("s0") + " " + path("old"));
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_NE(mixed.out.find("holds another grid of the spec of " + path("s0") +
                           " (train.n: [100,200,300,400] -> [100,200,400]); run every shard "
                           "with one grid"),
            std::string::npos)
      << mixed.out;
}

TEST_F(GrowSweep, StatusCountsAShardAndNamesTheCommandThatFinishesIt) {
  ASSERT_EQ(run("s", "--shard 0/3").exit_code, 0);
  auto st = experiment_status(path("s"));
  EXPECT_EQ(st.shard_index, 0);
  EXPECT_EQ(st.shard_count, 3);
  EXPECT_EQ(st.plan_total, 12);
  EXPECT_EQ(st.planned, 4);
  EXPECT_EQ(st.ok, 4);
  EXPECT_EQ(st.missing, 0);
  const auto complete = test::cli_run("status " + path("s"));
  EXPECT_EQ(complete.exit_code, 0) << complete.out;
  EXPECT_NE(complete.out.find("(shard 0/3 of a plan of 12): 4 planned, 4 stored (4 ok, 0 "
                              "failed), 0 missing"),
            std::string::npos)
      << complete.out;
  // Two runs lost (as if never run): missing, and the command that runs them.
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path("s/results.sqlite").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "DELETE FROM runs WHERE rowid IN (SELECT rowid FROM runs LIMIT 2)",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  const auto missing = test::cli_run("status " + path("s"));
  EXPECT_EQ(missing.exit_code, 3) << missing.out;
  EXPECT_NE(missing.out.find("4 planned, 2 stored (2 ok, 0 failed), 2 missing"), std::string::npos)
      << missing.out;
  EXPECT_NE(
      missing.out.find("to finish: attnlab run " + spec_ + " --out " + path("s") + " --shard 0/3"),
      std::string::npos)
      << missing.out;
  const auto bad = test::cli_run("status " + path("nowhere"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("nowhere: no results.sqlite here; run `attnlab run SPEC --out"),
            std::string::npos)
      << bad.out;
}

}  // namespace
}  // namespace attn
