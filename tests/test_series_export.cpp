// series.csv: written next to results.csv by the same export (run, export, merge, plot),
// one row per logged point with the run's key columns, runs in point order; results.csv is
// unchanged by it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "cli_helpers.h"
#include "experiment/experiment_dir.h"
#include "experiment/store.h"
#include "experiment/store_csv.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

class SeriesExport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("attnlab_series_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static StoredRun run(const std::string& id, int64_t point, uint64_t seed,
                       const std::string& status, const std::string& lambdas,
                       const std::string& n) {
    StoredRun r;
    r.run_id = id;
    r.point = point;
    r.seed = seed;
    r.status = status;
    r.error = status == "ok" ? "" : "diverged";
    r.config_json = "{}";
    r.params = {{"task.name", "qsa"}, {"train.lambdas", lambdas}, {"train.n", n}, {"eval.n", "20"}};
    r.swept = {"train.lambdas", "train.n"};
    if (status == "ok") r.metrics = {{"test_mse", 0.5}};
    r.wall_seconds = 0.25;
    return r;
  }

  fs::path dir_;
};

TEST_F(SeriesExport, ExportWritesOneRowPerPointInRunOrder) {
  {
    ResultsStore store(path("results.sqlite"));
    store.set_meta("swept", R"(["train.lambdas", "train.n"])");
    // Inserted out of point order; point 2 logs nothing; the failed run's point is NaN.
    store.insert(run("cccccccccccccccc", 2, 0, "ok", "[1]", "200"));
    StoredRun a = run("aaaaaaaaaaaaaaaa", 0, 0, "ok", "[0.5, 1]", "100");
    a.series = {{"val_loss", 0, 2.0}, {"val_loss", 10, 0.5}, {"attention_sample0", 0, 0.25},
                {"attention_sample0", 1, 0.75}, {"val_loss", 20, 0.125}};
    store.insert(a);
    StoredRun b = run("bbbbbbbbbbbbbbbb", 1, 1, "failed", "[0.5, 1]", "100");
    b.series = {{"val_loss", 0, NAN}, {"val_loss", 10, INFINITY}};
    store.insert(b);
  }
  experiment_export(dir_.string());
  EXPECT_EQ(test::file_read(path("series.csv")),
            "run_id,seed,status,train.lambdas,train.n,series,step,value\n"
            "aaaaaaaaaaaaaaaa,0,ok,\"[0.5, 1]\",100,val_loss,0,2\n"
            "aaaaaaaaaaaaaaaa,0,ok,\"[0.5, 1]\",100,val_loss,10,0.5\n"
            "aaaaaaaaaaaaaaaa,0,ok,\"[0.5, 1]\",100,attention_sample0,0,0.25\n"
            "aaaaaaaaaaaaaaaa,0,ok,\"[0.5, 1]\",100,attention_sample0,1,0.75\n"
            "aaaaaaaaaaaaaaaa,0,ok,\"[0.5, 1]\",100,val_loss,20,0.125\n"
            "bbbbbbbbbbbbbbbb,1,failed,\"[0.5, 1]\",100,val_loss,0,\n"
            "bbbbbbbbbbbbbbbb,1,failed,\"[0.5, 1]\",100,val_loss,10,\n");
  // results.csv is as before: one row per run, no series columns.
  EXPECT_EQ(test::file_read(path("results.csv")),
            "run_id,seed,status,train.lambdas,train.n,test_mse,wall_seconds,peak_rss_mb,error\n"
            "aaaaaaaaaaaaaaaa,0,ok,\"[0.5, 1]\",100,0.5,0.25,0,\n"
            "bbbbbbbbbbbbbbbb,1,failed,\"[0.5, 1]\",100,,0.25,0,diverged\n"
            "cccccccccccccccc,0,ok,[1],200,0.5,0.25,0,\n");
  // No temp files left behind.
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}

TEST_F(SeriesExport, WrittenNextToResultsCsvHeaderOnlyWithoutSeries) {
  fs::create_directories(dir_ / "out");
  const std::vector<StoredRun> runs = {run("aaaaaaaaaaaaaaaa", 0, 3, "ok", "[1]", "100")};
  results_export_csv(runs, {"train.n", "eval.n"}, path("out/results.csv"));
  EXPECT_EQ(test::file_read(path("out/series.csv")),
            "run_id,seed,status,train.n,eval.n,series,step,value\n");
  EXPECT_FALSE(fs::exists(path("series.csv")));
}

// End to end: `attnlab run` of a ridge model (it logs its validation error along the
// lambda path) leaves series.csv with exactly the store's points, keyed like results.csv.
TEST_F(SeriesExport, RunWritesTheStoredSeries) {
  test::file_write(path("spec.toml"), R"(
[experiment]
seeds = 2
[task]
name = "rf_target"
N = 4
d = 4
[model]
name = "rfa"
heads = 8
[train]
n = 40
lambdas = [0.01, 1.0]
[eval]
n = 20
[sweep]
"train.n" = [40, 60]
)");
  const auto r = test::cli_run("run " + path("spec.toml") + " --out " + path("o") + " -q --jobs 1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto runs = ResultsStore(path("o/results.sqlite")).load_runs();
  ASSERT_EQ(runs.size(), 4u);
  std::istringstream csv(test::file_read(path("o/series.csv")));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "run_id,seed,status,train.n,series,step,value");
  size_t run_index = 0, point_index = 0, rows = 0, points = 0;
  for (const auto& run : runs) points += run.series.size();
  EXPECT_GT(points, 0u) << "the ridge model logged no series";
  while (std::getline(csv, line)) {
    while (run_index < runs.size() && point_index == runs[run_index].series.size()) {
      ++run_index;
      point_index = 0;
    }
    ASSERT_LT(run_index, runs.size()) << "extra row " << line;
    const StoredRun& run = runs[run_index];
    const auto& p = run.series[point_index++];
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
    ASSERT_EQ(cells.size(), 7u) << line;
    EXPECT_EQ(cells[0], run.run_id);
    EXPECT_EQ(cells[1], std::to_string(run.seed));
    EXPECT_EQ(cells[2], "ok");
    EXPECT_EQ(cells[3], run.param("train.n"));
    EXPECT_EQ(cells[4], p.series);
    EXPECT_EQ(cells[5], std::to_string(p.step));
    EXPECT_EQ(std::stod(cells[6]), p.value);
    ++rows;
  }
  EXPECT_EQ(rows, points);
}

}  // namespace
}  // namespace attn
