// Growing a sweep in place (experiment/spec_change.h, experiment_open): a grid that gains or
// loses values or seeds reuses the stored runs and runs only its new points; a changed fixed key
// is refused naming it; merge takes shards of a grown spec and names the shards it misses;
// `attnlab status` counts a directory's runs against its plan. On the shipped demo spec at
// quick size (2 models x 2 tasks x train.n in 64, 256, 1024 x 3 seeds = 36 runs, seconds).
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

// This test's own directory below the system's temp directory, emptied first and removed last.
struct TestDir {
  const fs::path root =
      fs::temp_directory_path() / ("attnlab_grow_" + std::to_string(getpid()) + "_" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TestDir() {
    fs::remove_all(root);
    fs::create_directories(root);
  }
  ~TestDir() { fs::remove_all(root); }
  std::string operator/(const std::string& name) const { return (root / name).string(); }
};

const std::string& demo() {
  static const std::string path =
      std::string(test_source_dir()) + "/experiments/demo/baselines.toml";
  return path;
}

// `attnlab run` of the demo at quick size into out, with more arguments.
test::CliResult demo_run(const std::string& out, const std::string& args = "") {
  return test::cli_run("run " + demo() + " --quick -q --out " + out + " " + args);
}

// A command's output holds `text` (the output shown when not).
void expect_says(const test::CliResult& r, const std::string& text) {
  EXPECT_NE(r.out.find(text), std::string::npos) << r.out;
}

const char* const kGrownN = "--set 'sweep.train.n=[64, 128, 256, 1024]'";

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

TEST(GrowSweep, AGrownGridRunsOnlyItsNewPointsAndEqualsAFreshRun) {
  const TestDir dir;
  ASSERT_EQ(demo_run(dir / "g").exit_code, 0);
  const std::string grown = std::string(kGrownN) + " --set experiment.seeds=4";
  const auto r = demo_run(dir / "g", grown);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // 4 n x 2 models x 2 tasks x 4 seeds = 64 runs, 36 stored before.
  expect_says(r, "64 runs: 28 ran (28 ok, 0 failed), 36 already done");
  expect_says(r,
              "the spec's grid changed since its runs were stored (train.n: "
              "[64,256,1024] -> [64,128,256,1024]; seeds: [0,1,2] -> [0,1,2,3])");
  ASSERT_EQ(demo_run(dir / "fresh", grown).exit_code, 0);
  EXPECT_EQ(csv_without_timing(dir / "g/results.csv"),
            csv_without_timing(dir / "fresh/results.csv"));
  // Shrunk back, it runs nothing; the points no longer in the grid leave results.csv, said once.
  const auto back = demo_run(dir / "g");
  ASSERT_EQ(back.exit_code, 0) << back.out;
  expect_says(back, "36 runs: 0 ran (0 ok, 0 failed), 36 already done");
  expect_says(back,
              "28 stored runs are not in the current plan (points no longer in the "
              "grid");
  ASSERT_EQ(demo_run(dir / "small").exit_code, 0);
  EXPECT_EQ(csv_without_timing(dir / "g/results.csv"),
            csv_without_timing(dir / "small/results.csv"));
}

// The issue's case: sanford2023's E1 at quick size (the zip of task.N and model.m: (16, 16),
// (16, 64)) grown by m = 32 at N = 16.
TEST(GrowSweep, SanfordE1GrownByOneMRunsOnlyTheNewPointsAndEqualsAFreshRun) {
  const std::string e1 =
      std::string(test_source_dir()) + "/experiments/sanford2023/e1_qsa_representation.toml";
  const TestDir dir;
  const auto e1_run = [&](const std::string& out, const std::string& args) {
    return test::cli_run("run " + e1 + " --quick --jobs 2 -q --out " + (dir / out) + args);
  };
  ASSERT_EQ(e1_run("e1", "").exit_code, 0);
  const std::string grown =
      R"( --set 'sweep.zip=[{"task.N" = [16, 16, 16], "model.m" = [16, 32, 64]}]')";
  const auto r = e1_run("e1", grown);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // 3 (N, m) pairs x 1 seed: the point of m = 32 runs.
  expect_says(r, "3 runs: 1 ran (1 ok, 0 failed), 2 already done");
  ASSERT_EQ(e1_run("fresh", grown).exit_code, 0);
  const auto got = csv_without_timing(dir / "e1/results.csv");
  EXPECT_EQ(got.size(), 4u);  // the header and 3 runs
  EXPECT_EQ(got, csv_without_timing(dir / "fresh/results.csv"));
}

TEST(GrowSweep, AChangedFixedKeyIsRefusedNamingItsStoredAndNewValue) {
  const TestDir dir;
  ASSERT_EQ(demo_run(dir / "o").exit_code, 0);
  const auto r = demo_run(dir / "o", "--set eval.n=100");
  EXPECT_EQ(r.exit_code, 2);
  expect_says(r, "holds results of a different spec (baselines, " + demo() +
                     "): eval.n: stored 2000, now 100");
  expect_says(r, "--force-new");
  const auto swept = demo_run(dir / "o", "--set model.name=linear");
  EXPECT_EQ(swept.exit_code, 2);
  expect_says(swept, R"(model.name: stored swept over ["mean","linear"], now linear)");
}

TEST(GrowSweep, MergeTakesShardsOfAGrownSpecAndNamesTheMissingShards) {
  const TestDir dir;
  // 2 seeds: a point's shard of 2 is its seed, in the old grid and the grown one alike.
  const std::string seeds = "--set experiment.seeds=2 ";
  for (const char* i : {"0", "1"})
    ASSERT_EQ(demo_run(dir / ("s" + std::string(i)), seeds + "--shard " + i + "/2").exit_code, 0);
  ASSERT_EQ(
      test::cli_run("merge " + (dir / "m") + " " + (dir / "s0") + " " + (dir / "s1")).exit_code, 0);
  // The grid grows; both shards are run again with it.
  for (const char* i : {"0", "1"})
    ASSERT_EQ(
        demo_run(dir / ("s" + std::string(i)), seeds + kGrownN + " --shard " + i + "/2").exit_code,
        0);
  // One shard only (into a new directory): merged with a warning naming the other, exit 0
  // (merging is incremental).
  const auto part = test::cli_run("merge " + (dir / "m2") + " " + (dir / "s0"));
  ASSERT_EQ(part.exit_code, 0) << part.out;
  expect_says(part, "16 of 32 planned runs are missing: shard 1/2 (all 16)");
  const auto status = test::cli_run("status " + (dir / "m2"));
  EXPECT_EQ(status.exit_code, 3) << status.out;
  expect_says(status,
              "(merged from 2 shards): 32 planned, 16 stored (16 ok, 0 failed), "
              "16 missing");
  expect_says(status, "shard 1/2: 16 planned, 0 stored (0 ok, 0 failed), 16 missing");
  expect_says(status, "to finish shard 1/2: attnlab run " + demo() +
                          " --out SHARD_DIR --quick --set experiment.seeds=2 --set "
                          "'sweep.train.n=[64, 128, 256, 1024]' --shard 1/2");
  // Both, into the merge of the old grid: it takes the grown one.
  const auto whole =
      test::cli_run("merge " + (dir / "m") + " " + (dir / "s0") + " " + (dir / "s1"));
  ASSERT_EQ(whole.exit_code, 0) << whole.out;
  EXPECT_EQ(whole.out.find("missing"), std::string::npos) << whole.out;
  ASSERT_EQ(demo_run(dir / "fresh", seeds + kGrownN).exit_code, 0);
  EXPECT_EQ(csv_without_timing(dir / "m/results.csv"),
            csv_without_timing(dir / "fresh/results.csv"));
  const auto done = test::cli_run("status " + (dir / "m"));
  EXPECT_EQ(done.exit_code, 0) << done.out;
  expect_says(done, "complete");
  // Shards of two different grids are refused, naming the grids.
  ASSERT_EQ(demo_run(dir / "old", seeds + "--shard 1/2").exit_code, 0);
  const auto mixed =
      test::cli_run("merge " + (dir / "m3") + " " + (dir / "s0") + " " + (dir / "old"));
  EXPECT_EQ(mixed.exit_code, 2);
  expect_says(mixed, "holds another grid of the spec of " + (dir / "s0") +
                         " (train.n: [64,128,256,1024] -> [64,256,1024]); run every shard "
                         "with one grid");
}

TEST(GrowSweep, StatusCountsAShardAndNamesTheCommandThatFinishesIt) {
  const TestDir dir;
  ASSERT_EQ(demo_run(dir / "s", "--shard 0/3").exit_code, 0);
  const ExperimentStatus st = experiment_status(dir / "s");
  EXPECT_EQ(st.shard_index, 0);
  EXPECT_EQ(st.shard_count, 3);
  EXPECT_EQ(st.plan_total, 36);
  EXPECT_EQ(st.planned, 12);
  EXPECT_EQ(st.ok, 12);
  EXPECT_EQ(st.missing, 0);
  const auto complete = test::cli_run("status " + (dir / "s"));
  EXPECT_EQ(complete.exit_code, 0) << complete.out;
  expect_says(complete,
              "(shard 0/3 of a plan of 36): 12 planned, 12 stored (12 ok, 0 "
              "failed), 0 missing");
  // Two runs lost (as if never run): missing, and the command that runs them.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "s/results.sqlite").c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, "DELETE FROM runs WHERE rowid IN (SELECT rowid FROM runs LIMIT 2)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const auto missing = test::cli_run("status " + (dir / "s"));
  EXPECT_EQ(missing.exit_code, 3) << missing.out;
  expect_says(missing, "12 planned, 10 stored (10 ok, 0 failed), 2 missing");
  expect_says(missing, "to finish: attnlab run " + demo() + " --out " + (dir / "s") +
                           " --quick --shard 0/3");
  const auto bad = test::cli_run("status " + (dir / "nowhere"));
  EXPECT_EQ(bad.exit_code, 2);
  expect_says(bad, "nowhere: no results.sqlite here; run `attnlab run SPEC --out");
}

}  // namespace
}  // namespace attn
